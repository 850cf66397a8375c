// POST /v1/ingest/url — a URL the service downloads itself.
import type { FastifyInstance } from 'fastify';
import { chunkSettingsOf } from '../../../domain/chunk-settings.js';
import { listInProse, SUPPORTED_FORMATS } from '../../../domain/formats.js';
import {
  COMMON_ERRORS,
  INGEST_ERRORS,
  IngestAck,
  IngestUrlBody,
  problemResponses,
} from '../../../wire/index.js';
import type { AppDeps } from '../../deps.js';
import { acceptIdempotently } from '../../idempotent.js';
import { documentOnly, idempotentIngest } from '../../openapi.js';

/** "PDF, DOCX, text, Markdown or an HTML page", from the registry. */
const DOWNLOADABLE = listInProse(SUPPORTED_FORMATS.map((format) => format.aDownload));

export function ingestUrlRoute(app: FastifyInstance, deps: AppDeps): void {
  app.post<{ Body: IngestUrlBody }>(
    '/ingest/url',
    {
      config: { scope: 'ingest', swaggerTransform: documentOnly(idempotentIngest) },
      schema: {
        operationId: 'ingestUrl',
        summary: 'Ingest a document from a URL',
        description: `Queues a public or pre-signed http(s) URL for download (${DOWNLOADABLE}). Non-public addresses are refused. An \`external_id\` a document already has makes a new version of it. \`partition\` names the document's partition (default \`default\`), \`access\` its access list (absent: none). \`chunk_size\` and \`chunk_overlap\` work as on POST /v1/ingest.`,
        tags: ['ingest'],
        body: IngestUrlBody,
        response: {
          202: IngestAck,
          ...problemResponses(...COMMON_ERRORS, ...INGEST_ERRORS),
        },
      },
    },
    async (request, reply) =>
      acceptIdempotently(deps, request, reply, 'ingest/url', request.body, (key) =>
        deps.ingestion.ingestUrl(
          request.principal.org.id,
          request.access,
          request.body.url,
          request.body.metadata ?? {},
          {
            externalId: request.body.external_id ?? null,
            language: request.body.language ?? null,
            partition: request.body.partition ?? null,
            access: request.body.access ?? null,
            chunks: chunkSettingsOf({
              chunkSize: request.body.chunk_size,
              chunkOverlap: request.body.chunk_overlap,
            }),
          },
          key,
          request.traceSpan,
        ),
      ),
  );
}
