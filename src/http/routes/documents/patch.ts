// PATCH /v1/documents/{id} — sets and removes metadata keys and replaces or removes the access
// list; filters and access checks see the change at once.
import type { FastifyInstance } from 'fastify';
import { accessToWrite } from '../../../domain/principals.js';
import {
  COMMON_ERRORS,
  DocumentParams,
  DocumentRecordSchema,
  MetadataPatchBody,
  type MetadataPatchBody as MetadataPatchBodyType,
  PrincipalsQuery,
  problemResponses,
} from '../../../wire/index.js';
import type { AppDeps } from '../../deps.js';
import { documentJson } from './json.js';

export function patchDocumentRoute(app: FastifyInstance, deps: AppDeps): void {
  app.patch<{ Params: { id: string }; Body: MetadataPatchBodyType }>(
    '/documents/:id',
    {
      config: { scope: 'write' },
      schema: {
        operationId: 'updateMetadata',
        summary: 'Update a document’s metadata or access list',
        description:
          'Merges `metadata` into the document’s: a string sets a key, null removes it, keys not named stay. `access` replaces the document’s access list (null removes it; absent keeps it). Query filters and access checks see the change at once; the chunks are not processed again. `?principals=` says whom the request acts for: a document its principals may not see is 404.',
        tags: ['documents'],
        params: DocumentParams,
        querystring: PrincipalsQuery,
        body: MetadataPatchBody,
        response: {
          200: DocumentRecordSchema,
          ...problemResponses(...COMMON_ERRORS, 'principal_forbidden', 'not_found'),
        },
      },
    },
    async (request) =>
      documentJson(
        deps,
        await deps.documents.updateMetadata(
          request.principal.org.id,
          request.access,
          request.params.id,
          request.body.metadata ?? {},
          accessToWrite(request.body.access, '/access'),
        ),
      ),
  );
}
