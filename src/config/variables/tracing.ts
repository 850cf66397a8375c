// The variables of tracing: the OpenTelemetry SDK's own names for the collector, the sampler and
// the span batches.
import type { VariableTable } from '../variable.js';

/** OTEL_TRACES_SAMPLER's values (the OpenTelemetry SDK's names). */
export const OTEL_SAMPLERS: readonly string[] = [
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
  'always_on',
  'always_off',
  'traceidratio',
];

/**
 * Traces: the OTLP/HTTP collector, the sampler and the batches of spans (the OpenTelemetry SDK's
 * own variables).
 */
export const TRACING_VARIABLES = {
  otelExporterOtlpEndpoint: {
    env: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    type: 'url',
    scheme: /^https?:\/\//i,
    invalid: 'OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL (e.g. http://127.0.0.1:4318)',
    description:
      'turns traces on: the OTLP/HTTP collector they are sent to (JSON), e.g. `http://127.0.0.1:4318` (`/v1/traces` is appended); unset: no tracing code is loaded. See [TRACING.md](TRACING.md)',
  },
  otelExporterOtlpTracesEndpoint: {
    env: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    type: 'url',
    scheme: /^https?:\/\//i,
    invalid:
      'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be an http:// or https:// URL (e.g. http://127.0.0.1:4318/v1/traces)',
    description:
      'turns traces on too: the full OTLP/HTTP traces URL, used as it is; takes precedence over `OTEL_EXPORTER_OTLP_ENDPOINT`',
  },
  otelServiceName: {
    env: 'OTEL_SERVICE_NAME',
    type: 'string',
    default: 'docindex',
    description: "the traces' `service.name`",
  },
  otelSdkDisabled: {
    env: 'OTEL_SDK_DISABLED',
    type: 'bool',
    default: false,
    description: '`true` keeps traces off even when an endpoint is set',
  },
  otelTracesSampler: {
    env: 'OTEL_TRACES_SAMPLER',
    type: 'string',
    default: 'parentbased_always_on',
    oneOf: OTEL_SAMPLERS,
    description:
      'which traces are recorded: `parentbased_*` follow an incoming `traceparent`’s sampled flag, then `always_on`, `always_off` or `traceidratio` for new traces',
  },
  otelTracesSamplerArg: {
    env: 'OTEL_TRACES_SAMPLER_ARG',
    type: 'string',
    default: '1',
    pattern: {
      test: /^(0(\.\d+)?|1(\.0+)?|\.\d+)$/,
      invalid: 'OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1 (e.g. 0.25)',
    },
    description: 'the share of new traces the `traceidratio` samplers record',
  },
  otelBspScheduleDelay: {
    env: 'OTEL_BSP_SCHEDULE_DELAY',
    type: 'int',
    default: 5_000,
    min: 0,
    max: 3_600_000,
    description: 'traces: ms between two sends of the spans a process holds (sooner once a batch is full)',
  },
  otelBspExportTimeout: {
    env: 'OTEL_BSP_EXPORT_TIMEOUT',
    type: 'int',
    default: 30_000,
    min: 1,
    max: 3_600_000,
    description: 'traces: ms a send may take before its spans are given up',
  },
  otelBspMaxQueueSize: {
    env: 'OTEL_BSP_MAX_QUEUE_SIZE',
    type: 'int',
    default: 8_192,
    min: 1,
    max: 1_000_000,
    description:
      'traces: spans a process holds while they wait to be sent; beyond it new spans are dropped (a burst of ingest makes several per document)',
  },
  otelBspMaxExportBatchSize: {
    env: 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE',
    type: 'int',
    default: 1_024,
    min: 1,
    max: 1_000_000,
    description: 'traces: spans per send at most (at most `OTEL_BSP_MAX_QUEUE_SIZE`)',
  },
} satisfies Partial<VariableTable>;
