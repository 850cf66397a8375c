// POST /v1/sources — a new source; nothing is synced until its first run (POST …/sync or its schedule).
import type { FastifyInstance } from 'fastify';
import type { NewSourceInput } from '../../../domain/sources.js';
import { COMMON_ERRORS, CreateSourceBody, problemResponses, SourceSchema } from '../../../wire/index.js';
import type { AppDeps } from '../../deps.js';
import { toSourceJson } from './json.js';

export function createSourceRoute(app: FastifyInstance, deps: AppDeps): void {
  app.post<{ Body: NewSourceInput }>(
    '/sources',
    {
      config: { scope: 'sources', wholeOrg: 'sources' },
      schema: {
        operationId: 'createSource',
        summary: 'Create a source',
        description:
          'Registers a collection (an S3 bucket or the part of it under a prefix, or a web site crawled from start URLs and/or a sitemap within robots.txt) whose items become documents and stay in sync with it: each run ingests new items, makes a new version of changed ones and deletes the documents of items gone. Credentials are stored encrypted and never returned (400 `secrets_key_unset` while the server has no `SECRETS_KEY`).',
        tags: ['sources'],
        body: CreateSourceBody,
        response: {
          201: SourceSchema,
          ...problemResponses(...COMMON_ERRORS, 'partition_forbidden', 'secrets_key_unset'),
        },
      },
    },
    async (request, reply) => {
      const source = await deps.sources.create(request.principal.org.id, request.body);
      return reply.code(201).send(toSourceJson(source));
    },
  );
}
