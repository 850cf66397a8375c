// What the HTTP layer needs from the composition root: domain services and a few limits.
import type { Authenticator, Principal } from '../domain/auth.js';
import type { DocumentService } from '../domain/documents.js';
import type { EvaluationService } from '../domain/evaluations.js';
import type { IdempotencyService } from '../domain/idempotency.js';
import type { IngestionService } from '../domain/ingestion.js';
import type { OrgAdmin } from '../domain/orgs.js';
import type { PartitionService } from '../domain/partition-service.js';
import type { DocumentAccess } from '../domain/partitions.js';
import type { RateLimiter, Tracer, TraceSpan } from '../domain/ports.js';
import type { ProviderStatus } from '../domain/provider-health.js';
import type { QueryService } from '../domain/query.js';
import type { SourceService } from '../domain/sources.js';
import type { UsageService } from '../domain/usage.js';
import type { VectorStatusService } from '../domain/vector-status.js';
import type { WebhookService } from '../domain/webhooks.js';

export interface ReadinessCheck {
  name: string;
  check(): Promise<void>;
}

/** Where the HTTP layer reports traffic, and how /metrics renders. */
export interface MetricsSink {
  observeRequest(method: string, route: string, status: number, seconds: number): void;
  render(): Promise<{ contentType: string; body: string }>;
}

/** Runs `fn`, and everything it starts, as a request of `orgId`. */
export interface OrgRequestScope {
  run<T>(orgId: string, fn: () => T): T;
}

export interface AppDeps {
  /** The service's version (package.json's): the OpenAPI document's `info.version`. */
  version: string;
  authenticator: Authenticator;
  rateLimiter: RateLimiter;
  ingestion: IngestionService;
  idempotency: IdempotencyService;
  documents: DocumentService;
  partitions: PartitionService;
  /** The `vectors` part of status records; absent: `disabled` (no embedding provider). */
  vectorStatus?: VectorStatusService;
  query: QueryService;
  evaluations: EvaluationService;
  usage: UsageService;
  webhooks: WebhookService;
  sources: SourceService;
  readiness: ReadinessCheck[];
  /** Runs the rest of each authenticated request as its org's (a per-org share of the database pool). */
  orgScope?: OrgRequestScope;
  /** The providers queries call (embeddings, reranker): /readyz shows each one's circuit state. */
  providers?: ProviderStatus[];
  metrics?: MetricsSink;
  /** A span per request (http/plugins/tracing.ts); absent: none. */
  tracer?: Tracer;
  /** The admin API (/admin/v1); absent when ADMIN_TOKEN is unset, and then its routes do not exist. */
  admin?: { token: string; orgs: OrgAdmin };
  limits: {
    maxJsonBodyBytes: number;
    maxUploadBytes: number;
    unauthenticatedRateLimitRpm: number;
  };
  http?: {
    trustProxy?: boolean;
    /** Whole-request time cap (a slow upload is cut off after this). */
    requestTimeoutMs?: number;
    /** Time a client has to send its request headers (slow-loris clients are cut off). */
    headersTimeoutMs?: number;
  };
}

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
    /**
     * What this request may see: its key's access with the principals the request names in
     * place of the key's (http/plugins/authenticated.ts), computed once before the handler.
     */
    access: DocumentAccess;
    /** The request's span (http/plugins/tracing.ts): the parent of the spans it causes; null when tracing is off. */
    traceSpan: TraceSpan | null;
  }
}
