// Conformance suite for IdempotencyStore: every adapter (SQLite, PostgreSQL) runs these same tests.
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DocumentStore, IdempotencyStore, IdempotentAnswer } from '../../src/domain/ports.js';
import type { StartedVersion } from '../../src/domain/types.js';
import { newDoc } from './document-fixtures.js';

export interface IdempotencyStoreHarness {
  store: IdempotencyStore;
  /** The document store of the same database: its writes store a key's answer with them. */
  documents: DocumentStore;
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

    // A server killed between the write and complete(): the answer must have landed with the
    // write, so the retry (after the in-flight record went stale) replays it instead of writing
    // the documents a second time.
    describe('an answer stored with the write it answers', () => {
      const answer = <T>(key: string): IdempotentAnswer<T> => ({
        orgId: org,
        key,
        status: 202,
        body: (outcome) => JSON.stringify(outcome),
      });
      const afterCrash = (key: string) => claim(key, 'fp', T0 + LIMITS.staleInFlightMs + 1);

      it('new documents and versions, in the request order, in one transaction', async () => {
        expect(await claim('ingest', 'fp', T0)).toBeNull();
        const existing = newDoc(org, { externalId: 'ext-a' });
        await h.documents.createDocuments([existing]);
        const docs = [
          newDoc(org),
          newDoc(org, { externalId: 'ext-a' }),
          newDoc(org, { externalId: 'ext-b' }),
        ];
        const started = await h.documents.createDocuments(docs, answer<StartedVersion[]>('ingest'));
        expect(started.map((v) => [v.id, v.version, v.created])).toEqual([
          [docs[0]!.id, 1, true],
          [existing.id, 2, false],
          [docs[2]!.id, 1, true],
        ]);
        const record = await afterCrash('ingest');
        expect(record).toMatchObject({ state: 'done', status: 202 });
        expect(JSON.parse(record!.body!)).toEqual(JSON.parse(JSON.stringify(started)));
      });

      it('a new version, and nothing when no version starts', async () => {
        const doc = newDoc(org);
        await h.documents.createDocuments([doc]);
        expect(await claim('version', 'fp', T0)).toBeNull();
        const started = await h.documents.startVersion(
          org,
          doc.id,
          { ...doc, metadata: null, at: new Date(T0), language: null },
          answer<StartedVersion>('version'),
        );
        expect(started).toMatchObject({ id: doc.id, version: 2 });
        expect(await afterCrash('version')).toMatchObject({ state: 'done', body: JSON.stringify(started) });

        expect(await claim('settled', 'fp', T0)).toBeNull();
        const refused = await h.documents.startVersionIfSettled(
          org,
          doc.id,
          { ...doc, metadata: null, at: new Date(T0), language: null },
          { version: 1, pendingVersion: null },
          answer<StartedVersion>('settled'),
        );
        expect(refused).toBe('in_flight');
        expect(await afterCrash('settled')).toBeNull();
      });
    });
  });
}
