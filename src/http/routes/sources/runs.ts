// GET /v1/sources/{id}/runs — the source's runs, newest first, with their counts and errors.
import type { FastifyInstance } from 'fastify';
import { COMMON_ERRORS, problemResponses, RunList, RunsQuery, SourceParams } from '../../../wire/index.js';
import type { AppDeps } from '../../deps.js';
import { toRunJson } from './json.js';

export function sourceRunsRoute(app: FastifyInstance, deps: AppDeps): void {
  app.get<{ Params: { id: string }; Querystring: { limit?: number } }>(
    '/sources/:id/runs',
    {
      config: { scope: 'sources', wholeOrg: 'sources' },
      schema: {
        operationId: 'listSourceRuns',
        summary: 'List a source’s runs',
        description:
          'The runs of the source, newest first: status, times, what each did (added, updated, deleted, unchanged, failed) and the first 100 per-item errors.',
        tags: ['sources'],
        params: SourceParams,
        querystring: RunsQuery,
        response: { 200: RunList, ...problemResponses(...COMMON_ERRORS, 'partition_forbidden', 'not_found') },
      },
    },
    async (request) => {
      return {
        runs: (
          await deps.sources.runs(request.principal.org.id, request.params.id, request.query.limit ?? 20)
        ).map(toRunJson),
      };
    },
  );
}
