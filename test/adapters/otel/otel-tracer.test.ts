// The Tracer port on OpenTelemetry, against the real SDK with an in-memory exporter: spans nest
// as their parents are passed (across awaits, with no context manager installed), a traceparent
// is continued and handed on, a malformed one starts a new trace instead of failing, and a failed
// span records the error's code, never its message.
import { context, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { OtelTracer } from '../../../src/adapters/otel/otel-tracer.js';

const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const tracer = new OtelTracer(provider.getTracer('test'));

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';

beforeEach(() => exporter.reset());
afterAll(async () => {
  await provider.shutdown();
  context.disable();
});

const finished = (name: string) => {
  const span = exporter.getFinishedSpans().find((s) => s.name === name);
  expect(span, name).toBeDefined();
  return span!;
};

describe('OtelTracer', () => {
  it('nests spans as their parents are passed, across awaits, and hands one on as a traceparent', async () => {
    let handedOn: string | null = null;
    let ambient: unknown = 'unset';
    await tracer.inSpan('outer', { parent: `00-${TRACE}-${PARENT}-01`, kind: 'server' }, async (outer) => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      ambient = trace.getSpan(context.active());
      await tracer.inSpan(
        'inner',
        { parent: outer, attributes: () => ({ 'docindex.chunks': 3 }) },
        async (inner) => {
          handedOn = inner.traceparent();
        },
      );
      tracer.startSpan('sibling', { parent: outer }).end();
    });
    const outer = finished('outer');
    const inner = finished('inner');
    expect(outer.spanContext().traceId).toBe(TRACE);
    expect(outer.parentSpanContext?.spanId).toBe(PARENT);
    expect(inner.parentSpanContext?.spanId).toBe(outer.spanContext().spanId);
    expect(finished('sibling').parentSpanContext?.spanId).toBe(outer.spanContext().spanId);
    expect(inner.attributes['docindex.chunks']).toBe(3);
    expect(handedOn).toBe(`00-${TRACE}-${inner.spanContext().spanId}-01`);
    // No context manager: the OpenTelemetry API saw no current span, even inside a step.
    expect(ambient).toBeUndefined();
    tracer.startSpan('unparented').end();
    expect(finished('unparented').parentSpanContext).toBeUndefined();
  });

  it('starts a new trace for a malformed or all-zero traceparent', async () => {
    for (const parent of ['garbage', `00-${'0'.repeat(32)}-${PARENT}-01`, `00-${TRACE}-${PARENT}`]) {
      exporter.reset();
      await tracer.inSpan('request', { parent }, async () => {});
      const span = finished('request');
      expect(span.parentSpanContext).toBeUndefined();
      expect(span.spanContext().traceId).not.toBe(TRACE);
    }
  });

  it('marks a failed span with the error’s code or class, never its message', async () => {
    const error = Object.assign(new Error('could not fetch https://example.com/secret?sig=abc'), {
      code: 'url_unreachable',
    });
    await expect(tracer.inSpan('download', {}, async () => Promise.reject(error))).rejects.toBe(error);
    await expect(
      tracer.inSpan('plain', {}, async () => Promise.reject(new TypeError('the text'))),
    ).rejects.toThrow();
    const download = finished('download');
    expect(download.status).toEqual({ code: 2, message: 'url_unreachable' });
    expect(download.attributes['error.type']).toBe('url_unreachable');
    expect(download.events).toEqual([]);
    expect(finished('plain').attributes['error.type']).toBe('TypeError');
    expect(JSON.stringify(exporter.getFinishedSpans().map((s) => [s.status, s.attributes]))).not.toMatch(
      /secret|the text/,
    );
  });

  it('hangs a step under a span started elsewhere', async () => {
    const span = tracer.startSpan('request', { startTime: Date.now() - 50 });
    await tracer.inSpan('handler', { parent: span }, async () => {});
    span.end();
    expect(finished('handler').parentSpanContext?.spanId).toBe(finished('request').spanContext().spanId);
  });

  it('builds no attributes for a span the sampler drops, and records them for one it keeps', async () => {
    let built = 0;
    const attributes = () => {
      built++;
      return { 'docindex.chunks': 1 };
    };
    // The default sampler follows the parent: flags 00 say the caller's trace is not sampled.
    await tracer.inSpan('dropped', { parent: `00-${TRACE}-${PARENT}-00`, attributes }, async (span) => {
      span.setAttributes(attributes);
    });
    expect(built).toBe(0);
    expect(exporter.getFinishedSpans()).toEqual([]);
    await tracer.inSpan('kept', { parent: `00-${TRACE}-${PARENT}-01`, attributes }, async (span) => {
      span.setAttributes(() => ({ 'docindex.tokens': 7 }));
    });
    expect(built).toBe(1);
    expect(finished('kept').attributes).toMatchObject({ 'docindex.chunks': 1, 'docindex.tokens': 7 });
  });
});
