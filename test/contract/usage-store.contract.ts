// Conformance suite for UsageStore: every adapter (SQLite, PostgreSQL) runs these same tests.
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { UsageStore } from '../../src/domain/ports.js';

export interface UsageStoreHarness {
  store: UsageStore;
  close(): Promise<void>;
}

export function usageStoreContract(name: string, make: () => Promise<UsageStoreHarness>): void {
  describe(name, () => {
    let h: UsageStoreHarness;
    let store: UsageStore;
    const org = () => `org_${randomUUID()}`;

    beforeEach(async () => {
      h = await make();
      store = h.store;
    });
    afterEach(async () => {
      await h.close();
    });

    it('counts per day and reports an inclusive range', async () => {
      const o = org();
      for (let i = 0; i < 3; i++) await store.increment(o, '2025-03-01');
      await store.increment(o, '2025-03-02');
      for (let i = 0; i < 2; i++) await store.increment(o, '2025-03-31');
      await store.increment(o, '2025-02-28');
      await store.increment(o, '2025-04-01');

      const counts = await store.countsBetween(o, '2025-03-01', '2025-03-31');
      expect(Object.fromEntries(counts)).toEqual({ '2025-03-01': 3, '2025-03-02': 1, '2025-03-31': 2 });
      expect((await store.countsBetween(o, '2025-03-02', '2025-03-02')).get('2025-03-02')).toBe(1);
    });

    it('keeps orgs apart', async () => {
      const a = org();
      const b = org();
      await store.increment(a, '2025-03-01');
      await store.increment(a, '2025-03-01');
      await store.increment(b, '2025-03-01');
      expect((await store.countsBetween(a, '2025-03-01', '2025-03-01')).get('2025-03-01')).toBe(2);
      expect((await store.countsBetween(b, '2025-03-01', '2025-03-01')).get('2025-03-01')).toBe(1);
      const none = await store.countsBetween(org(), '2025-01-01', '2025-12-31');
      expect([...none.values()].reduce((s, n) => s + n, 0)).toBe(0);
    });

    it('purges one org’s counts and nothing of another org', async () => {
      const a = org();
      const b = org();
      await store.increment(a, '2025-03-01');
      await store.increment(a, '2025-03-01');
      await store.increment(a, '2025-03-02');
      await store.increment(b, '2025-03-01');
      expect(await store.purgeOrg(a)).toBe(2);
      expect((await store.countsBetween(a, '2025-01-01', '2025-12-31')).size).toBe(0);
      expect((await store.countsBetween(b, '2025-03-01', '2025-03-01')).get('2025-03-01')).toBe(1);
      expect(await store.purgeOrg(a)).toBe(0);
    });

    it('counts a bucket beside the org total, and sums the buckets asked for', async () => {
      const o = org();
      await store.increment(o, '2025-03-01', 'red');
      await store.increment(o, '2025-03-01', 'red');
      await store.increment(o, '2025-03-01', '(several)');
      await store.increment(o, '2025-03-02', 'blue');
      await store.increment(o, '2025-03-02');
      await store.increment(o, '2025-04-01', 'red');
      await store.increment(org(), '2025-03-01', 'red');
      const from = '2025-03-01';
      const to = '2025-03-31';
      expect(Object.fromEntries(await store.countsBetween(o, from, to))).toEqual({
        '2025-03-01': 3,
        '2025-03-02': 2,
      });
      expect(Object.fromEntries(await store.countsBetween(o, from, to, ['red']))).toEqual({
        '2025-03-01': 2,
      });
      expect(Object.fromEntries(await store.countsBetween(o, from, to, ['red', 'blue']))).toEqual({
        '2025-03-01': 2,
        '2025-03-02': 1,
      });
      expect((await store.countsBetween(o, from, to, [])).size).toBe(0);
      expect(Object.fromEntries(await store.bucketTotals(o, from, to))).toEqual({
        '(several)': 1,
        blue: 1,
        red: 2,
      });
      expect(await store.purgeOrg(o)).toBe(3);
      expect((await store.bucketTotals(o, '2025-01-01', '2025-12-31')).size).toBe(0);
    });

    it('loses no increment under concurrency', async () => {
      const o = org();
      await Promise.all(
        Array.from({ length: 200 }, (_, i) => store.increment(o, '2025-05-05', i % 2 === 0 ? 'red' : null)),
      );
      expect((await store.countsBetween(o, '2025-05-05', '2025-05-05')).get('2025-05-05')).toBe(200);
      expect((await store.bucketTotals(o, '2025-05-05', '2025-05-05')).get('red')).toBe(100);
    });
  });
}
