// POST /v1/documents/delete — deletes the documents a filter and/or a list of ids select.
import type { FastifyInstance } from 'fastify';
import { MAX_DELETE_PER_REQUEST } from '../../../domain/documents.js';
import {
  COMMON_ERRORS,
  DeleteDocumentsBody,
  DeleteDocumentsResponse,
  problemResponses,
} from '../../../wire/index.js';
import type { AppDeps } from '../../deps.js';

export function deleteDocumentsRoute(app: FastifyInstance, deps: AppDeps): void {
  app.post<{ Body: DeleteDocumentsBody }>(
    '/documents/delete',
    {
      config: { scope: 'write' },
      schema: {
        operationId: 'deleteDocuments',
        summary: 'Delete documents by filter or ids',
        description: `Deletes the organisation's documents that pass \`filter\` and, when given, are among \`document_ids\` (at least one of the two; an empty filter alone is refused). Each goes as with DELETE /v1/documents/{id}: record, chunks and stored file, and it stops matching queries at once. At most ${MAX_DELETE_PER_REQUEST.toLocaleString('en')} documents per request: while \`has_more\` is true, send it again. Unknown ids and other organisations' documents are passed over.`,
        tags: ['documents'],
        body: DeleteDocumentsBody,
        response: {
          200: DeleteDocumentsResponse,
          ...problemResponses(
            ...COMMON_ERRORS,
            'payload_too_large',
            'unsupported_media_type',
            'partition_forbidden',
            'principal_forbidden',
          ),
        },
      },
    },
    async (request) => {
      const result = await deps.documents.deleteMany(request.principal.org.id, request.access, {
        filter: request.body.filter,
        documentIds: request.body.document_ids,
        partitions: request.body.partitions,
      });
      return { deleted: result.deleted, has_more: result.hasMore };
    },
  );
}
