// GET /v1/org — the organisation the API key belongs to (its name, for people; its rate limit) and
// the key's own id and scopes: what a client shows as "signed in as".
import type { FastifyInstance } from 'fastify';
import { SCOPES } from '../../../domain/scopes.js';
import { COMMON_ERRORS, OrgResponse, problemResponses } from '../../../wire/index.js';

export function orgRoute(app: FastifyInstance): void {
  app.get(
    '/org',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'org',
        summary: 'The key’s organisation',
        description:
          'The organisation the API key belongs to (id, name, rate limit, creation time) and the key’s id, scopes, partitions and principals.',
        tags: ['org'],
        response: { 200: OrgResponse, ...problemResponses(...COMMON_ERRORS) },
      },
    },
    async (request) => {
      const { org, keyId, scopes, access } = request.principal;
      return {
        org_id: org.id,
        name: org.name,
        rate_limit_rpm: org.rateLimitRpm,
        created_at: org.createdAt.toISOString(),
        key: {
          key_id: keyId,
          scopes: SCOPES.filter((scope) => scopes.has(scope)),
          partitions: access.partitions === null ? null : [...access.partitions],
          principals: access.principals === null ? null : [...access.principals],
        },
      };
    },
  );
}
