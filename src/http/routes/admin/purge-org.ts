// DELETE /admin/v1/orgs/{id} — purges an organisation and everything it owns; answers the receipt.
import type { FastifyInstance } from 'fastify';
import { ERRORS } from '../../../domain/errors.js';
import type { OrgAdmin } from '../../../domain/orgs.js';
import {
  ADMIN_ERRORS,
  EXAMPLE_ORG_ID,
  OrgParams,
  PurgeReceiptSchema,
  problemResponses,
} from '../../../wire/index.js';

export function purgeOrgRoute(app: FastifyInstance, orgs: OrgAdmin): void {
  app.delete<{ Params: { id: string } }>(
    '/orgs/:id',
    {
      schema: {
        operationId: 'purgeOrg',
        summary: 'Purge an organisation',
        description:
          'Removes the organisation with every document, chunk, stored file, usage counter, Idempotency-Key record and API key it has, and answers what was removed. Its keys stop working first; jobs still queued for its documents end without writing anything. Cannot be undone.',
        tags: ['admin'],
        params: OrgParams,
        response: {
          200: PurgeReceiptSchema,
          ...problemResponses(...ADMIN_ERRORS, {
            name: 'OrgNotFound',
            error: ERRORS.orgNotFound(EXAMPLE_ORG_ID),
          }),
        },
      },
    },
    async (request) => orgs.purgeOrg(request.params.id),
  );
}
