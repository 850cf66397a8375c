// Records spans for the OpenTelemetry SDK's span processors (the batch processor, then the OTLP
// exporter) without the SDK's tracer. A recorded span is one small object holding what the
// exporter reads; its times stay milliseconds until a processor asks for them. The SDK's span
// also keeps limits, events, links and end-of-span metrics that no docindex span uses, and in a
// busy server it cost a traced ingest several times what this one does (bench/RESULTS.md,
// "Where traced ingest spends its extra CPU"). Sampling, ids, batching and export stay the SDK's.
import {
  type Attributes,
  type AttributeValue,
  type Context,
  type HrTime,
  type Link,
  ROOT_CONTEXT,
  type SpanContext,
  SpanKind,
  type SpanStatus,
  SpanStatusCode,
  TraceFlags,
  trace,
} from '@opentelemetry/api';
import {
  hrTimeDuration,
  type InstrumentationScope,
  isAttributeValue,
  millisToHrTime,
} from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import {
  type IdGenerator,
  RandomIdGenerator,
  type ReadableSpan,
  type Sampler,
  SamplingDecision,
  type SpanProcessor,
  type TimedEvent,
} from '@opentelemetry/sdk-trace-node';

/** New attribute keys a span takes at most (OpenTelemetry's default limit); later ones are counted as dropped. */
export const SPAN_ATTRIBUTE_COUNT_LIMIT = 128;

/** What a traced step does with its span: a recorded one, or the API's non-recording span. */
export interface RecorderSpan {
  spanContext(): SpanContext;
  isRecording(): boolean;
  setAttributes(attributes: Attributes): unknown;
  setAttribute(key: string, value: AttributeValue): unknown;
  setStatus(status: SpanStatus): unknown;
  /** `endTime`: epoch milliseconds; now when absent. */
  end(endTime?: number): void;
}

/**
 * The processor is told of ended spans only: the SDK's batch and simple processors do nothing when
 * a span starts or is ending, and those hooks take the SDK's own span class.
 */
export type EndedSpanProcessor = Pick<SpanProcessor, 'onEnd' | 'forceFlush' | 'shutdown'>;

export interface SpanRecorderOptions {
  resource: Resource;
  scope: InstrumentationScope;
  sampler: Sampler;
  processor: EndedSpanProcessor;
  idGenerator?: IdGenerator;
}

const UNSET: SpanStatus = Object.freeze({ code: SpanStatusCode.UNSET });
const NO_LINKS: Link[] = [];
const NO_EVENTS: TimedEvent[] = [];

class RecordedSpan implements ReadableSpan, RecorderSpan {
  readonly attributes: Attributes = {};
  status: SpanStatus = UNSET;
  droppedAttributesCount = 0;
  private attributeCount = 0;
  private endMs = -1;
  /** The performance clock at the start: a span ended without a time gets start + elapsed. */
  private readonly startClock: number;

  constructor(
    private readonly recorder: SpanRecorder,
    readonly name: string,
    readonly kind: SpanKind,
    private readonly context: SpanContext,
    readonly parentSpanContext: SpanContext | undefined,
    /** Epoch milliseconds. */
    private readonly startMs: number,
    private readonly startGiven: boolean,
  ) {
    this.startClock = performance.now();
  }

  spanContext(): SpanContext {
    return this.context;
  }

  isRecording(): boolean {
    return this.endMs === -1;
  }

  setAttribute(key: string, value: AttributeValue): this {
    if (this.endMs !== -1 || value == null || key.length === 0 || !isAttributeValue(value)) return this;
    if (!Object.hasOwn(this.attributes, key)) {
      if (this.attributeCount >= SPAN_ATTRIBUTE_COUNT_LIMIT) {
        this.droppedAttributesCount++;
        return this;
      }
      this.attributeCount++;
    }
    this.attributes[key] = value;
    return this;
  }

  setAttributes(attributes: Attributes): this {
    for (const key in attributes) {
      const value = attributes[key];
      if (value !== undefined) this.setAttribute(key, value);
    }
    return this;
  }

  setStatus(status: SpanStatus): this {
    if (this.endMs === -1) this.status = status;
    return this;
  }

  end(endTime?: number): void {
    if (this.endMs !== -1) return;
    // As the SDK does: a span started now is timed by the performance clock; one given its start
    // (a queue wait, from when the job was queued) ends at the wall clock.
    const end =
      endTime ?? (this.startGiven ? Date.now() : this.startMs + (performance.now() - this.startClock));
    this.endMs = Math.max(end, this.startMs);
    this.recorder.ended(this);
  }

  get startTime(): HrTime {
    return millisToHrTime(this.startMs);
  }

  get endTime(): HrTime {
    return this.endMs === -1 ? [0, 0] : millisToHrTime(this.endMs);
  }

  get duration(): HrTime {
    return this.endMs === -1 ? [-1, -1] : hrTimeDuration(this.startTime, this.endTime);
  }

  get ended(): boolean {
    return this.endMs !== -1;
  }

  get resource(): Resource {
    return this.recorder.resource;
  }

  get instrumentationScope(): InstrumentationScope {
    return this.recorder.scope;
  }

  get links(): Link[] {
    return NO_LINKS;
  }

  get events(): TimedEvent[] {
    return NO_EVENTS;
  }

  get droppedEventsCount(): number {
    return 0;
  }

  get droppedLinksCount(): number {
    return 0;
  }
}

export class SpanRecorder {
  readonly resource: Resource;
  readonly scope: InstrumentationScope;
  private readonly sampler: Sampler;
  private readonly processor: EndedSpanProcessor;
  private readonly ids: IdGenerator;

  constructor(options: SpanRecorderOptions) {
    this.resource = options.resource;
    this.scope = options.scope;
    this.sampler = options.sampler;
    this.processor = options.processor;
    this.ids = options.idGenerator ?? new RandomIdGenerator();
  }

  /**
   * A span under `parent` (a new trace without one), as the sampler decides: recorded, or the
   * API's non-recording span that still carries the trace on. `startTime`: epoch milliseconds.
   */
  startSpan(name: string, kind: SpanKind, parent: SpanContext | undefined, startTime?: number): RecorderSpan {
    const valid = parent !== undefined && trace.isSpanContextValid(parent);
    const traceId = valid ? parent.traceId : this.ids.generateTraceId();
    const context: Context = valid ? trace.setSpanContext(ROOT_CONTEXT, parent) : ROOT_CONTEXT;
    const sampled = this.sampler.shouldSample(context, traceId, name, kind, {}, NO_LINKS);
    const traceState = sampled.traceState ?? (valid ? parent.traceState : undefined);
    const spanContext: SpanContext = {
      traceId,
      spanId: this.ids.generateSpanId(),
      traceFlags:
        sampled.decision === SamplingDecision.RECORD_AND_SAMPLED ? TraceFlags.SAMPLED : TraceFlags.NONE,
      ...(traceState === undefined ? {} : { traceState }),
    };
    if (sampled.decision === SamplingDecision.NOT_RECORD) return trace.wrapSpanContext(spanContext);
    const span = new RecordedSpan(
      this,
      name,
      kind,
      spanContext,
      valid ? parent : undefined,
      startTime ?? Date.now(),
      startTime !== undefined,
    );
    if (sampled.attributes) span.setAttributes(sampled.attributes);
    return span;
  }

  /** A recorded span ended: handed to the processor, which sends it on if it is sampled. */
  ended(span: RecordedSpan): void {
    this.processor.onEnd(span);
  }

  /** Sends what the processor holds. */
  forceFlush(): Promise<void> {
    return this.processor.forceFlush();
  }

  /** Sends what the processor holds, then stops it. */
  shutdown(): Promise<void> {
    return this.processor.shutdown();
  }
}
