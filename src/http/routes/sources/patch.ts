// PATCH /v1/sources/{id} — renames, reschedules, re-points or re-keys a source.
import type { FastifyInstance } from 'fastify';
import type { SourcePatch } from '../../../domain/sources.js';
import {
  COMMON_ERRORS,
  PatchSourceBody,
  problemResponses,
  SourceParams,
  SourceSchema,
} from '../../../wire/index.js';
import type { AppDeps } from '../../deps.js';
import { checkSourceConfig } from './config-check.js';
import { toSourceJson } from './json.js';

export function patchSourceRoute(app: FastifyInstance, deps: AppDeps): void {
  app.patch<{ Params: { id: string }; Body: SourcePatch }>(
    '/sources/:id',
    {
      config: { scope: 'sources', wholeOrg: 'sources' },
      schema: {
        operationId: 'updateSource',
        summary: 'Update a source',
        description:
          'Changes the fields given. A new `config` replaces the old one (credentials left out of it are kept); a new `schedule` counts from now; new `metadata` applies to documents the next runs add or update.',
        tags: ['sources'],
        params: SourceParams,
        body: PatchSourceBody,
        response: {
          200: SourceSchema,
          ...problemResponses(...COMMON_ERRORS, 'partition_forbidden', 'not_found', 'secrets_key_unset'),
        },
      },
    },
    async (request) => {
      if (request.body.config !== undefined) {
        const current = await deps.sources.get(request.principal.org.id, request.params.id);
        checkSourceConfig(current.type, request.body.config);
      }
      return toSourceJson(
        await deps.sources.update(request.principal.org.id, request.params.id, request.body),
      );
    },
  );
}
