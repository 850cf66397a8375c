// The span recorder against the SDK's own tracer: the same steps, taken on each with the same
// sampler, hand the exporter spans that agree in everything it reads (names, kinds, parents,
// flags, times, attributes, limits, status), but for the random ids.
import {
  type Attributes,
  ROOT_CONTEXT,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { emptyResource } from '@opentelemetry/resources';
import {
  AlwaysOnSampler,
  InMemorySpanExporter,
  NodeTracerProvider,
  ParentBasedSampler,
  type ReadableSpan,
  type Sampler,
  SamplingDecision,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-node';
import { describe, expect, it } from 'vitest';
import type { RecorderSpan } from '../../../src/adapters/otel/span-recorder.js';
import { inMemoryRecorder } from '../../helpers/span-recorders.js';

type Start = (
  name: string,
  kind: SpanKind,
  parent: SpanContext | undefined,
  startTime?: number,
) => RecorderSpan;

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const remote = (flags: number): SpanContext => ({
  traceId: TRACE,
  spanId: '00f067aa0ba902b7',
  traceFlags: flags,
  isRemote: true,
});
const T0 = 1_764_547_200_000;

/** Steps covering what docindex's spans do, and the edges the SDK defines. */
function steps(start: Start): void {
  const request = start('request', SpanKind.SERVER, remote(1), T0);
  request.setAttributes({
    'http.request.method': 'POST',
    'docindex.documents': 50,
    'docindex.degraded': false,
    'docindex.document.ids': ['a', 'b'],
    'docindex.ratio': 0.25,
    // Not attribute values: left out, as the SDK leaves them out.
    'docindex.object': { nested: true } as never,
    'docindex.mixed': ['a', 1] as never,
    'docindex.null': null as never,
    'docindex.undefined': undefined,
    '': 'empty key',
  });
  const step = start('step', SpanKind.INTERNAL, request.spanContext(), T0 + 5);
  step.setAttribute('docindex.chunks', 7);
  step.setAttribute('docindex.chunks', 8);
  step.setStatus({ code: SpanStatusCode.ERROR, message: 'url_unreachable' });
  step.end(T0 + 7.5);
  step.setAttribute('docindex.after_end', 1);
  step.end(T0 + 9);
  const many = start('many attributes', SpanKind.INTERNAL, request.spanContext(), T0 + 10);
  const attributes: Attributes = {};
  for (let i = 0; i < 130; i++) attributes[`docindex.a${i}`] = i;
  many.setAttributes(attributes);
  many.setAttribute('docindex.a0', 'replaced: not a new key');
  many.end(T0 + 11);
  // Ended before it started: clamped to no duration.
  start('backwards', SpanKind.INTERNAL, request.spanContext(), T0 + 12).end(T0 + 11);
  start('consumer', SpanKind.CONSUMER, request.spanContext(), T0 + 13).end(T0 + 14);
  // A caller's trace that is not sampled: nothing of it is exported.
  const dropped = start('dropped', SpanKind.SERVER, remote(0), T0);
  dropped.setAttribute('docindex.chunks', 1);
  dropped.end(T0 + 1);
  request.end(T0 + 20);
}

/** What the OTLP exporter reads of a span, with ids named by the span they belong to. */
function readable(spans: ReadableSpan[]) {
  const names = new Map(spans.map((span) => [span.spanContext().spanId, span.name]));
  return spans.map((span) => ({
    name: span.name,
    kind: span.kind,
    trace: span.spanContext().traceId === TRACE ? 'caller' : 'new',
    traceFlags: span.spanContext().traceFlags,
    traceState: span.spanContext().traceState?.serialize(),
    parent: span.parentSpanContext
      ? (names.get(span.parentSpanContext.spanId) ?? `remote ${span.parentSpanContext.spanId}`)
      : null,
    parentIsRemote: span.parentSpanContext?.isRemote,
    startTime: span.startTime,
    endTime: span.endTime,
    duration: span.duration,
    ended: span.ended,
    attributes: span.attributes,
    droppedAttributesCount: span.droppedAttributesCount,
    status: span.status,
    links: span.links,
    events: span.events,
    droppedEventsCount: span.droppedEventsCount,
    droppedLinksCount: span.droppedLinksCount,
    resource: span.resource.attributes,
    scope: span.instrumentationScope.name,
  }));
}

function withSdk(sampler: Sampler, run: (start: Start) => void): ReadableSpan[] {
  const exporter = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({
    resource: emptyResource(),
    sampler,
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer('test');
  run((name, kind, parent, startTime) => {
    const context = parent ? trace.setSpanContext(ROOT_CONTEXT, parent) : ROOT_CONTEXT;
    return tracer.startSpan(name, { kind, ...(startTime === undefined ? {} : { startTime }) }, context);
  });
  return exporter.getFinishedSpans();
}

function withRecorder(sampler: Sampler, run: (start: Start) => void): ReadableSpan[] {
  const exporter = new InMemorySpanExporter();
  const recorder = inMemoryRecorder(exporter, sampler);
  run((name, kind, parent, startTime) => recorder.startSpan(name, kind, parent, startTime));
  return exporter.getFinishedSpans();
}

const parentBased = () => new ParentBasedSampler({ root: new AlwaysOnSampler() });

describe('SpanRecorder', () => {
  it('hands the exporter the spans the SDK’s tracer would', () => {
    const sdk = readable(withSdk(parentBased(), steps));
    const recorded = readable(withRecorder(parentBased(), steps));
    expect(sdk.map((span) => span.name)).toEqual([
      'step',
      'many attributes',
      'backwards',
      'consumer',
      'request',
    ]);
    expect(recorded).toEqual(sdk);
    expect(recorded.find((span) => span.name === 'many attributes')?.droppedAttributesCount).toBe(2);
  });

  it('times a span it starts by the clock, and one given a start by the wall clock at its end', async () => {
    const timed = (start: Start) => {
      const now = start('now', SpanKind.INTERNAL, undefined);
      const given = start('given', SpanKind.INTERNAL, undefined, Date.now() - 40);
      return async () => {
        await new Promise((resolve) => setTimeout(resolve, 25));
        now.end();
        given.end();
      };
    };
    const ms = ([seconds, nanos]: [number, number]) => seconds * 1000 + nanos / 1e6;
    for (const spans of [
      await (async () => {
        let finish: () => Promise<void> = async () => {};
        const spans = withSdk(parentBased(), (start) => {
          finish = timed(start);
        });
        await finish();
        return spans;
      })(),
      await (async () => {
        let finish: () => Promise<void> = async () => {};
        const spans = withRecorder(parentBased(), (start) => {
          finish = timed(start);
        });
        await finish();
        return spans;
      })(),
    ]) {
      const now = spans.find((span) => span.name === 'now')!;
      const given = spans.find((span) => span.name === 'given')!;
      expect(ms(now.duration)).toBeGreaterThanOrEqual(20);
      expect(ms(now.duration)).toBeLessThan(1_000);
      expect(ms(given.duration)).toBeGreaterThanOrEqual(60);
      expect(Math.abs(ms(now.endTime) - Date.now())).toBeLessThan(1_000);
      expect(now.spanContext().traceId).not.toBe(given.spanContext().traceId);
    }
  });

  it('records but does not export a span its sampler records without sampling, as the SDK does', () => {
    const recordOnly: Sampler = { shouldSample: () => ({ decision: SamplingDecision.RECORD }) };
    let recording: boolean[] = [];
    const run = (start: Start) => {
      const span = start('recorded', SpanKind.INTERNAL, undefined, T0);
      recording = [span.isRecording()];
      span.end(T0 + 1);
      recording.push(span.isRecording());
    };
    expect(withSdk(recordOnly, run)).toEqual([]);
    const sdkRecording = recording;
    expect(withRecorder(recordOnly, run)).toEqual([]);
    expect(recording).toEqual(sdkRecording);
    expect(recording).toEqual([true, false]);
  });
});
