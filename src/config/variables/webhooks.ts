// The variables of webhooks: endpoints, backlog, timeouts, retries and delivery concurrency.
import { DEFAULT_MAX_PENDING } from '../../domain/webhooks.js';
import type { VariableTable } from '../variable.js';

/** Webhook endpoints, their backlog, timeouts, retries and delivery concurrency. */
export const WEBHOOK_VARIABLES = {
  webhookMaxEndpoints: {
    env: 'WEBHOOK_MAX_ENDPOINTS',
    type: 'int',
    default: 10,
    min: 1,
    max: 1000,
    description: 'webhook endpoints one organisation may have',
  },
  webhookMaxPending: {
    env: 'WEBHOOK_MAX_PENDING',
    type: 'int',
    default: DEFAULT_MAX_PENDING,
    min: 1,
    max: 1_000_000,
    description:
      "messages one webhook endpoint may have waiting: beyond it `POST /v1/webhooks/{id}/test` answers 429 `backlog_full`, and a new event drops the oldest waiting one (counted in the endpoint's `dropped_messages`)",
  },
  webhookTimeoutMs: {
    env: 'WEBHOOK_TIMEOUT_MS',
    type: 'int',
    default: 10_000,
    min: 100,
    max: 60_000,
    description: 'time a webhook receiver has to answer (connect included); a 2xx within it is a delivery',
  },
  webhookRetryBaseMs: {
    env: 'WEBHOOK_RETRY_BASE_MS',
    type: 'int',
    default: 5_000,
    min: 10,
    max: 3_600_000,
    description: 'first webhook retry delay; doubled per attempt (with jitter) up to `WEBHOOK_RETRY_MAX_MS`',
  },
  webhookRetryMaxMs: {
    env: 'WEBHOOK_RETRY_MAX_MS',
    type: 'int',
    default: 3_600_000,
    min: 10,
    max: 86_400_000,
    description: 'longest delay between two attempts of one webhook message',
  },
  webhookRetryWindowMs: {
    env: 'WEBHOOK_RETRY_WINDOW_MS',
    type: 'int',
    default: 86_400_000,
    min: 1_000,
    max: 2_592_000_000,
    description: 'a webhook message is retried until it is this old (24 h), then given up',
  },
  webhookDisableAfterMs: {
    env: 'WEBHOOK_DISABLE_AFTER_MS',
    type: 'int',
    default: 432_000_000,
    min: 1_000,
    max: 31_536_000_000,
    description: 'an endpoint whose attempts have all failed for this long (5 days) is disabled',
  },
  webhookPollMs: {
    env: 'WEBHOOK_POLL_MS',
    type: 'int',
    default: 200,
    min: 10,
    max: 60_000,
    description:
      'how often each process looks for due webhook messages when it found none; a new message wakes it sooner',
  },
  webhookConcurrency: {
    env: 'WEBHOOK_CONCURRENCY',
    type: 'int',
    default: 16,
    min: 1,
    max: 256,
    description: 'webhook deliveries in flight at once per process',
  },
  webhookOrgConcurrency: {
    env: 'WEBHOOK_ORG_CONCURRENCY',
    type: 'int',
    default: 4,
    min: 1,
    max: 256,
    description:
      'webhook deliveries in flight at once for one organisation, across every process: its slow endpoints hold no more slots than this, the rest go to other organisations in turn (keep it below `WEBHOOK_CONCURRENCY`)',
  },
  webhookEndpointConcurrency: {
    env: 'WEBHOOK_ENDPOINT_CONCURRENCY',
    type: 'int',
    default: 2,
    min: 1,
    max: 256,
    description: 'webhook deliveries in flight at once for one endpoint, across every process',
  },
} satisfies Partial<VariableTable>;
