// GET /admin/v1/orgs/{id}/keys — an organisation's keys, revoked and expired ones included.
import type { FastifyInstance } from 'fastify';
import { ERRORS } from '../../../domain/errors.js';
import type { OrgAdmin } from '../../../domain/orgs.js';
import { ADMIN_ERRORS, EXAMPLE_ORG_ID, KeyList, OrgParams, problemResponses } from '../../../wire/index.js';
import { toKeyJson } from './json.js';

export function listKeysRoute(app: FastifyInstance, orgs: OrgAdmin): void {
  app.get<{ Params: { id: string } }>(
    '/orgs/:id/keys',
    {
      schema: {
        operationId: 'listKeys',
        summary: 'List an organisation’s API keys',
        description:
          'Oldest first, revoked and expired keys included. Never the key itself: its display prefix, scopes, expiry and dates.',
        tags: ['admin'],
        params: OrgParams,
        response: {
          200: KeyList,
          ...problemResponses(...ADMIN_ERRORS, {
            name: 'OrgNotFound',
            error: ERRORS.orgNotFound(EXAMPLE_ORG_ID),
          }),
        },
      },
    },
    async (request) => ({ keys: (await orgs.listKeys(request.params.id)).map(toKeyJson) }),
  );
}
