// Runs the Tracer contract against the no-op tracer and the OpenTelemetry one (the real SDK, with
// spans kept in memory).
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { afterAll, expect, it } from 'vitest';
import { OtelTracer } from '../../src/adapters/otel/otel-tracer.js';
import { noopTracer } from '../../src/domain/ports.js';
import { tracerContract } from './tracer.contract.js';

tracerContract('noopTracer', noopTracer);

it('builds no attributes while tracing is off', async () => {
  const never = () => {
    throw new Error('attributes built with tracing off');
  };
  await noopTracer.inSpan('step', { attributes: never }, async (span) => span.setAttributes(never));
  const span = noopTracer.startSpan('request', { attributes: never });
  span.setAttributes(never);
  expect(span.traceparent()).toBeNull();
  span.end();
});

const provider = new NodeTracerProvider({
  spanProcessors: [new SimpleSpanProcessor(new InMemorySpanExporter())],
});
afterAll(() => provider.shutdown());
tracerContract('OtelTracer (OpenTelemetry SDK)', new OtelTracer(provider.getTracer('contract')));
