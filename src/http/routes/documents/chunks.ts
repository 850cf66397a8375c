// GET /v1/documents/{id}/chunks — what was indexed: a ready document's chunks, in order.
import type { FastifyInstance } from 'fastify';
import {
  ChunkList,
  ChunkListQuery,
  COMMON_ERRORS,
  DocumentParams,
  problemResponses,
} from '../../../wire/index.js';
import type { AppDeps } from '../../deps.js';

export function documentChunksRoute(app: FastifyInstance, deps: AppDeps): void {
  app.get<{ Params: { id: string }; Querystring: ChunkListQuery }>(
    '/documents/:id/chunks',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'listChunks',
        summary: 'List a document’s chunks',
        description:
          'The chunks a ready document was indexed as, in order, with their token counts and page ranges; `next_cursor` pages on through the same version. 409 `not_ready` while the document is queued, processing or failed; 409 `version_changed` when a new version was swapped in since the cursor was made (start again without a cursor).',
        tags: ['documents'],
        params: DocumentParams,
        querystring: ChunkListQuery,
        response: {
          200: ChunkList,
          ...problemResponses(
            ...COMMON_ERRORS,
            'principal_forbidden',
            'not_found',
            'not_ready',
            'version_changed',
          ),
        },
      },
    },
    async (request) => {
      const page = await deps.documents.chunks(request.principal.org.id, request.access, request.params.id, {
        limit: request.query.limit,
        cursor: request.query.cursor ?? null,
      });
      return {
        chunks: page.chunks.map((c) => ({
          index: c.index,
          text: c.text,
          token_count: c.tokenCount,
          page_start: c.pageStart,
          page_end: c.pageEnd,
        })),
        next_cursor: page.nextCursor,
      };
    },
  );
}
