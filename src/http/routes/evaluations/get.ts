// GET /v1/evaluations/{id} — an evaluation's status and, once done, each run's figures with every
// query's (another org's evaluation is a 404).
import type { FastifyInstance } from 'fastify';
import { COMMON_ERRORS, EvaluationParams, EvaluationSchema, problemResponses } from '../../../wire/index.js';
import type { AppDeps } from '../../deps.js';
import { toEvaluationJson } from './json.js';

export function getEvaluationRoute(app: FastifyInstance, deps: AppDeps): void {
  app.get<{ Params: { id: string } }>(
    '/evaluations/:id',
    {
      config: { scope: 'query', wholeOrg: 'evaluations' },
      schema: {
        operationId: 'getEvaluation',
        summary: 'Get an evaluation',
        description:
          '`status` is `queued`, `running`, `done` or `failed` (with `error`). Once done, each run has its mean nDCG@10, Recall@top_k and MRR@10 over the evaluated queries, p50/p95 latency, and `queries`: each query’s figures and the ranks of its relevant documents, so runs can be compared query by query; the top-level `queries` says which judged documents were unknown.',
        tags: ['evaluations'],
        params: EvaluationParams,
        response: {
          200: EvaluationSchema,
          ...problemResponses(...COMMON_ERRORS, 'not_found', 'partition_forbidden'),
        },
      },
    },
    async (request) => {
      return toEvaluationJson(await deps.evaluations.get(request.principal.org.id, request.params.id));
    },
  );
}
