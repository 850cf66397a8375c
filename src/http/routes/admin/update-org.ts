// PATCH /admin/v1/orgs/{id} — renames an organisation and/or changes its rate limit (at once).
import type { FastifyInstance } from 'fastify';
import { ERRORS } from '../../../domain/errors.js';
import type { OrgAdmin } from '../../../domain/orgs.js';
import {
  ADMIN_ERRORS,
  EXAMPLE_ORG_ID,
  OrgParams,
  OrgSchema,
  problemResponses,
  UpdateOrgBody,
} from '../../../wire/index.js';
import { toOrgJson } from './json.js';

export function updateOrgRoute(app: FastifyInstance, orgs: OrgAdmin): void {
  app.patch<{ Params: { id: string }; Body: UpdateOrgBody }>(
    '/orgs/:id',
    {
      schema: {
        operationId: 'updateOrg',
        summary: 'Update an organisation',
        description:
          'Sets `name` and/or `rate_limit_rpm`; the new limit applies to the next request of the org.',
        tags: ['admin'],
        params: OrgParams,
        body: UpdateOrgBody,
        response: {
          200: OrgSchema,
          ...problemResponses(...ADMIN_ERRORS, {
            name: 'OrgNotFound',
            error: ERRORS.orgNotFound(EXAMPLE_ORG_ID),
          }),
        },
      },
    },
    async (request) => {
      const { name, rate_limit_rpm } = request.body;
      return toOrgJson(
        await orgs.updateOrg(request.params.id, {
          ...(name === undefined ? {} : { name }),
          ...(rate_limit_rpm === undefined ? {} : { rateLimitRpm: rate_limit_rpm }),
        }),
      );
    },
  );
}
