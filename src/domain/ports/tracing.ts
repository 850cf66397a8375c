// Tracing: the spans services and the pipeline start, and the tracer used while tracing is off.

/**
 * A span's attributes: ids, counts, sizes, durations, and names the service itself chose (a
 * route, a mode, a format). Never a document's or a query's text, a metadata value, a file name,
 * a URL's path or query string, or a key.
 */
export type TraceAttributes = Record<string, string | number | boolean | readonly string[] | undefined>;

/**
 * A span's attributes, built only when the span records them: a span of the no-op tracer or one
 * the sampler dropped never calls it, so tracing off costs no attribute objects.
 */
export type LazyTraceAttributes = () => TraceAttributes;

/** One timed step of a request or a job (adapters/otel when tracing is on). */
export interface TraceSpan {
  setAttributes(attributes: LazyTraceAttributes): void;
  /**
   * Marks the span failed with the error's code or class name; its message is left out, since a
   * message may quote what the user sent.
   */
  fail(error: unknown): void;
  /** Ends the span now, or at `endTime` (milliseconds since the epoch). */
  end(endTime?: number): void;
  /** This span as a W3C `traceparent`, to travel with a job; null when it is not traced. */
  traceparent(): string | null;
}

/**
 * Where a span hangs: a span of this process, or a W3C `traceparent` (a request's header, a job's
 * stored context); null or absent: a trace of its own.
 */
export type TraceParent = TraceSpan | string | null | undefined;

export interface SpanOptions {
  /** Set once the span has started (a sampler decides without them). */
  attributes?: LazyTraceAttributes;
  /** When the span began (milliseconds since the epoch); absent: now. */
  startTime?: number;
  parent?: TraceParent;
  /** `server` for a request, `consumer` for a job run; absent: an internal step. */
  kind?: 'server' | 'consumer';
}

/**
 * Traces (OpenTelemetry when OTEL_EXPORTER_OTLP_ENDPOINT is set, start/tracing.ts). Services and
 * the pipeline take this port, never the OpenTelemetry API, so they stay free of it; off, they get
 * `noopTracer`, whose calls do nothing.
 *
 * A span's parent is always passed (`parent`), never taken from an ambient "current span": on
 * Node 20 an ambient context needs AsyncLocalStorage, whose promise hooks slow every promise of
 * the process, traced or not (docs/TRACING.md).
 */
export interface Tracer {
  /** Starts a span: for steps that overlap or end elsewhere. */
  startSpan(name: string, options?: SpanOptions): TraceSpan;
  /**
   * Runs `fn` in a new span, which `fn` passes as the parent of the spans it starts; the span
   * ends when `fn` settles and is marked failed when it throws.
   */
  inSpan<T>(name: string, options: SpanOptions, fn: (span: TraceSpan) => Promise<T>): Promise<T>;
}

/** The span of the no-op tracer: records nothing, hands no trace on. */
export const noopSpan: TraceSpan = {
  setAttributes() {},
  fail() {},
  end() {},
  traceparent: () => null,
};

/**
 * The tracer while tracing is off: each call is a function call and nothing more (attributes are
 * never built). Callers may also compare with it to skip a traced path altogether.
 */
export const noopTracer: Tracer = {
  startSpan: () => noopSpan,
  inSpan: (_name, _options, fn) => fn(noopSpan),
};
