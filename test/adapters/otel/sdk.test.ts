// The SDK as start/ runs it, against a real OTLP/HTTP receiver on 127.0.0.1: spans go out in
// batches on the configured schedule (OTEL_BSP_*), not only when the process shuts down, and a
// started SDK installs no context manager (no AsyncLocalStorage hooks on the process's promises).
import { context, trace } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { type OtelTracing, startOtelTracing } from '../../../src/adapters/otel/sdk.js';
import { OtlpReceiver } from '../../helpers/otlp-receiver.js';

const receivers: OtlpReceiver[] = [];
const sdks: OtelTracing[] = [];
afterEach(async () => {
  for (const sdk of sdks.splice(0)) await sdk.shutdown();
  for (const receiver of receivers.splice(0)) await receiver.stop();
});

async function started(batch: Partial<Parameters<typeof startOtelTracing>[0]['batch']>) {
  const receiver = await new OtlpReceiver().start();
  receivers.push(receiver);
  const sdk = startOtelTracing({
    serviceName: 'docindex-test',
    serviceVersion: '0.0.0',
    tracesUrl: `${receiver.url}/v1/traces`,
    sampler: 'parentbased_always_on',
    samplerArg: 1,
    role: 'serve',
    batch: {
      scheduledDelayMillis: 5_000,
      exportTimeoutMillis: 30_000,
      maxQueueSize: 8_192,
      maxExportBatchSize: 1_024,
      ...batch,
    },
  });
  sdks.push(sdk);
  return { receiver, sdk };
}

async function until(probe: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!probe()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

describe('startOtelTracing', () => {
  it('sends spans on the batch schedule it is given', async () => {
    const { receiver, sdk } = await started({ scheduledDelayMillis: 100 });
    await sdk.tracer.inSpan('docindex.job process', {}, async (job) => {
      sdk.tracer.startSpan('docindex.chunk', { parent: job }).end();
    });
    expect(await until(() => receiver.spans.length === 2, 3_000)).toBe(true);
    const chunk = receiver.spans.find((s) => s.name === 'docindex.chunk');
    const job = receiver.spans.find((s) => s.name === 'docindex.job process');
    expect(chunk?.parentSpanId).toBe(job?.spanId);
  });

  it('sends a full batch at once, before the scheduled delay', async () => {
    const { receiver, sdk } = await started({ scheduledDelayMillis: 60_000, maxExportBatchSize: 3 });
    for (let i = 0; i < 3; i++) sdk.tracer.startSpan(`step ${i}`).end();
    expect(await until(() => receiver.spans.length === 3, 3_000)).toBe(true);
  });

  it('installs no context manager', async () => {
    const { sdk } = await started({});
    let ambient: unknown = 'unset';
    await sdk.tracer.inSpan('step', {}, async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      ambient = trace.getSpan(context.active());
    });
    expect(ambient).toBeUndefined();
  });
});
