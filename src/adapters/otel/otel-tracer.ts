// The Tracer port on OpenTelemetry: spans recorded by span-recorder.ts for the SDK's processor and
// exporter (sdk.ts starts them only when an OTLP endpoint is configured; this module is loaded only
// then too). Parents are passed explicitly (a span, or a traceparent from a header or a job): no
// context manager is installed, so no AsyncLocalStorage hooks run on the process's promises.
import { type Attributes, type SpanContext, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { LazyTraceAttributes, SpanOptions, TraceParent, Tracer, TraceSpan } from '../../domain/ports.js';
import type { RecorderSpan, SpanRecorder } from './span-recorder.js';

/** A W3C traceparent: version 00, a 32-hex trace id, a 16-hex span id, the flags. */
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

const KINDS = { server: SpanKind.SERVER, consumer: SpanKind.CONSUMER } as const;

class OtelSpan implements TraceSpan {
  constructor(readonly span: RecorderSpan) {}

  setAttributes(attributes: LazyTraceAttributes): void {
    // An unsampled span records nothing: its attributes are not even built.
    if (this.span.isRecording()) this.span.setAttributes(attributes() as Attributes);
  }

  fail(error: unknown): void {
    const code = errorCode(error);
    this.span.setAttribute('error.type', code);
    this.span.setStatus({ code: SpanStatusCode.ERROR, message: code });
  }

  end(endTime?: number): void {
    this.span.end(endTime);
  }

  traceparent(): string | null {
    const current = this.span.spanContext();
    if (!trace.isSpanContextValid(current)) return null;
    const flags = (current.traceFlags & 1).toString(16).padStart(2, '0');
    return `00-${current.traceId}-${current.spanId}-${flags}`;
  }
}

/** An error's machine-readable code where it has one, else its class name: never its message. */
function errorCode(error: unknown): string {
  if (typeof error !== 'object' || error === null) return typeof error;
  const { code, name } = error as { code?: unknown; name?: unknown };
  if (typeof code === 'string' && /^[\w.-]{1,64}$/.test(code)) return code;
  return typeof name === 'string' ? name : 'Error';
}

/** The span a traceparent names (remote), or undefined when it is absent or malformed. */
function spanContextOfTraceparent(traceparent: string | null | undefined): SpanContext | undefined {
  if (!traceparent) return undefined;
  const match = TRACEPARENT.exec(traceparent.trim().toLowerCase());
  if (!match) return undefined;
  const [, traceId, spanId, flags] = match as unknown as [string, string, string, string];
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return undefined;
  return { traceId, spanId, traceFlags: Number.parseInt(flags, 16) & 1, isRemote: true };
}

/** The span a span's parent names: a span of this tracer, a traceparent, or none. */
function parentOf(parent: TraceParent): SpanContext | undefined {
  if (parent instanceof OtelSpan) return parent.span.spanContext();
  if (typeof parent === 'string') return spanContextOfTraceparent(parent);
  return undefined;
}

export class OtelTracer implements Tracer {
  constructor(private readonly recorder: SpanRecorder) {}

  startSpan(name: string, options: SpanOptions = {}): OtelSpan {
    const span = new OtelSpan(
      this.recorder.startSpan(
        name,
        options.kind === undefined ? SpanKind.INTERNAL : KINDS[options.kind],
        parentOf(options.parent),
        options.startTime,
      ),
    );
    if (options.attributes) span.setAttributes(options.attributes);
    return span;
  }

  async inSpan<T>(name: string, options: SpanOptions, fn: (span: TraceSpan) => Promise<T>): Promise<T> {
    const span = this.startSpan(name, options);
    try {
      return await fn(span);
    } catch (error) {
      span.fail(error);
      throw error;
    } finally {
      span.end();
    }
  }
}
