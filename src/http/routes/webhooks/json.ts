// The JSON shapes of webhook endpoints and delivery attempts (docs/API.md, "Webhooks").
import type { DeliveryAttempt, WebhookEndpoint } from '../../../domain/webhooks.js';

export function toWebhookJson(e: WebhookEndpoint) {
  return {
    id: e.id,
    url: e.url,
    events: e.events,
    description: e.description,
    enabled: e.disabledAt === null,
    disabled_reason: e.disabledReason,
    dropped_messages: e.droppedMessages,
    created_at: e.createdAt.toISOString(),
  };
}

export function toDeliveryJson(a: DeliveryAttempt) {
  return {
    message_id: a.messageId,
    event_type: a.eventType,
    attempt: a.attempt,
    status_code: a.statusCode,
    duration_ms: a.durationMs,
    error: a.error,
    outcome: a.outcome,
    created_at: a.at.toISOString(),
  };
}
