// The OpenTelemetry SDK for traces: spans batched and sent as OTLP/HTTP (JSON) to the configured
// endpoint. start/tracing.ts imports this module only when an endpoint is set, so a process
// without one never loads the SDK or the exporter.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  NodeTracerProvider,
  ParentBasedSampler,
  type Sampler,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import { OtelTracer } from './otel-tracer.js';

export interface OtelTracingOptions {
  serviceName: string;
  serviceVersion: string;
  /** OTLP traces URL in full (…/v1/traces). */
  tracesUrl: string;
  /** OTEL_TRACES_SAMPLER's names. */
  sampler: string;
  /** OTEL_TRACES_SAMPLER_ARG: the ratio of the traceidratio samplers (default 1). */
  samplerArg: number;
  /** `serve`, `worker` or a one-shot command: the process's part, on every span it sends. */
  role: string;
  /** The batch span processor's settings (the OTEL_BSP_* variables). */
  batch: {
    scheduledDelayMillis: number;
    exportTimeoutMillis: number;
    maxQueueSize: number;
    maxExportBatchSize: number;
  };
}

export interface OtelTracing {
  tracer: OtelTracer;
  /** Sends the spans still buffered, then stops. */
  shutdown(): Promise<void>;
}

/** The semantic conventions' `service.instance.id` (still in their incubating set). */
const ATTR_SERVICE_INSTANCE_ID = 'service.instance.id';

function samplerOf(name: string, ratio: number): Sampler {
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio);
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

export function startOtelTracing(options: OtelTracingOptions): OtelTracing {
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({
      [ATTR_SERVICE_NAME]: options.serviceName,
      [ATTR_SERVICE_VERSION]: options.serviceVersion,
      // One per process: which of a deployment's APIs and workers did the work.
      [ATTR_SERVICE_INSTANCE_ID]: `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`,
      'docindex.process.role': options.role,
    }),
    sampler: samplerOf(options.sampler, options.samplerArg),
    spanProcessors: [
      // Spans are queued as they end and sent in batches off the request path: a span costs its
      // recording and a share of one serialisation, never a request of its own.
      new BatchSpanProcessor(new OTLPTraceExporter({ url: options.tracesUrl }), {
        ...options.batch,
        maxExportBatchSize: Math.min(options.batch.maxExportBatchSize, options.batch.maxQueueSize),
      }),
    ],
  });
  // Not registered globally: the Tracer port passes every parent itself, so no context manager
  // (AsyncLocalStorage, with its hooks on every promise) and no global provider are installed.
  const tracer = new OtelTracer(provider.getTracer('docindex', options.serviceVersion));
  return {
    tracer,
    async shutdown() {
      await provider.shutdown();
    },
  };
}
