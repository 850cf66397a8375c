// POST /v1/ingest/url — a URL the service downloads itself.
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../../deps.js';
import { acceptIdempotently } from '../../idempotent.js';
import { COMMON_ERRORS, IngestAck, IngestUrlBody, problemResponses } from '../../schemas.js';

export function ingestUrlRoute(app: FastifyInstance, deps: AppDeps): void {
  app.post<{ Body: IngestUrlBody }>(
    '/ingest/url',
    {
      schema: {
        summary: 'Ingest a document from a URL',
        description:
          'Queues a public or pre-signed http(s) URL for download (PDF, DOCX, text, Markdown or an HTML page). Non-public addresses are refused.',
        tags: ['ingest'],
        body: IngestUrlBody,
        response: {
          202: IngestAck,
          ...problemResponses(...COMMON_ERRORS, 'payload_too_large', 'unsupported_media_type', 'overloaded'),
        },
      },
    },
    async (request, reply) =>
      acceptIdempotently(deps, request, reply, 'ingest/url', request.body, () =>
        deps.ingestion.ingestUrl(request.principal.org.id, request.body.url, request.body.metadata ?? {}),
      ),
  );
}
