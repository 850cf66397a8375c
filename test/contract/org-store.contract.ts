// Conformance suite for OrgStore: every adapter (SQLite, PostgreSQL) runs these same tests.
import { createHash, randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { OrgStore } from '../../src/domain/ports.js';
import type { ApiKeyRecord, Org } from '../../src/domain/types.js';

export interface OrgStoreHarness {
  store: OrgStore;
  close(): Promise<void>;
}

const at = (iso: string) => new Date(iso);

function newOrg(over: Partial<Org> = {}): Org {
  return {
    id: `org_${randomUUID()}`,
    name: 'Acme',
    rateLimitRpm: 600,
    createdAt: at('2025-01-02T03:04:05.678Z'),
    ...over,
  };
}

function newKey(orgId: string, over: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  const secret = `dix_${randomUUID()}`;
  return {
    id: `key_${randomUUID()}`,
    orgId,
    hash: createHash('sha256').update(secret).digest('hex'),
    prefix: secret.slice(0, 8),
    partitions: null,
    principals: null,
    scopes: ['ingest', 'query', 'read', 'write', 'webhooks'],
    expiresAt: null,
    createdAt: at('2025-01-03T00:00:00.001Z'),
    revokedAt: null,
    ...over,
  };
}

export function orgStoreContract(name: string, make: () => Promise<OrgStoreHarness>): void {
  describe(name, () => {
    let h: OrgStoreHarness;
    let store: OrgStore;

    beforeEach(async () => {
      h = await make();
      store = h.store;
    });
    afterEach(async () => {
      await h.close();
    });

    it('reads back a created org with every field, and counts orgs', async () => {
      expect(await store.countOrgs()).toBe(0);
      const a = newOrg({ name: 'Ünïcode 🚀 org' });
      const b = newOrg({ rateLimitRpm: 60 });
      await store.createOrg(a);
      await store.createOrg(b);
      expect(await store.getOrg(a.id)).toEqual(a);
      expect(await store.getOrg(b.id)).toEqual(b);
      expect(await store.countOrgs()).toBe(2);
      expect(await store.getOrg(`org_${randomUUID()}`)).toBeNull();
    });

    it('refuses a second org with the same id', async () => {
      const a = newOrg();
      await store.createOrg(a);
      await expect(store.createOrg({ ...a, name: 'Other' })).rejects.toThrow();
      expect((await store.getOrg(a.id))?.name).toBe('Acme');
      expect(await store.countOrgs()).toBe(1);
    });

    it('changes an org rate limit and name, and reports an unknown org', async () => {
      const a = newOrg();
      await store.createOrg(a);
      const key = newKey(a.id);
      await store.createKey(key);
      expect(await store.updateOrg(a.id, { rateLimitRpm: 42 })).toEqual({ ...a, rateLimitRpm: 42 });
      expect((await store.getOrg(a.id))?.rateLimitRpm).toBe(42);
      // The authenticated principal carries the new limit at once.
      expect((await store.findActiveKey(key.hash))?.org.rateLimitRpm).toBe(42);
      expect(await store.updateOrg(a.id, { name: 'Renamed ✓' })).toEqual({
        ...a,
        name: 'Renamed ✓',
        rateLimitRpm: 42,
      });
      expect(await store.updateOrg(a.id, {})).toEqual({ ...a, name: 'Renamed ✓', rateLimitRpm: 42 });
      expect(await store.updateOrg(`org_${randomUUID()}`, { rateLimitRpm: 42 })).toBeNull();
    });

    it('lists orgs newest first, a page at a time', async () => {
      const orgs = [0, 1, 2, 3, 4].map((i) =>
        newOrg({ id: `org_${i}_${randomUUID()}`, createdAt: at(`2025-01-0${1 + (i % 3)}T00:00:00.000Z`) }),
      );
      for (const org of orgs) await store.createOrg(org);
      const expected = [...orgs].sort(
        (x, y) => y.createdAt.getTime() - x.createdAt.getTime() || (x.id < y.id ? 1 : -1),
      );
      const seen: Org[] = [];
      let after: { createdAt: Date; id: string } | null = null;
      for (;;) {
        const page: Org[] = await store.listOrgs({ limit: 2, after });
        seen.push(...page);
        const last = page[page.length - 1];
        if (page.length < 2 || !last) break;
        after = { createdAt: last.createdAt, id: last.id };
      }
      expect(seen).toEqual(expected);
    });

    it('keeps each key’s scopes and expiry, and lists an org’s keys oldest first', async () => {
      const a = newOrg();
      const b = newOrg();
      await store.createOrg(a);
      await store.createOrg(b);
      const narrow = newKey(a.id, {
        scopes: ['query', 'read'],
        expiresAt: at('2026-01-01T00:00:00.123Z'),
        createdAt: at('2025-01-04T00:00:00.000Z'),
      });
      const full = newKey(a.id);
      const other = newKey(b.id);
      for (const key of [narrow, full, other]) await store.createKey(key);
      expect(await store.getKey(narrow.id)).toEqual(narrow);
      expect((await store.findActiveKey(narrow.hash))?.key).toEqual(narrow);
      expect(await store.listKeys(a.id)).toEqual([full, narrow]);
      expect(await store.getKey(`key_${randomUUID()}`)).toBeNull();
      expect(await store.listKeys(`org_${randomUUID()}`)).toEqual([]);
    });

    it('revokes every key of one org at once', async () => {
      const a = newOrg();
      const b = newOrg();
      await store.createOrg(a);
      await store.createOrg(b);
      const [a1, a2, b1] = [newKey(a.id), newKey(a.id), newKey(b.id)];
      for (const key of [a1!, a2!, b1!]) await store.createKey(key);
      await store.revokeKey(a1!.id, at('2025-02-01T00:00:00Z'));
      expect(await store.revokeKeys(a.id, at('2025-03-01T00:00:00Z'))).toBe(1);
      expect(await store.findActiveKey(a2!.hash)).toBeNull();
      expect((await store.getKey(a1!.id))?.revokedAt).toEqual(at('2025-02-01T00:00:00Z'));
      expect((await store.getKey(a2!.id))?.revokedAt).toEqual(at('2025-03-01T00:00:00Z'));
      expect((await store.findActiveKey(b1!.hash))?.key.id).toBe(b1!.id);
    });

    it('purges an org with all its keys, and nothing of another org', async () => {
      const a = newOrg();
      const b = newOrg();
      await store.createOrg(a);
      await store.createOrg(b);
      const keys = [newKey(a.id), newKey(a.id, { revokedAt: at('2025-01-05T00:00:00Z') }), newKey(b.id)];
      for (const key of keys) await store.createKey(key);
      expect(await store.purgeOrg(a.id)).toEqual({ keys: 2 });
      expect(await store.getOrg(a.id)).toBeNull();
      expect(await store.listKeys(a.id)).toEqual([]);
      expect(await store.findActiveKey(keys[0]!.hash)).toBeNull();
      expect(await store.getOrg(b.id)).toEqual(b);
      expect(await store.listKeys(b.id)).toEqual([keys[2]]);
      expect(await store.countOrgs()).toBe(1);
      expect(await store.purgeOrg(a.id)).toEqual({ keys: 0 });
    });

    it('finds an active key by hash together with its own org', async () => {
      const a = newOrg({ name: 'A' });
      const b = newOrg({ name: 'B' });
      await store.createOrg(a);
      await store.createOrg(b);
      const ka = newKey(a.id);
      const kb = newKey(b.id);
      await store.createKey(ka);
      await store.createKey(kb);
      expect(await store.findActiveKey(ka.hash)).toEqual({ key: ka, org: a });
      expect(await store.findActiveKey(kb.hash)).toEqual({ key: kb, org: b });
      expect(await store.findActiveKey(createHash('sha256').update('nope').digest('hex'))).toBeNull();
    });

    it('refuses a second key with the same hash', async () => {
      const a = newOrg();
      const b = newOrg();
      await store.createOrg(a);
      await store.createOrg(b);
      const ka = newKey(a.id);
      await store.createKey(ka);
      await expect(store.createKey(newKey(b.id, { hash: ka.hash }))).rejects.toThrow();
      expect((await store.findActiveKey(ka.hash))?.org.id).toBe(a.id);
    });

    it('stops finding a revoked key, once, without touching the org’s other keys', async () => {
      const a = newOrg();
      await store.createOrg(a);
      const k1 = newKey(a.id);
      const k2 = newKey(a.id);
      await store.createKey(k1);
      await store.createKey(k2);
      expect(await store.revokeKey(k1.id, at('2025-02-01T00:00:00Z'))).toBe(true);
      expect(await store.findActiveKey(k1.hash)).toBeNull();
      expect(await store.revokeKey(k1.id, at('2025-02-02T00:00:00Z'))).toBe(false);
      expect(await store.revokeKey(`key_${randomUUID()}`, new Date())).toBe(false);
      expect((await store.findActiveKey(k2.hash))?.key.id).toBe(k2.id);
    });

    it('never treats a key stored as revoked as active', async () => {
      const a = newOrg();
      await store.createOrg(a);
      const k = newKey(a.id, { revokedAt: at('2025-01-04T00:00:00Z') });
      await store.createKey(k);
      expect(await store.findActiveKey(k.hash)).toBeNull();
      expect(await store.revokeKey(k.id, new Date())).toBe(false);
    });
  });
}
