// POST /v1/webhooks/{id}/test — queues a signed `webhook.test` message for the endpoint.
import type { FastifyInstance } from 'fastify';
import { COMMON_ERRORS, problemResponses, TestWebhookResponse, WebhookParams } from '../../../wire/index.js';
import type { AppDeps } from '../../deps.js';

export function testWebhookRoute(app: FastifyInstance, deps: AppDeps): void {
  app.post<{ Params: { id: string } }>(
    '/webhooks/:id/test',
    {
      config: { scope: 'webhooks' },
      schema: {
        operationId: 'testWebhook',
        summary: 'Send a test event',
        description:
          'Queues a `webhook.test` message (`data: {webhook_id}`), signed and retried like any event; its attempts appear under /deliveries. 429 `backlog_full` (with `Retry-After`) while the endpoint has `WEBHOOK_MAX_PENDING` messages waiting.',
        tags: ['webhooks'],
        params: WebhookParams,
        response: {
          202: TestWebhookResponse,
          ...problemResponses(...COMMON_ERRORS, 'not_found', 'backlog_full'),
        },
      },
    },
    async (request, reply) => {
      const messageId = await deps.webhooks.test(request.principal.org.id, request.params.id);
      return reply.code(202).send({ message_id: messageId });
    },
  );
}
