// POST /admin/v1/orgs — creates an organisation and its first key (every scope), shown once.
import type { FastifyInstance } from 'fastify';
import type { OrgAdmin } from '../../../domain/orgs.js';
import { ADMIN_ERRORS, CreatedOrgSchema, CreateOrgBody, problemResponses } from '../../../wire/index.js';

export function createOrgRoute(app: FastifyInstance, orgs: OrgAdmin): void {
  app.post<{ Body: CreateOrgBody }>(
    '/orgs',
    {
      schema: {
        operationId: 'createOrg',
        summary: 'Create an organisation',
        description:
          'Creates an organisation (rate limit: `rate_limit_rpm`, else DEFAULT_RATE_LIMIT_RPM) and its first API key with every scope. The key is in this answer only.',
        tags: ['admin'],
        body: CreateOrgBody,
        response: { 201: CreatedOrgSchema, ...problemResponses(...ADMIN_ERRORS) },
      },
    },
    async (request, reply) => {
      const created = await orgs.createOrg(request.body.name, request.body.rate_limit_rpm);
      return reply.code(201).send({
        org_id: created.org_id,
        name: created.name,
        rate_limit_rpm: created.rate_limit_rpm,
        key_id: created.key_id,
        api_key: created.api_key,
      });
    },
  );
}
