// A span recorder whose spans go, once ended, straight to an in-memory exporter (the SDK's simple
// processor), with the default sampler: what the tracer tests read spans from.
import { emptyResource } from '@opentelemetry/resources';
import {
  AlwaysOnSampler,
  type InMemorySpanExporter,
  ParentBasedSampler,
  type Sampler,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-node';
import { SpanRecorder } from '../../src/adapters/otel/span-recorder.js';

export function inMemoryRecorder(
  exporter: InMemorySpanExporter,
  sampler: Sampler = new ParentBasedSampler({ root: new AlwaysOnSampler() }),
): SpanRecorder {
  return new SpanRecorder({
    resource: emptyResource(),
    scope: { name: 'test' },
    sampler,
    processor: new SimpleSpanProcessor(exporter),
  });
}
