// GET /v1/evaluations — the org's evaluations, newest first, cursor-paged, without per-query figures.
import type { FastifyInstance } from 'fastify';
import {
  COMMON_ERRORS,
  EvaluationList,
  ListEvaluationsQuery,
  problemResponses,
} from '../../../wire/index.js';
import type { AppDeps } from '../../deps.js';
import { toEvaluationSummaryJson } from './json.js';

export function listEvaluationsRoute(app: FastifyInstance, deps: AppDeps): void {
  app.get<{ Querystring: ListEvaluationsQuery }>(
    '/evaluations',
    {
      config: { scope: 'query', wholeOrg: 'evaluations' },
      schema: {
        operationId: 'listEvaluations',
        summary: 'List evaluations',
        description:
          'Newest first, with each run’s figures; GET /v1/evaluations/{id} adds the per-query ones.',
        tags: ['evaluations'],
        querystring: ListEvaluationsQuery,
        response: { 200: EvaluationList, ...problemResponses(...COMMON_ERRORS, 'partition_forbidden') },
      },
    },
    async (request) => {
      const page = await deps.evaluations.list(request.principal.org.id, {
        limit: request.query.limit,
        cursor: request.query.cursor ?? null,
      });
      return { evaluations: page.evaluations.map(toEvaluationSummaryJson), next_cursor: page.nextCursor };
    },
  );
}
