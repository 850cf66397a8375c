// DELETE /v1/sources/{id} — the source goes at once; its documents are deleted in the background.
import type { FastifyInstance } from 'fastify';
import { COMMON_ERRORS, problemResponses, SourceParams } from '../../../wire/index.js';
import type { AppDeps } from '../../deps.js';

export function deleteSourceRoute(app: FastifyInstance, deps: AppDeps): void {
  app.delete<{ Params: { id: string } }>(
    '/sources/:id',
    {
      config: { scope: 'sources', wholeOrg: 'sources' },
      schema: {
        operationId: 'deleteSource',
        summary: 'Delete a source',
        description:
          'Deletes the source and, in the background, every document its runs made (a run under way stops and removes them instead). A crash meanwhile resumes the removal.',
        tags: ['sources'],
        params: SourceParams,
        response: {
          204: { type: 'null', description: 'Deleted; its documents are being removed.' },
          ...problemResponses(...COMMON_ERRORS, 'partition_forbidden', 'not_found'),
        },
      },
    },
    async (request, reply) => {
      await deps.sources.delete(request.principal.org.id, request.params.id);
      return reply.code(204).send();
    },
  );
}
