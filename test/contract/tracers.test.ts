// Runs the Tracer contract against the no-op tracer and the OpenTelemetry one (the real SDK, with
// spans kept in memory).
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { afterAll } from 'vitest';
import { OtelTracer } from '../../src/adapters/otel/otel-tracer.js';
import { noopTracer } from '../../src/domain/ports.js';
import { tracerContract } from './tracer.contract.js';

tracerContract('noopTracer', noopTracer);

const provider = new NodeTracerProvider({
  spanProcessors: [new SimpleSpanProcessor(new InMemorySpanExporter())],
});
provider.register();
afterAll(() => provider.shutdown());
tracerContract('OtelTracer (OpenTelemetry SDK)', new OtelTracer(provider.getTracer('contract')));
