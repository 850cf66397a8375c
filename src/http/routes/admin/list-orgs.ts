// GET /admin/v1/orgs — organisations newest first, a page at a time, each with its usage.
import type { FastifyInstance } from 'fastify';
import type { OrgAdmin } from '../../../domain/orgs.js';
import { ADMIN_ERRORS, ListOrgsQuery, OrgList, problemResponses } from '../../../wire/index.js';
import { toOrgJson } from './json.js';

export function listOrgsRoute(app: FastifyInstance, orgs: OrgAdmin): void {
  app.get<{ Querystring: ListOrgsQuery }>(
    '/orgs',
    {
      schema: {
        operationId: 'listOrgs',
        summary: 'List organisations',
        description: 'Newest first; pass `next_cursor` back as `cursor` for the next page.',
        tags: ['admin'],
        querystring: ListOrgsQuery,
        response: { 200: OrgList, ...problemResponses(...ADMIN_ERRORS) },
      },
    },
    async (request) => {
      const page = await orgs.listOrgs({ limit: request.query.limit, cursor: request.query.cursor ?? null });
      return { orgs: page.orgs.map(toOrgJson), next_cursor: page.nextCursor };
    },
  );
}
