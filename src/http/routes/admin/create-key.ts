// POST /admin/v1/orgs/{id}/keys — issues an API key with the scopes and expiry asked for.
import type { FastifyInstance } from 'fastify';
import { DATE_TIME_RULE, parseDateTime } from '../../../domain/date-time.js';
import { ERRORS } from '../../../domain/errors.js';
import type { OrgAdmin } from '../../../domain/orgs.js';
import {
  ADMIN_ERRORS,
  CreateKeyBody,
  EXAMPLE_ORG_ID,
  IssuedKeySchema,
  OrgParams,
  problemResponses,
} from '../../../wire/index.js';

export function createKeyRoute(app: FastifyInstance, orgs: OrgAdmin): void {
  app.post<{ Params: { id: string }; Body: CreateKeyBody }>(
    '/orgs/:id/keys',
    {
      schema: {
        operationId: 'createKey',
        summary: 'Issue an API key',
        description:
          'A new key of the organisation with `scopes` (every scope when left out), an optional `expires_at`, optional `partitions` the key is limited to, and optional `principals` it is bound to. The key is in this answer only.',
        tags: ['admin'],
        params: OrgParams,
        body: CreateKeyBody,
        response: {
          201: IssuedKeySchema,
          ...problemResponses(...ADMIN_ERRORS, {
            name: 'OrgNotFound',
            error: ERRORS.orgNotFound(EXAMPLE_ORG_ID),
          }),
        },
      },
    },
    async (request, reply) => {
      const { scopes, expires_at, partitions, principals } = request.body;
      const issued = await orgs.issueKey(request.params.id, {
        ...(scopes === undefined ? {} : { scopes }),
        expiresAt: expires_at == null ? null : expiryOf(expires_at),
        partitions: partitions ?? null,
        principals: principals ?? null,
      });
      return reply.code(201).send({
        key_id: issued.key_id,
        api_key: issued.api_key,
        scopes: issued.scopes,
        expires_at: issued.expires_at?.toISOString() ?? null,
        partitions: issued.partitions,
        principals: issued.principals,
      });
    },
  );
}

/** The schema has checked the form already; this reads it with the same rule, never `new Date`. */
function expiryOf(text: string): Date {
  const at = parseDateTime(text);
  if (at === null) {
    throw ERRORS.invalid(`Invalid request: /expires_at ${DATE_TIME_RULE}.`, [
      { pointer: '/expires_at', message: DATE_TIME_RULE },
    ]);
  }
  return at;
}
