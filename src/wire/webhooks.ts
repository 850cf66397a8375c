// Schemas of the /v1/webhooks routes (TypeBox → JSON Schema), with their examples.
import { Type } from '@sinclair/typebox';
import { WEBHOOK_EVENTS } from '../domain/webhooks.js';

const EXAMPLE_WEBHOOK_ID = 'wh_8f14e45fceea167a5a36dedd4bea2543';
const EXAMPLE_MESSAGE_ID = 'msg_c9f0f895fb98ab9159f51fd0297e236d';
const EXAMPLE_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw4wrEJJIVzLg=';

const EventType = Type.Union(
  WEBHOOK_EVENTS.map((e) => Type.Literal(e)),
  { description: 'A document or source event.' },
);

export const WebhookParams = Type.Object(
  {
    id: Type.String({
      maxLength: 64,
      description: 'Webhook endpoint ID (`wh_…`).',
      examples: [EXAMPLE_WEBHOOK_ID],
    }),
  },
  { additionalProperties: false },
);

export const CreateWebhookBody = Type.Object(
  {
    url: Type.String({
      minLength: 1,
      maxLength: 2048,
      description:
        'Where events are POSTed: http or https, a public address (the URL-ingest rules: no private, loopback, link-local or metadata addresses). Redirects are not followed.',
    }),
    events: Type.Optional(
      Type.Array(EventType, {
        maxItems: WEBHOOK_EVENTS.length,
        uniqueItems: true,
        description: 'Events to receive; every event when absent or empty.',
      }),
    ),
    description: Type.Optional(Type.String({ maxLength: 500, description: 'A note for people.' })),
  },
  {
    additionalProperties: false,
    examples: [{ url: 'https://hooks.example.com/docindex', events: ['document.ready', 'document.failed'] }],
  },
);

const endpointFields = {
  id: Type.String({ description: 'Webhook endpoint ID.' }),
  url: Type.String(),
  events: Type.Array(EventType),
  description: Type.Union([Type.String(), Type.Null()]),
  enabled: Type.Boolean({ description: 'false once disabled (410 Gone, or 5 days of failed attempts).' }),
  disabled_reason: Type.Union([Type.Literal('gone'), Type.Literal('failing'), Type.Null()]),
  dropped_messages: Type.Integer({
    description:
      'Events dropped, oldest first, because the endpoint already had `WEBHOOK_MAX_PENDING` messages waiting (its receiver fell behind); 0 while nothing was.',
  }),
  created_at: Type.String({ format: 'date-time' }),
};

const EXAMPLE_ENDPOINT = {
  id: EXAMPLE_WEBHOOK_ID,
  url: 'https://hooks.example.com/docindex',
  events: ['document.ready', 'document.failed'],
  description: null,
  enabled: true,
  disabled_reason: null,
  dropped_messages: 0,
  created_at: '2026-03-15T12:00:00.000Z',
};

export const WebhookSchema = Type.Object(endpointFields, {
  description: 'A webhook endpoint (its secret is shown only when it is created).',
  examples: [EXAMPLE_ENDPOINT],
});

export const CreatedWebhookSchema = Type.Object(
  {
    ...endpointFields,
    secret: Type.String({
      description:
        'The signing secret (`whsec_` + base64 key), shown only now: verify `webhook-signature` with it (Standard Webhooks).',
    }),
  },
  {
    description: 'The new endpoint with its secret.',
    examples: [{ ...EXAMPLE_ENDPOINT, secret: EXAMPLE_SECRET }],
  },
);

export const WebhookList = Type.Object(
  { webhooks: Type.Array(WebhookSchema) },
  { examples: [{ webhooks: [EXAMPLE_ENDPOINT] }] },
);

export const TestWebhookResponse = Type.Object(
  {
    message_id: Type.String({ description: 'The `webhook-id` the receiver will see.' }),
  },
  {
    description: 'A `webhook.test` message is queued for delivery.',
    examples: [{ message_id: EXAMPLE_MESSAGE_ID }],
  },
);

export const DeliveriesQuery = Type.Object(
  { limit: Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Attempts to return.' }) },
  { additionalProperties: false },
);

const EXAMPLE_ATTEMPT = {
  message_id: EXAMPLE_MESSAGE_ID,
  event_type: 'document.ready',
  attempt: 1,
  status_code: 200,
  duration_ms: 41,
  error: null,
  outcome: 'delivered',
  created_at: '2026-03-15T12:00:01.000Z',
};

export const DeliveryList = Type.Object(
  {
    deliveries: Type.Array(
      Type.Object({
        message_id: Type.String({
          description: 'The `webhook-id`: the same on every attempt of one message.',
        }),
        event_type: Type.String(),
        attempt: Type.Integer({ description: '1 for the first attempt.' }),
        status_code: Type.Union([Type.Integer(), Type.Null()], {
          description: 'HTTP status of the answer; null when none came.',
        }),
        duration_ms: Type.Integer(),
        error: Type.Union([Type.String(), Type.Null()]),
        outcome: Type.Union(
          [
            Type.Literal('delivered'),
            Type.Literal('retrying'),
            Type.Literal('gave_up'),
            Type.Literal('endpoint_disabled'),
          ],
          { description: 'What the attempt led to.' },
        ),
        created_at: Type.String({ format: 'date-time' }),
      }),
      { description: 'Newest first; the newest 100 attempts of the endpoint are kept.' },
    ),
    pending: Type.Integer({ description: 'Messages waiting for a (next) attempt.' }),
  },
  { examples: [{ deliveries: [EXAMPLE_ATTEMPT], pending: 0 }] },
);
