// GET /v1/webhooks/{id} — one webhook endpoint (another org's is a 404).
import type { FastifyInstance } from 'fastify';
import { COMMON_ERRORS, problemResponses, WebhookParams, WebhookSchema } from '../../../wire/index.js';
import type { AppDeps } from '../../deps.js';
import { toWebhookJson } from './json.js';

export function getWebhookRoute(app: FastifyInstance, deps: AppDeps): void {
  app.get<{ Params: { id: string } }>(
    '/webhooks/:id',
    {
      config: { scope: 'webhooks' },
      schema: {
        operationId: 'getWebhook',
        summary: 'Get a webhook endpoint',
        description:
          'One webhook endpoint, without its secret; `enabled` says whether it still receives events.',
        tags: ['webhooks'],
        params: WebhookParams,
        response: { 200: WebhookSchema, ...problemResponses(...COMMON_ERRORS, 'not_found') },
      },
    },
    async (request) => toWebhookJson(await deps.webhooks.get(request.principal.org.id, request.params.id)),
  );
}
