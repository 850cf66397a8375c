// Conformance suite for IdempotencyStore: every adapter (SQLite, PostgreSQL) runs these same tests.
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { IdempotencyStore } from '../../src/domain/ports.js';

export interface IdempotencyStoreHarness {
  store: IdempotencyStore;
  close(): Promise<void>;
}

const LIMITS = { ttlMs: 24 * 3600_000, staleInFlightMs: 600_000 };
const T0 = Date.parse('2026-01-01T00:00:00.000Z');

export function idempotencyStoreContract(name: string, make: () => Promise<IdempotencyStoreHarness>): void {
  describe(name, () => {
    let h: IdempotencyStoreHarness;
    let store: IdempotencyStore;
    const org = `org_${randomUUID()}`;
    const claim = (key: string, fingerprint: string, at: number, orgId = org) =>
      store.claim({ orgId, key, fingerprint, createdAt: new Date(at) }, LIMITS);

    beforeEach(async () => {
      h = await make();
      store = h.store;
    });
    afterEach(async () => {
      await h.close();
    });

    it('the first claim owns the key; later ones see its record, then its stored response', async () => {
      expect(await claim('k1', 'fp', T0)).toBeNull();
      expect(await claim('k1', 'fp', T0 + 1)).toMatchObject({
        state: 'in_flight',
        fingerprint: 'fp',
        body: null,
      });
      await store.complete(org, 'k1', 202, '{"ok":true}');
      expect(await claim('k1', 'other', T0 + 2)).toMatchObject({
        state: 'done',
        fingerprint: 'fp',
        status: 202,
        body: '{"ok":true}',
      });
    });

    it('exactly one of many concurrent claims wins', async () => {
      const results = await Promise.all(Array.from({ length: 20 }, () => claim('race', 'fp', T0)));
      expect(results.filter((r) => r === null)).toHaveLength(1);
    });

    it('keys are per org', async () => {
      expect(await claim('shared', 'fp', T0)).toBeNull();
      expect(await claim('shared', 'fp', T0, `org_${randomUUID()}`)).toBeNull();
    });

    it('purges every record of one org, in flight or done, and nothing of another org', async () => {
      const other = `org_${randomUUID()}`;
      expect(await claim('done', 'fp', T0)).toBeNull();
      await store.complete(org, 'done', 202, '{}');
      expect(await claim('flying', 'fp', T0)).toBeNull();
      expect(await claim('done', 'fp', T0, other)).toBeNull();
      expect(await store.purgeOrg(org)).toBe(2);
      expect(await claim('done', 'fp2', T0 + 1)).toBeNull();
      expect(await claim('flying', 'fp2', T0 + 1)).toBeNull();
      expect(await claim('done', 'fp2', T0 + 1, other)).toMatchObject({ fingerprint: 'fp' });
    });

    it('release frees an in-flight key but never a completed one', async () => {
      expect(await claim('rel', 'fp', T0)).toBeNull();
      await store.release(org, 'rel');
      expect(await claim('rel', 'fp2', T0 + 1)).toBeNull();
      await store.complete(org, 'rel', 202, '{}');
      await store.release(org, 'rel');
      expect(await claim('rel', 'fp3', T0 + 2)).toMatchObject({ state: 'done', fingerprint: 'fp2' });
    });

    it('expired records and abandoned in-flight ones are replaced', async () => {
      expect(await claim('old', 'fp', T0)).toBeNull();
      await store.complete(org, 'old', 202, '{}');
      expect(await claim('old', 'fp', T0 + LIMITS.ttlMs - 1)).not.toBeNull();
      expect(await claim('old', 'new', T0 + LIMITS.ttlMs + 1)).toBeNull();

      expect(await claim('stuck', 'fp', T0)).toBeNull();
      expect(await claim('stuck', 'fp', T0 + LIMITS.staleInFlightMs - 1)).toMatchObject({
        state: 'in_flight',
      });
      expect(await claim('stuck', 'fp', T0 + LIMITS.staleInFlightMs + 1)).toBeNull();
    });
  });
}
