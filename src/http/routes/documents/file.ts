// GET /v1/documents/{id}/file — the original upload or download of a document, byte for byte.
import type { FastifyInstance } from 'fastify';
import { displayFilename } from '../../../domain/text.js';
import { COMMON_ERRORS, DocumentParams, PrincipalsQuery, problemResponses } from '../../../wire/index.js';
import type { AppDeps } from '../../deps.js';

export function documentFileRoute(app: FastifyInstance, deps: AppDeps): void {
  app.get<{ Params: { id: string } }>(
    '/documents/:id/file',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'getDocumentFile',
        summary: 'Download a document’s original file',
        description:
          'The file a document was uploaded as, or downloaded from its URL, with its detected media type and (as `Content-Disposition: attachment`) its file name. 404 for a document sent as JSON text, which has no file; 409 `not_ready` while a URL is still being downloaded; 410 `original_not_kept` when the server deletes originals once they are indexed (KEEP_ORIGINALS=false).',
        tags: ['documents'],
        params: DocumentParams,
        querystring: PrincipalsQuery,
        response: {
          200: {
            description: 'The original bytes.',
            content: {
              'application/octet-stream': {
                schema: { type: 'string', format: 'binary' },
                example: '%PDF-1.7 …',
              },
            },
          },
          ...problemResponses(
            ...COMMON_ERRORS,
            'principal_forbidden',
            'not_found',
            'not_ready',
            'original_not_kept',
          ),
        },
      },
    },
    async (request, reply) => {
      const file = await deps.documents.file(request.principal.org.id, request.access, request.params.id);
      reply.type(file.contentType).header('x-content-type-options', 'nosniff');
      // Always a download: a stored HTML page must never render in the API's origin.
      reply.header(
        'content-disposition',
        contentDisposition(displayFilename(file.filename) ?? `${request.params.id}`),
      );
      reply.header('content-security-policy', "default-src 'none'; sandbox");
      if (file.bytes !== null) reply.header('content-length', String(file.bytes));
      return reply.send(file.stream);
    },
  );
}

/**
 * `attachment` with an ASCII fallback name and the exact one in RFC 5987 form (RFC 6266). The name
 * has been through displayFilename: no bidi override or other invisible character in either form.
 */
function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  const exact = encodeURIComponent(filename).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${ascii}"; filename*=UTF-8''${exact}`;
}
