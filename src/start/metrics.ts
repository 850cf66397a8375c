// Prometheus metrics (prom-client): HTTP traffic by route and status, document outcomes, and the
// backlog of waiting documents, served at /metrics.
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { DocumentStore } from '../domain/ports.js';
import type { MetricsSink } from '../http/deps.js';
import type { ProcessingOutcome } from '../pipeline/processor.js';

export interface Metrics extends MetricsSink {
  documentOutcome(outcome: ProcessingOutcome): void;
}

export function createMetrics(documents: DocumentStore): Metrics {
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

  return {
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
