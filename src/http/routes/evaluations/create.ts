// POST /v1/evaluations — queries with judged documents, run in the background once per run
// setting through the query path and scored; 202 with the id to poll.
import type { FastifyInstance } from 'fastify';
import {
  COMMON_ERRORS,
  CreatedEvaluation,
  CreateEvaluationBody,
  problemResponses,
} from '../../../wire/index.js';
import type { AppDeps } from '../../deps.js';

export function createEvaluationRoute(app: FastifyInstance, deps: AppDeps): void {
  app.post<{ Body: CreateEvaluationBody }>(
    '/evaluations',
    {
      config: { scope: 'query', wholeOrg: 'evaluations' },
      schema: {
        operationId: 'createEvaluation',
        summary: 'Start an evaluation',
        description:
          'Measures retrieval quality on your own judged queries: each run (query settings: `mode`, `rerank`, `semantic_weight`) sends every query through POST /v1/query’s ranking, one chunk per document, `top_k` documents, and scores the documents’ order with nDCG@10 (the grade as the gain), Recall@top_k and MRR@10, as trec_eval computes them, with p50/p95 latency. Runs in the background: poll GET /v1/evaluations/{id}. Each query takes one unit of the per-minute rate limit (the evaluation waits when it is spent) and is not counted in usage. Judged documents that do not exist are listed per query and left out of the scoring. Needs the `query` scope.',
        tags: ['evaluations'],
        body: CreateEvaluationBody,
        response: {
          202: CreatedEvaluation,
          ...problemResponses(
            ...COMMON_ERRORS,
            'payload_too_large',
            'unsupported_media_type',
            'semantic_search_unavailable',
            'rerank_unavailable',
            'partition_forbidden',
          ),
        },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const { id } = await deps.evaluations.create(request.principal.org.id, {
        name: body.name,
        topK: body.top_k,
        queries: body.queries.map((q) => ({
          query: q.query,
          relevant: q.relevant.map((r) => ({
            documentId: r.document_id,
            externalId: r.external_id,
            grade: r.grade,
          })),
        })),
        runs: body.runs?.map((r) => ({ mode: r.mode, rerank: r.rerank, semanticWeight: r.semantic_weight })),
      });
      return reply.code(202).send({ evaluation_id: id });
    },
  );
}
