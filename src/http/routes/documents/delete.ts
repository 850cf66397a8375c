// DELETE /v1/documents/{id} — removes a document; its chunks stop matching at once.
import type { FastifyInstance } from 'fastify';
import { COMMON_ERRORS, DocumentParams, PrincipalsQuery, problemResponses } from '../../../wire/index.js';
import type { AppDeps } from '../../deps.js';

export function deleteDocumentRoute(app: FastifyInstance, deps: AppDeps): void {
  app.delete<{ Params: { id: string } }>(
    '/documents/:id',
    {
      config: { scope: 'write' },
      schema: {
        operationId: 'deleteDocument',
        summary: 'Delete a document',
        description:
          'Deletes the document, its chunks and its stored file. A document being processed stays deleted.',
        tags: ['documents'],
        params: DocumentParams,
        querystring: PrincipalsQuery,
        response: {
          204: { type: 'null', description: 'Deleted.' },
          ...problemResponses(...COMMON_ERRORS, 'principal_forbidden', 'not_found'),
        },
      },
    },
    async (request, reply) => {
      await deps.documents.delete(request.principal.org.id, request.access, request.params.id);
      return reply.code(204).send();
    },
  );
}
