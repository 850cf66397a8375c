// POST /v1/sources/{id}/sync — queues a run now (409 while one is queued or running).
import type { FastifyInstance } from 'fastify';
import { COMMON_ERRORS, problemResponses, SourceParams, SyncAccepted } from '../../../wire/index.js';
import type { AppDeps } from '../../deps.js';

export function syncSourceRoute(app: FastifyInstance, deps: AppDeps): void {
  app.post<{ Params: { id: string } }>(
    '/sources/:id/sync',
    {
      config: { scope: 'sources', wholeOrg: 'sources' },
      schema: {
        operationId: 'syncSource',
        summary: 'Sync a source now',
        description:
          'Queues a run of the source. One run per source at a time, across every server: while one is queued or running, 409 `sync_in_progress`. Follow it with GET /v1/sources/{id}/runs or the `source.sync.completed` and `source.sync.failed` webhook events.',
        tags: ['sources'],
        params: SourceParams,
        response: {
          202: SyncAccepted,
          ...problemResponses(...COMMON_ERRORS, 'partition_forbidden', 'not_found', 'sync_in_progress'),
        },
      },
    },
    async (request, reply) => {
      const run = await deps.sources.sync(request.principal.org.id, request.params.id);
      return reply.code(202).send({ run_id: run.id });
    },
  );
}
