// GET /v1/documents/{id}/content — the text a ready document was indexed from, streamed.
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { COMMON_ERRORS, DocumentParams, PrincipalsQuery, problemResponses } from '../../../wire/index.js';
import type { AppDeps } from '../../deps.js';

export function documentContentRoute(app: FastifyInstance, deps: AppDeps): void {
  app.get<{ Params: { id: string } }>(
    '/documents/:id/content',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'getDocumentContent',
        summary: 'Read a document’s extracted text',
        description:
          'The text extracted from a ready document, as it was chunked and indexed (UTF-8 plain text; where chunks overlap, the text appears once). 409 `not_ready` while the document is queued, processing or failed. The text is one version’s: if a new version is swapped in while a long text is being sent, the response is cut off (the connection closes before the end of the body) rather than continue with the other version’s text; read it again.',
        tags: ['documents'],
        params: DocumentParams,
        querystring: PrincipalsQuery,
        response: {
          200: {
            description: 'The extracted text.',
            content: {
              'text/plain': {
                schema: { type: 'string' },
                example: 'Capybaras are the largest living rodents.\n\nThey live in groups near water.',
              },
            },
          },
          ...problemResponses(...COMMON_ERRORS, 'principal_forbidden', 'not_found', 'not_ready'),
        },
      },
    },
    async (request, reply) => {
      const text = await deps.documents.content(request.principal.org.id, request.access, request.params.id);
      return reply
        .type('text/plain; charset=utf-8')
        .header('x-content-type-options', 'nosniff')
        .send(Readable.from(text, { objectMode: false, encoding: 'utf8' }));
    },
  );
}
