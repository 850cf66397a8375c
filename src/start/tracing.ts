// Traces: the OpenTelemetry SDK when an OTLP endpoint is configured, else the no-op tracer. The
// SDK and its exporter are imported only in the first case, so a process without tracing loads
// none of their code; its spans are calls to a tracer that does nothing (no attributes built).
import type { Config } from '../config/index.js';
import { noopTracer, type Tracer } from '../domain/ports.js';
import { PACKAGE_VERSION } from './package-version.js';

export interface Tracing {
  tracer: Tracer;
  /** Sends the spans still buffered (a process about to exit), then stops tracing. */
  shutdown(): Promise<void>;
}

/** Where traces go, or null when tracing is off. */
export function tracesUrlOf(
  config: Pick<Config, 'otelExporterOtlpEndpoint' | 'otelExporterOtlpTracesEndpoint' | 'otelSdkDisabled'>,
): string | null {
  if (config.otelSdkDisabled) return null;
  if (config.otelExporterOtlpTracesEndpoint !== null) return config.otelExporterOtlpTracesEndpoint;
  if (config.otelExporterOtlpEndpoint !== null) {
    // As the OTLP specification says: the signal's path is appended to the base URL.
    return `${config.otelExporterOtlpEndpoint.replace(/\/+$/, '')}/v1/traces`;
  }
  return null;
}

/** `role`: the process's part (`serve`, `worker`), shown on each span as `docindex.process.role`. */
export async function startTracing(config: Config, role: string): Promise<Tracing> {
  const tracesUrl = tracesUrlOf(config);
  if (tracesUrl === null) return { tracer: noopTracer, shutdown: async () => {} };
  const { startOtelTracing } = await import('../adapters/otel/sdk.js');
  return startOtelTracing({
    serviceName: config.otelServiceName,
    serviceVersion: PACKAGE_VERSION,
    tracesUrl,
    sampler: config.otelTracesSampler,
    samplerArg: Number(config.otelTracesSamplerArg),
    role,
    batch: {
      scheduledDelayMillis: config.otelBspScheduleDelay,
      exportTimeoutMillis: config.otelBspExportTimeout,
      maxQueueSize: config.otelBspMaxQueueSize,
      maxExportBatchSize: config.otelBspMaxExportBatchSize,
    },
  });
}
