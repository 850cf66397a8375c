// In-process workers give way to API bursts: below the threshold documents run side by side;
// at or above it they run one at a time, started at least the floor spacing apart (so the queue
// still drains); a document waiting for its turn can be abandoned; and when the burst ends the
// waiting documents go at once. The clock is a counter the fake sleep advances: no real waiting.
import { describe, expect, it } from 'vitest';
import type { JobContext } from '../../src/domain/ports.js';
import { RequestRate, yieldToApi } from '../../src/pipeline/yield-to-api.js';

const BUSY = 100;
const SPACING = 50;

function harness() {
  let clock = 10_000;
  const sleepers = new Set<{ until: number; resolve: () => void }>();
  const rate = new RequestRate(250);
  const starts: { id: string; at: number; alongside: number }[] = [];
  let running = 0;
  const release = new Map<string, () => void>();
  const handler = yieldToApi(
    async (job) => {
      starts.push({ id: job.documentId, at: clock, alongside: running });
      running++;
      await new Promise<void>((resolve) => release.set(job.documentId, resolve));
      running--;
    },
    rate,
    {
      busyRequestsPerSecond: BUSY,
      floorSpacingMs: SPACING,
      now: () => clock,
      sleep: (ms, signal) =>
        new Promise<void>((resolve, reject) => {
          signal.throwIfAborted();
          const sleeper = { until: clock + ms, resolve };
          sleepers.add(sleeper);
          signal.addEventListener('abort', () => {
            sleepers.delete(sleeper);
            reject(signal.reason);
          });
        }),
    },
  );
  const job = (id: string, signal = new AbortController().signal): JobContext => ({
    documentId: id,
    orgId: 'org',
    attempt: 1,
    maxAttempts: 5,
    signal,
  });
  /** `n` requests spread over the last 250 ms: n × 4 per second. */
  const traffic = (n: number) => {
    for (let i = 0; i < n; i++) rate.record(clock);
  };
  const finish = async (id: string) => {
    release.get(id)?.();
    await new Promise((resolve) => setImmediate(resolve));
  };
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  /** Moves the clock on in 5 ms steps, waking the sleepers that are due. */
  const advance = async (ms: number, duringEachStep: () => void = () => {}) => {
    for (let step = 0; step < ms; step += 5) {
      clock += 5;
      duringEachStep();
      for (const sleeper of [...sleepers]) {
        if (sleeper.until > clock) continue;
        sleepers.delete(sleeper);
        sleeper.resolve();
      }
      await settle();
    }
  };
  return { job, handler, starts, traffic, finish, settle, advance };
}

describe('RequestRate', () => {
  it('estimates requests per second over the last window', () => {
    const rate = new RequestRate(250);
    for (let i = 0; i < 50; i++) rate.record(1_000);
    expect(rate.perSecond(1_000)).toBe(200);
    // Half a window later, half of the previous window still counts.
    expect(rate.perSecond(1_375)).toBe(100);
    expect(rate.perSecond(2_000)).toBe(0);
  });
});

describe('yieldToApi', () => {
  it('runs documents side by side while the API is quiet', async () => {
    const h = harness();
    h.traffic(5); // 20 requests/s: a client polling
    const runs = ['a', 'b', 'c'].map((id) => h.handler(h.job(id)));
    await h.settle();
    expect(h.starts.map((s) => s.alongside)).toEqual([0, 1, 2]);
    for (const id of ['a', 'b', 'c']) await h.finish(id);
    await Promise.all(runs);
  });

  it('under a burst, runs one document at a time, at least the floor spacing apart', async () => {
    const h = harness();
    const burst = () => h.traffic(2); // 2 requests per 5 ms: 400 requests/s
    h.traffic(100);
    const runs = ['a', 'b', 'c'].map((id) => h.handler(h.job(id)));
    await h.advance(100, burst);
    expect(h.starts.map((s) => s.id)).toEqual(['a']);
    await h.finish('a');
    await h.advance(100, burst);
    expect(h.starts.map((s) => s.id)).toEqual(['a', 'b']);
    await h.finish('b');
    await h.advance(100, burst);
    await h.finish('c');
    await Promise.all(runs);
    expect(h.starts.map((s) => s.id)).toEqual(['a', 'b', 'c']);
    expect(h.starts.map((s) => s.alongside)).toEqual([0, 0, 0]);
    for (let i = 1; i < h.starts.length; i++) {
      expect(h.starts[i]!.at - h.starts[i - 1]!.at).toBeGreaterThanOrEqual(SPACING);
    }
  });

  it('lets the waiting documents go together once the burst is over', async () => {
    const h = harness();
    h.traffic(100);
    const runs = ['a', 'b', 'c'].map((id) => h.handler(h.job(id)));
    await h.advance(100, () => h.traffic(2));
    expect(h.starts).toHaveLength(1);
    // No more requests: within two windows the rate is zero and both waiting documents start,
    // while the first is still running.
    await h.advance(600);
    expect(h.starts.map((s) => s.id)).toEqual(['a', 'b', 'c']);
    expect(h.starts[2]!.alongside).toBe(2);
    for (const id of ['a', 'b', 'c']) await h.finish(id);
    await Promise.all(runs);
  });

  it('a document abandoned while it waits (shutdown, lost lease) rejects without running', async () => {
    const h = harness();
    h.traffic(100);
    const first = h.handler(h.job('a'));
    const controller = new AbortController();
    const reason = new Error('job lease lost');
    const waiting = h.handler(h.job('b', controller.signal));
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    expect(h.starts.map((s) => s.id)).toEqual(['a']);
    await h.finish('a');
    await first;
  });
});
