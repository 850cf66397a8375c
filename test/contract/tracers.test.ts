// Runs the Tracer contract against the no-op tracer and the OpenTelemetry one (the SDK's processor,
// with spans kept in memory).
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-node';
import { afterAll, expect, it } from 'vitest';
import { OtelTracer } from '../../src/adapters/otel/otel-tracer.js';
import { noopTracer } from '../../src/domain/ports.js';
import { inMemoryRecorder } from '../helpers/span-recorders.js';
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

const recorder = inMemoryRecorder(new InMemorySpanExporter());
afterAll(() => recorder.shutdown());
tracerContract('OtelTracer (OpenTelemetry)', new OtelTracer(recorder));
