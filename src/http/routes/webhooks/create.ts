// POST /v1/webhooks — a new webhook endpoint; its signing secret is in this answer only.
import type { FastifyInstance } from 'fastify';
import {
  COMMON_ERRORS,
  CreatedWebhookSchema,
  CreateWebhookBody,
  problemResponses,
} from '../../../wire/index.js';
import type { AppDeps } from '../../deps.js';
import { toWebhookJson } from './json.js';

export function createWebhookRoute(app: FastifyInstance, deps: AppDeps): void {
  app.post<{ Body: { url: string; events?: string[]; description?: string } }>(
    '/webhooks',
    {
      config: { scope: 'webhooks' },
      schema: {
        operationId: 'createWebhook',
        summary: 'Create a webhook endpoint',
        description:
          'Registers a URL that receives signed document events (Standard Webhooks). The URL must pass the URL-ingest address rules. The answer carries the signing secret, shown only this once.',
        tags: ['webhooks'],
        body: CreateWebhookBody,
        response: { 201: CreatedWebhookSchema, ...problemResponses(...COMMON_ERRORS) },
      },
    },
    async (request, reply) => {
      const endpoint = await deps.webhooks.create(request.principal.org.id, request.body);
      return reply.code(201).send({ ...toWebhookJson(endpoint), secret: endpoint.secret });
    },
  );
}
