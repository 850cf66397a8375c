// POST /v1/documents/{id}/reprocess — a new version from what the document already holds (its
// text, or its original file), with new chunk settings if given.
import type { FastifyInstance } from 'fastify';
import {
  COMMON_ERRORS,
  DocumentParams,
  PrincipalsQuery,
  problemResponses,
  ReprocessBody,
  VersionAck,
} from '../../../wire/index.js';
import type { AppDeps } from '../../deps.js';
import { acceptIdempotently } from '../../idempotent.js';
import { documentOnly, idempotentIngest } from '../../openapi.js';

export function reprocessDocumentRoute(app: FastifyInstance, deps: AppDeps): void {
  app.post<{ Params: { id: string }; Body: ReprocessBody | undefined }>(
    '/documents/:id/reprocess',
    {
      config: { scope: 'ingest', swaggerTransform: documentOnly(idempotentIngest) },
      schema: {
        operationId: 'reprocessDocument',
        summary: 'Reprocess a document',
        description:
          'Starts a new version of the document from what it holds: a text document’s text is chunked again, a file’s or URL’s original is extracted again (so a failed document can be retried), with `chunk_size`/`chunk_overlap` if given, else the document’s. The current version answers queries until the new one is ready. 409 `cannot_reprocess` while another version is on its way or the document is still queued or processing, or when there is nothing to reprocess from (a text that failed, a download that failed).',
        tags: ['documents'],
        params: DocumentParams,
        querystring: PrincipalsQuery,
        body: ReprocessBody,
        response: {
          202: VersionAck,
          ...problemResponses(
            ...COMMON_ERRORS,
            'principal_forbidden',
            'not_found',
            'cannot_reprocess',
            'overloaded',
          ),
        },
      },
    },
    async (request, reply) => {
      const body = request.body ?? {};
      const { id } = request.params;
      return acceptIdempotently(deps, request, reply, `documents/${id}/reprocess`, body, (key) =>
        deps.ingestion.reprocess(
          request.principal.org.id,
          request.access,
          id,
          { chunkSize: body.chunk_size, chunkOverlap: body.chunk_overlap },
          key,
          request.traceSpan,
        ),
      );
    },
  );
}
