// GET /v1/sources — the org's sources, oldest first.
import type { FastifyInstance } from 'fastify';
import { COMMON_ERRORS, problemResponses, SourceList } from '../../../wire/index.js';
import type { AppDeps } from '../../deps.js';
import { toSourceJson } from './json.js';

export function listSourcesRoute(app: FastifyInstance, deps: AppDeps): void {
  app.get(
    '/sources',
    {
      config: { scope: 'sources', wholeOrg: 'sources' },
      schema: {
        operationId: 'listSources',
        summary: 'List sources',
        description: 'Every source of the organisation, oldest first, without credentials.',
        tags: ['sources'],
        response: { 200: SourceList, ...problemResponses(...COMMON_ERRORS, 'partition_forbidden') },
      },
    },
    async (request) => {
      return { sources: (await deps.sources.list(request.principal.org.id)).map(toSourceJson) };
    },
  );
}
