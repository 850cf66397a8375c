// GET /admin/v1/orgs/{id} — one organisation with its usage.
import type { FastifyInstance } from 'fastify';
import type { OrgAdmin } from '../../../domain/orgs.js';
import { ADMIN_ERRORS, OrgParams, OrgSchema } from '../../admin-schemas.js';
import { problemResponses } from '../../schemas.js';
import { toOrgJson } from './json.js';

export function getOrgRoute(app: FastifyInstance, orgs: OrgAdmin): void {
  app.get<{ Params: { id: string } }>(
    '/orgs/:id',
    {
      schema: {
        summary: 'Get an organisation',
        tags: ['admin'],
        params: OrgParams,
        response: { 200: OrgSchema, ...problemResponses(...ADMIN_ERRORS, 'not_found') },
      },
    },
    async (request) => toOrgJson(await orgs.getOrg(request.params.id)),
  );
}
