// The webhook tables' rows (endpoints, delivery attempts) and their mapping to the domain's types,
// shared by both SQL backends: each passes how its driver returns numbers and timestamps.
import type {
  DeliveryAttempt,
  DeliveryOutcome,
  WebhookEndpoint,
  WebhookEventType,
} from '../../domain/webhooks.js';

/** An endpoint row: `T` is the driver's timestamp (epoch ms on SQLite, Date on PostgreSQL). */
export interface EndpointRow<T> {
  id: string;
  org_id: string;
  url: string;
  events: string;
  description: string | null;
  secret: string;
  created_at: T;
  disabled_at: T | null;
  disabled_reason: string | null;
  failing_since: T | null;
  dropped_messages: number;
}

/** A delivery attempt row: `N` the driver's bigint (a string on PostgreSQL), `T` its timestamp. */
export interface AttemptRow<N, T> {
  id: N;
  message_id: string;
  endpoint_id: string;
  event_type: string;
  attempt: number;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  outcome: string;
  at: T;
}

export function toEndpoint<T>(row: EndpointRow<T>, date: (value: T) => Date): WebhookEndpoint {
  return {
    id: row.id,
    orgId: row.org_id,
    url: row.url,
    // Stored comma-separated: the outbox insert matches ',type,' in ',events,'.
    events: row.events.split(',').filter((e) => e !== '') as WebhookEventType[],
    description: row.description,
    secret: row.secret,
    createdAt: date(row.created_at),
    disabledAt: row.disabled_at === null ? null : date(row.disabled_at),
    disabledReason: row.disabled_reason as WebhookEndpoint['disabledReason'],
    failingSince: row.failing_since === null ? null : date(row.failing_since),
    droppedMessages: Number(row.dropped_messages),
  };
}

export function toAttempt<N, T>(row: AttemptRow<N, T>, date: (value: T) => Date): DeliveryAttempt {
  return {
    id: Number(row.id),
    messageId: row.message_id,
    endpointId: row.endpoint_id,
    eventType: row.event_type,
    attempt: row.attempt,
    statusCode: row.status_code,
    durationMs: row.duration_ms,
    error: row.error,
    outcome: row.outcome as DeliveryOutcome,
    at: date(row.at),
  };
}
