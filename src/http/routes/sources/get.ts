// GET /v1/sources/{id} — one source (another org's is a 404).
import type { FastifyInstance } from 'fastify';
import { COMMON_ERRORS, problemResponses, SourceParams, SourceSchema } from '../../../wire/index.js';
import type { AppDeps } from '../../deps.js';
import { toSourceJson } from './json.js';

export function getSourceRoute(app: FastifyInstance, deps: AppDeps): void {
  app.get<{ Params: { id: string } }>(
    '/sources/:id',
    {
      config: { scope: 'sources', wholeOrg: 'sources' },
      schema: {
        operationId: 'getSource',
        summary: 'Get a source',
        description: 'One source, without its credentials (`has_credentials` says whether it has some).',
        tags: ['sources'],
        params: SourceParams,
        response: {
          200: SourceSchema,
          ...problemResponses(...COMMON_ERRORS, 'partition_forbidden', 'not_found'),
        },
      },
    },
    async (request) => {
      return toSourceJson(await deps.sources.get(request.principal.org.id, request.params.id));
    },
  );
}
