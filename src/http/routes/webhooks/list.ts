// GET /v1/webhooks — the org's webhook endpoints, oldest first.
import type { FastifyInstance } from 'fastify';
import { COMMON_ERRORS, problemResponses, WebhookList } from '../../../wire/index.js';
import type { AppDeps } from '../../deps.js';
import { toWebhookJson } from './json.js';

export function listWebhooksRoute(app: FastifyInstance, deps: AppDeps): void {
  app.get(
    '/webhooks',
    {
      config: { scope: 'webhooks' },
      schema: {
        operationId: 'listWebhooks',
        summary: 'List webhook endpoints',
        description: 'Every webhook endpoint of the organisation, oldest first, without secrets.',
        tags: ['webhooks'],
        response: { 200: WebhookList, ...problemResponses(...COMMON_ERRORS) },
      },
    },
    async (request) => ({
      webhooks: (await deps.webhooks.list(request.principal.org.id)).map(toWebhookJson),
    }),
  );
}
