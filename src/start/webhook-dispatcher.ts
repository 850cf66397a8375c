// The webhook outbox's sender, which every `serve` and `worker` process runs: the
// WebhookDispatcher (domain/webhook-dispatcher.ts) over the SSRF-safe poster, each event's
// document rendered as the API shows it.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Config } from '../config/index.js';
import type { Clock, Embedder } from '../domain/ports.js';
import { vectorsAtEvent } from '../domain/vector-status.js';
import { WebhookDispatcher } from '../domain/webhook-dispatcher.js';
import type { WebhookStore } from '../domain/webhooks.js';
import { toDocumentJson } from '../http/routes/documents/json.js';
import { type AddressPolicy, WebhookPoster } from '../pipeline/fetch/index.js';
import type { Logger } from './logger.js';
import type { Metrics } from './metrics.js';

/** Attempts kept per endpoint in the delivery log (GET /v1/webhooks/{id}/deliveries). */
export const WEBHOOK_LOG_LIMIT = 100;
/** Bytes of a receiver's answer read (and ignored) before the connection is dropped. */
const WEBHOOK_MAX_RESPONSE_BYTES = 64 * 1024;
const WEBHOOK_LEASE_MARGIN_MS = 5_000;

export interface WebhookDispatcherDeps {
  config: Config;
  webhooks: WebhookStore;
  policy: AddressPolicy;
  clock: Clock;
  /** EMBEDDINGS' provider, for the `vectors` part of each event's document; null when none. */
  embedder: Embedder | null;
  metrics: Metrics;
  logger: Logger;
}

/** Starts a dispatcher each time it is called; their errors share one log throttle. */
export function webhookDispatcherStarter(deps: WebhookDispatcherDeps): () => { stop(): Promise<void> } {
  const { config, embedder, metrics, logger, policy } = deps;
  let lastWebhookError = 0;
  const webhookErrors = (error: unknown) => {
    // A database outage would otherwise log at every poll.
    if (Date.now() - lastWebhookError < 30_000) return;
    lastWebhookError = Date.now();
    logger.warn({ err: error }, 'webhook dispatcher error');
  };
  return () => {
    // One pool of connections for the dispatcher's deliveries, kept between them.
    const poster = new WebhookPoster({
      policy,
      timeoutMs: config.webhookTimeoutMs,
      maxResponseBytes: WEBHOOK_MAX_RESPONSE_BYTES,
    });
    const dispatcher = new WebhookDispatcher(
      deps.webhooks,
      (url, headers, body, signal) => poster.post(url, headers, body, signal),
      deps.clock,
      {
        owner: `${hostname()}/${process.pid}/${randomBytes(4).toString('hex')}/webhooks`,
        pollMs: config.webhookPollMs,
        concurrency: config.webhookConcurrency,
        orgConcurrency: config.webhookOrgConcurrency,
        endpointConcurrency: config.webhookEndpointConcurrency,
        // Longer than one attempt can take, so a live owner never loses a message to another.
        leaseMs: config.webhookTimeoutMs + WEBHOOK_LEASE_MARGIN_MS,
        retryBaseMs: config.webhookRetryBaseMs,
        retryMaxMs: config.webhookRetryMaxMs,
        retryWindowMs: config.webhookRetryWindowMs,
        disableAfterMs: config.webhookDisableAfterMs,
        logLimit: WEBHOOK_LOG_LIMIT,
        render: (record, type) => toDocumentJson(record, vectorsAtEvent(embedder, record, type)),
        onAttempt: (outcome, ms) => metrics.webhookAttempt(outcome, ms),
        onError: webhookErrors,
      },
    );
    dispatcher.start();
    return {
      stop: async () => {
        await dispatcher.stop();
        await poster.close();
      },
    };
  };
}
