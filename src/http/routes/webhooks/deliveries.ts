// GET /v1/webhooks/{id}/deliveries — the endpoint's delivery log, newest attempt first.
import type { FastifyInstance } from 'fastify';
import {
  COMMON_ERRORS,
  DeliveriesQuery,
  DeliveryList,
  problemResponses,
  WebhookParams,
} from '../../../wire/index.js';
import type { AppDeps } from '../../deps.js';
import { toDeliveryJson } from './json.js';

export function webhookDeliveriesRoute(app: FastifyInstance, deps: AppDeps): void {
  app.get<{ Params: { id: string }; Querystring: { limit: number } }>(
    '/webhooks/:id/deliveries',
    {
      config: { scope: 'webhooks' },
      schema: {
        operationId: 'listWebhookDeliveries',
        summary: 'List delivery attempts',
        description:
          'The newest delivery attempts of the endpoint (status code, duration, error, attempt number, outcome, time) and how many messages wait for an attempt. The newest 100 attempts are kept.',
        tags: ['webhooks'],
        params: WebhookParams,
        querystring: DeliveriesQuery,
        response: { 200: DeliveryList, ...problemResponses(...COMMON_ERRORS, 'not_found') },
      },
    },
    async (request) => {
      const { attempts, pending } = await deps.webhooks.deliveries(
        request.principal.org.id,
        request.params.id,
        request.query.limit,
      );
      return { deliveries: attempts.map(toDeliveryJson), pending };
    },
  );
}
