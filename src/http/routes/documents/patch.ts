// PATCH /v1/documents/{id} — sets and removes metadata keys; filters see the change at once.
import type { FastifyInstance } from 'fastify';
import type { MetadataPatch } from '../../../domain/metadata.js';
import type { AppDeps } from '../../deps.js';
import {
  COMMON_ERRORS,
  DocumentParams,
  DocumentRecordSchema,
  MetadataPatchBody,
  problemResponses,
} from '../../schemas.js';
import { documentJson } from './json.js';

export function patchDocumentRoute(app: FastifyInstance, deps: AppDeps): void {
  app.patch<{ Params: { id: string }; Body: { metadata: MetadataPatch } }>(
    '/documents/:id',
    {
      config: { scope: 'write' },
      schema: {
        operationId: 'updateMetadata',
        summary: 'Update a document’s metadata',
        description:
          'Merges `metadata` into the document’s: a string sets a key, null removes it, keys not named stay. Query filters see the change at once; the chunks are not processed again.',
        tags: ['documents'],
        params: DocumentParams,
        body: MetadataPatchBody,
        response: { 200: DocumentRecordSchema, ...problemResponses(...COMMON_ERRORS, 'not_found') },
      },
    },
    async (request) =>
      documentJson(
        deps,
        await deps.documents.updateMetadata(
          request.principal.org.id,
          request.principal.access,
          request.params.id,
          request.body.metadata,
        ),
      ),
  );
}
