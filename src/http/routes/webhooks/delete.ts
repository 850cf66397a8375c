// DELETE /v1/webhooks/{id} — removes the endpoint with its undelivered messages and its log.
import type { FastifyInstance } from 'fastify';
import { COMMON_ERRORS, problemResponses, WebhookParams } from '../../../wire/index.js';
import type { AppDeps } from '../../deps.js';

export function deleteWebhookRoute(app: FastifyInstance, deps: AppDeps): void {
  app.delete<{ Params: { id: string } }>(
    '/webhooks/:id',
    {
      config: { scope: 'webhooks' },
      schema: {
        operationId: 'deleteWebhook',
        summary: 'Delete a webhook endpoint',
        description:
          'Deletes the endpoint; its undelivered messages are dropped and its delivery log removed.',
        tags: ['webhooks'],
        params: WebhookParams,
        response: {
          204: { type: 'null', description: 'Deleted.' },
          ...problemResponses(...COMMON_ERRORS, 'not_found'),
        },
      },
    },
    async (request, reply) => {
      await deps.webhooks.delete(request.principal.org.id, request.params.id);
      return reply.code(204).send();
    },
  );
}
