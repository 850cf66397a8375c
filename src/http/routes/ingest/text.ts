// POST /v1/ingest — JSON text documents.
import type { FastifyInstance } from 'fastify';
import {
  COMMON_ERRORS,
  INGEST_ERRORS,
  IngestAck,
  IngestBody,
  problemResponses,
} from '../../../wire/index.js';
import type { AppDeps } from '../../deps.js';
import { acceptIdempotently } from '../../idempotent.js';
import { documentOnly, idempotentIngest } from '../../openapi.js';

export function ingestTextRoute(app: FastifyInstance, deps: AppDeps): void {
  app.post<{ Body: IngestBody }>(
    '/ingest',
    {
      config: { scope: 'ingest', swaggerTransform: documentOnly(idempotentIngest) },
      schema: {
        operationId: 'ingestText',
        summary: 'Ingest text documents',
        description:
          'Queues up to 50 text documents for chunking and indexing. Answers 202 once they are stored. A document whose `external_id` a document of the organisation already has becomes that document’s new version: its id is in `document_ids`, and its current version answers queries until the new one is ready. Each document goes into its own `partition`, else the request’s `partition`, else `default`.',
        tags: ['ingest'],
        body: IngestBody,
        response: {
          202: IngestAck,
          ...problemResponses(...COMMON_ERRORS, ...INGEST_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const { documents, chunk_size, chunk_overlap, partition } = request.body;
      return acceptIdempotently(deps, request, reply, 'ingest', request.body, (key) =>
        deps.ingestion.ingestText(
          request.principal.org.id,
          request.access,
          documents,
          { chunkSize: chunk_size, chunkOverlap: chunk_overlap },
          key,
          partition ?? null,
          request.traceSpan,
        ),
      );
    },
  );
}
