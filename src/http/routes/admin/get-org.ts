// GET /admin/v1/orgs/{id} — one organisation with its usage.
import type { FastifyInstance } from 'fastify';
import { ERRORS } from '../../../domain/errors.js';
import type { OrgAdmin } from '../../../domain/orgs.js';
import { ADMIN_ERRORS, EXAMPLE_ORG_ID, OrgParams, OrgSchema, problemResponses } from '../../../wire/index.js';
import { toOrgJson } from './json.js';

export function getOrgRoute(app: FastifyInstance, orgs: OrgAdmin): void {
  app.get<{ Params: { id: string } }>(
    '/orgs/:id',
    {
      schema: {
        operationId: 'getOrg',
        summary: 'Get an organisation',
        description: 'The organisation, its rate limit and its query count over the last 30 days.',
        tags: ['admin'],
        params: OrgParams,
        response: {
          200: OrgSchema,
          ...problemResponses(...ADMIN_ERRORS, {
            name: 'OrgNotFound',
            error: ERRORS.orgNotFound(EXAMPLE_ORG_ID),
          }),
        },
      },
    },
    async (request) => toOrgJson(await orgs.getOrg(request.params.id)),
  );
}
