// Conformance suite for RateLimiter: the in-process, SQLite and Redis limiters run these same
// tests. A fixed window per key counts every request; the limit is the caller's, per call.
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { RateDecision, RateLimiter } from '../../src/domain/ports.js';
import { sleep } from './support.js';

export interface RateLimiterHarness {
  limiter: RateLimiter;
  close(): Promise<void>;
}

export function rateLimiterContract(
  name: string,
  /** windowSeconds: the window length the limiter must use (60 in production). */
  make: (opts: { windowSeconds: number }) => Promise<RateLimiterHarness>,
): void {
  describe(name, () => {
    const open: RateLimiterHarness[] = [];
    const limiter = async (windowSeconds = 60) => {
      const h = await make({ windowSeconds });
      open.push(h);
      return h.limiter;
    };
    const key = () => `org:${randomUUID()}`;

    afterEach(async () => {
      await Promise.all(open.splice(0).map((h) => h.close()));
    });

    it('allows exactly `limit` requests in a window and counts down what remains', async () => {
      const rl = await limiter();
      const k = key();
      const decisions: RateDecision[] = [];
      for (let i = 0; i < 7; i++) decisions.push(await rl.consume(k, 5));
      expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, true, true, false, false]);
      expect(decisions.map((d) => d.remaining)).toEqual([4, 3, 2, 1, 0, 0, 0]);
      for (const d of decisions) {
        expect(d.limit).toBe(5);
        expect(Number.isInteger(d.resetSeconds)).toBe(true);
        expect(d.resetSeconds).toBeGreaterThanOrEqual(1);
        expect(d.resetSeconds).toBeLessThanOrEqual(60);
      }
    });

    it('is exact under concurrency: 200 at once against 50 allows 50', async () => {
      const rl = await limiter();
      const k = key();
      const decisions = await Promise.all(Array.from({ length: 200 }, () => rl.consume(k, 50)));
      expect(decisions.filter((d) => d.allowed)).toHaveLength(50);
      expect(decisions.filter((d) => d.allowed && d.remaining === 0)).toHaveLength(1);
    });

    it('keeps keys independent', async () => {
      const rl = await limiter();
      const a = key();
      const b = key();
      for (let i = 0; i < 3; i++) await rl.consume(a, 3);
      expect((await rl.consume(a, 3)).allowed).toBe(false);
      const first = await rl.consume(b, 3);
      expect(first).toMatchObject({ allowed: true, remaining: 2 });
    });

    it('applies a limit changed at run time to the current window', async () => {
      const rl = await limiter();
      const k = key();
      for (let i = 0; i < 5; i++) expect((await rl.consume(k, 10)).allowed).toBe(true);
      expect(await rl.consume(k, 3)).toMatchObject({ allowed: false, limit: 3, remaining: 0 });
      expect(await rl.consume(k, 100)).toMatchObject({ allowed: true, limit: 100, remaining: 93 });
    });

    it('opens a fresh window after the old one ends, however many requests were refused', async () => {
      const rl = await limiter(1);
      const k = key();
      await rl.consume(k, 2);
      await rl.consume(k, 2);
      for (let i = 0; i < 20; i++) expect((await rl.consume(k, 2)).allowed).toBe(false);
      const refused = await rl.consume(k, 2);
      expect(refused.resetSeconds).toBe(1);
      await sleep(1100);
      expect(await rl.consume(k, 2)).toMatchObject({ allowed: true, remaining: 1 });
      expect(await rl.consume(k, 2)).toMatchObject({ allowed: true, remaining: 0 });
      expect((await rl.consume(k, 2)).allowed).toBe(false);
    });
  });
}
