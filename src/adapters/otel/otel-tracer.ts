// The Tracer port on the OpenTelemetry API. The SDK behind it (sdk.ts) is started by start/ only
// when an OTLP endpoint is configured; this module is loaded only then too. Parents are passed
// explicitly (a span, or a traceparent from a header or a job): no context manager is installed,
// so no AsyncLocalStorage hooks run on the process's promises.
import {
  type Tracer as ApiTracer,
  type Attributes,
  type Context,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import type { LazyTraceAttributes, SpanOptions, TraceParent, Tracer, TraceSpan } from '../../domain/ports.js';

/** A W3C traceparent: version 00, a 32-hex trace id, a 16-hex span id, the flags. */
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

const KINDS = { server: SpanKind.SERVER, consumer: SpanKind.CONSUMER } as const;

class OtelSpan implements TraceSpan {
  constructor(readonly span: Span) {}

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

/** The context a traceparent names (remote), or null when it is absent or malformed. */
export function contextOfTraceparent(traceparent: string | null | undefined, base: Context): Context | null {
  if (!traceparent) return null;
  const match = TRACEPARENT.exec(traceparent.trim().toLowerCase());
  if (!match) return null;
  const [, traceId, spanId, flags] = match as unknown as [string, string, string, string];
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return null;
  return trace.setSpanContext(base, {
    traceId,
    spanId,
    traceFlags: Number.parseInt(flags, 16) & 1,
    isRemote: true,
  });
}

/** The context a span's parent gives: a span of this tracer, a traceparent, or none. */
function contextOf(parent: TraceParent): Context {
  if (parent instanceof OtelSpan) return trace.setSpan(ROOT_CONTEXT, parent.span);
  if (typeof parent === 'string') return contextOfTraceparent(parent, ROOT_CONTEXT) ?? ROOT_CONTEXT;
  return ROOT_CONTEXT;
}

export class OtelTracer implements Tracer {
  constructor(private readonly tracer: ApiTracer) {}

  startSpan(name: string, options: SpanOptions = {}): OtelSpan {
    const span = new OtelSpan(
      this.tracer.startSpan(
        name,
        {
          kind: options.kind === undefined ? SpanKind.INTERNAL : KINDS[options.kind],
          // The SDK reads an absent start time as now.
          startTime: options.startTime,
        },
        contextOf(options.parent),
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
