// DELETE /admin/v1/keys/{key_id} — revokes a key at once; answers the key as it is now.
import type { FastifyInstance } from 'fastify';
import { ERRORS } from '../../../domain/errors.js';
import type { OrgAdmin } from '../../../domain/orgs.js';
import { ADMIN_ERRORS, EXAMPLE_KEY_ID, KeyParams, KeySchema, problemResponses } from '../../../wire/index.js';
import { toKeyJson } from './json.js';

export function revokeKeyRoute(app: FastifyInstance, orgs: OrgAdmin): void {
  app.delete<{ Params: { key_id: string } }>(
    '/keys/:key_id',
    {
      schema: {
        operationId: 'revokeKey',
        summary: 'Revoke an API key',
        description:
          'The key is refused (401) from the next request on. Revoking a revoked key changes nothing; the answer shows `revoked_at`.',
        tags: ['admin'],
        params: KeyParams,
        response: {
          200: KeySchema,
          ...problemResponses(...ADMIN_ERRORS, {
            name: 'KeyNotFound',
            error: ERRORS.keyNotFound(EXAMPLE_KEY_ID),
          }),
        },
      },
    },
    async (request) => toKeyJson(await orgs.revokeKeyRecord(request.params.key_id)),
  );
}
