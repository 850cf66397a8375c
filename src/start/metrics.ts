// Prometheus metrics (prom-client): HTTP traffic by route and status, document outcomes, the
// backlog of waiting documents, and each query provider's circuit state, served at /metrics.
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { CIRCUIT_STATES } from '../domain/circuit-breaker.js';
import type { Clock, DocumentStore, VectorSearch } from '../domain/ports.js';
import type { ProviderStatus } from '../domain/provider-health.js';
import type { DeliveryOutcome, WebhookStore } from '../domain/webhooks.js';
import type { MetricsSink } from '../http/deps.js';
import type { ProcessingOutcome } from '../pipeline/processor.js';

export interface Metrics extends MetricsSink {
  documentOutcome(outcome: ProcessingOutcome): void;
  webhookAttempt(outcome: DeliveryOutcome, durationMs: number): void;
}

export function createMetrics(
  documents: DocumentStore,
  webhooks: WebhookStore,
  vectors: VectorSearch,
  clock: Clock,
  providers: readonly ProviderStatus[] = [],
): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'docindex_' });
  const requests = new Counter({
    name: 'docindex_http_requests_total',
    help: 'HTTP requests by method, route and status code.',
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'docindex_http_request_duration_seconds',
    help: 'HTTP request duration by route.',
    labelNames: ['route'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [registry],
  });
  const outcomes = new Counter({
    name: 'docindex_documents_processed_total',
    help: 'Documents that finished processing (ready or failed) or were retried, by failure code.',
    labelNames: ['outcome', 'code'],
    registers: [registry],
  });
  new Gauge({
    name: 'docindex_documents_pending',
    help: 'Documents queued or processing, across all organisations.',
    registers: [registry],
    async collect() {
      this.set(await documents.countPending());
    },
  });
  const deliveries = new Counter({
    name: 'docindex_webhook_deliveries_total',
    help: 'Webhook delivery attempts made by this process, by outcome (delivered, retrying, gave_up, endpoint_disabled).',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const deliveryDuration = new Histogram({
    name: 'docindex_webhook_delivery_duration_seconds',
    help: 'Time from sending a webhook to its answer (or failure), per attempt.',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  new Gauge({
    name: 'docindex_vector_prefilter_bytes',
    help: 'Bytes of sign bits this process holds for semantic search (VECTOR_PREFILTER_MAX_MB bounds them).',
    registers: [registry],
    collect() {
      this.set(vectors.heldMemory().bytes);
    },
  });
  new Gauge({
    name: 'docindex_vector_prefilter_partitions',
    help: 'Organisations (per embedding profile) whose sign bits this process holds.',
    registers: [registry],
    collect() {
      this.set(vectors.heldMemory().partitions);
    },
  });
  new Gauge({
    name: 'docindex_provider_circuit_state',
    help: 'Circuit breaker of each provider queries call (embeddings, rerank) in this process: 1 for its current state (closed, open, half-open), 0 for the others.',
    labelNames: ['provider', 'kind', 'state'],
    registers: [registry],
    collect() {
      for (const provider of providers) {
        const now = provider.state();
        for (const state of CIRCUIT_STATES) {
          this.set({ provider: provider.name, kind: provider.kind, state }, state === now ? 1 : 0);
        }
      }
    },
  });
  // Both gauges read the shared outbox, so every process reports the same figure.
  let outboxRead: Promise<{ depth: number; oldest: Date | null }> | null = null;
  const outbox = () => {
    outboxRead ??= webhooks.stats().finally(() => {
      outboxRead = null;
    });
    return outboxRead;
  };
  new Gauge({
    name: 'docindex_webhook_outbox_depth',
    help: 'Webhook messages not yet delivered (waiting, retrying or in flight), across all organisations.',
    registers: [registry],
    async collect() {
      this.set((await outbox()).depth);
    },
  });
  new Gauge({
    name: 'docindex_webhook_oldest_undelivered_seconds',
    help: 'Age of the oldest webhook message not yet delivered; 0 when there is none.',
    registers: [registry],
    async collect() {
      const { oldest } = await outbox();
      this.set(oldest === null ? 0 : Math.max(0, (clock.now().getTime() - oldest.getTime()) / 1000));
    },
  });

  return {
    webhookAttempt(outcome, durationMs) {
      deliveries.inc({ outcome });
      deliveryDuration.observe(durationMs / 1000);
    },
    observeRequest(method, route, status, seconds) {
      requests.inc({ method, route, status: String(status) });
      duration.observe({ route }, seconds);
    },
    documentOutcome(outcome) {
      outcomes.inc({ outcome: outcome.outcome, code: outcome.code ?? '' });
    },
    async render() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}
