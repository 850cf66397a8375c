// POST /v1/query — keyword (BM25), semantic or hybrid search, optionally reranked; each successful
// query counts one towards usage, whatever its mode.
import type { FastifyInstance } from 'fastify';
import { COMMON_ERRORS, problemResponses, QueryBody, QueryResponse } from '../../../wire/index.js';
import type { AppDeps } from '../../deps.js';
import { toQueryResultJson } from './json.js';

export function queryRoute(app: FastifyInstance, deps: AppDeps): void {
  app.post<{ Body: QueryBody }>(
    '/query',
    {
      config: { scope: 'query' },
      schema: {
        operationId: 'query',
        summary: 'Query indexed chunks',
        description:
          'Search over the organisation’s ready documents. `mode`: `keyword` (BM25), `semantic` (cosine similarity of the chunks’ vectors; only chunks whose vectors exist) or `hybrid` (both lists, the same filters applied to each, top 100 of each fused by weighted reciprocal rank, k = 60). Default: `hybrid` when an embedding provider is configured, else `keyword`. With a reranker configured (`RERANK`), the mode’s best max(`top_k`, `rerank_candidates`) chunks are ordered by it (`rerank`, default true then) and `score` is its relevance score. When the embedding provider cannot embed the query (or failed repeatedly and is skipped for a cool-down), `hybrid` answers the keyword results with `degraded: true`, `degraded_reasons: ["embeddings_unavailable"]` and every `scores.semantic` null, and `semantic` answers 503 `embeddings_unavailable`; when the reranker fails, the first stage’s order comes back with `degraded_reasons: ["rerank_unavailable"]`.',
        tags: ['query'],
        body: QueryBody,
        response: {
          200: QueryResponse,
          ...problemResponses(
            ...COMMON_ERRORS,
            'payload_too_large',
            'unsupported_media_type',
            'partition_forbidden',
            'principal_forbidden',
            'semantic_search_unavailable',
            'embeddings_unavailable',
            'rerank_unavailable',
          ),
        },
      },
    },
    async (request) => {
      const orgId = request.principal.org.id;
      const body = request.body;
      const answer = await deps.query.query(
        orgId,
        request.access,
        {
          query: body.query,
          topK: body.top_k,
          filter: body.filter,
          documentIds: body.document_ids ?? null,
          partitions: body.partitions,
          mode: body.mode,
          semanticWeight: body.semantic_weight,
          maxChunksPerDocument: body.max_chunks_per_document,
          scoreThreshold: body.score_threshold,
          language: body.language,
          rerank: body.rerank,
          rerankCandidates: body.rerank_candidates,
        },
        { parent: request.traceSpan },
      );
      return {
        org_id: orgId,
        mode: answer.mode,
        degraded: answer.degraded,
        degraded_reasons: answer.degradedReasons,
        results: answer.hits.map(toQueryResultJson),
      };
    },
  );
}
