// GET /v1/documents/{id} — a document's processing status.
import type { FastifyInstance } from 'fastify';
import {
  COMMON_ERRORS,
  DocumentParams,
  DocumentRecordSchema,
  PrincipalsQuery,
  problemResponses,
} from '../../../wire/index.js';
import type { AppDeps } from '../../deps.js';
import { documentJson } from './json.js';

export function getDocumentRoute(app: FastifyInstance, deps: AppDeps): void {
  app.get<{ Params: { id: string } }>(
    '/documents/:id',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'getDocument',
        summary: 'Get a document',
        description: 'Status of one document: queued → processing → ready | failed.',
        tags: ['documents'],
        params: DocumentParams,
        querystring: PrincipalsQuery,
        response: {
          200: DocumentRecordSchema,
          ...problemResponses(...COMMON_ERRORS, 'principal_forbidden', 'not_found'),
        },
      },
    },
    async (request) =>
      documentJson(
        deps,
        await deps.documents.get(request.principal.org.id, request.access, request.params.id),
      ),
  );
}
