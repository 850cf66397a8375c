// POST /v1/query — BM25-ranked chunks; each successful query counts towards usage.
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../../deps.js';
import { COMMON_ERRORS, problemResponses, QueryBody, QueryResponse } from '../../schemas.js';
import { toQueryResultJson } from './json.js';

export function queryRoute(app: FastifyInstance, deps: AppDeps): void {
  app.post<{ Body: QueryBody }>(
    '/query',
    {
      config: { scope: 'query' },
      schema: {
        operationId: 'query',
        summary: 'Query indexed chunks',
        description: 'Full-text (BM25) search over the organisation’s ready documents.',
        tags: ['query'],
        body: QueryBody,
        response: {
          200: QueryResponse,
          ...problemResponses(...COMMON_ERRORS, 'payload_too_large', 'unsupported_media_type'),
        },
      },
    },
    async (request) => {
      const orgId = request.principal.org.id;
      const hits = await deps.query.query(orgId, {
        query: request.body.query,
        topK: request.body.top_k,
        filter: request.body.filter,
        documentIds: request.body.document_ids ?? null,
      });
      return {
        org_id: orgId,
        results: hits.map(toQueryResultJson),
      };
    },
  );
}
