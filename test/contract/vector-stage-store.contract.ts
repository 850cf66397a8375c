// Conformance suite for VectorStageStore: the SQLite and PostgreSQL vector indexes run these
// same tests, fed with documents made ready through each backend's DocumentStore. What the vector
// stage relies on: a profile numbered once; a ready document due until its vectors are complete,
// then ready; failures pending until their next attempt or failed until retried; every document
// due again on requeue; vectors gone with their chunks when a document is deleted, re-chunked or
// purged, in the same transaction; a write for chunks that are gone writes nothing. What search
// finds in the vectors written here is VectorSearch's suite (vector-search.contract.ts).
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DocumentStore, VectorStageStore } from '../../src/domain/ports.js';
import { indexedInto, indexResult, newDoc } from './document-fixtures.js';
import { embedded, unit } from './vector-fixtures.js';

export interface VectorStageStoreHarness {
  store: DocumentStore;
  stage: VectorStageStore;
  close(): Promise<void>;
}

export function vectorStageStoreContract(name: string, make: () => Promise<VectorStageStoreHarness>): void {
  describe(`VectorStageStore contract: ${name}`, () => {
    let h: VectorStageStoreHarness;
    let orgA: string;
    let profile: number;
    const D = 8;

    beforeEach(async () => {
      h = await make();
      orgA = `org_${randomUUID()}`;
      profile = await h.stage.profileId({ provider: 'openai', model: 'test', dimensions: D });
    });
    afterEach(async () => {
      await h.close();
    });

    it('numbers a profile once: the same profile, the same number; another length, another one', async () => {
      expect(await h.stage.profileId({ provider: 'openai', model: 'test', dimensions: D })).toBe(profile);
      expect(await h.stage.findProfile('openai', 'test')).toBe(profile);
      expect(await h.stage.findProfile('openai', 'unknown')).toBeNull();
      const other = await h.stage.profileId({ provider: 'openai', model: 'test', dimensions: 16 });
      expect(other).not.toBe(profile);
      expect(await h.stage.findProfile('openai', 'test')).toBe(other);
    });

    it("re-chunking a document drops its old vectors; a purged org's too", async () => {
      const doc = await embedded(h, orgA, profile, D, [0, 1, 2]);
      await h.store.markProcessing(doc.id);
      expect(await h.store.saveIndex(doc.id, indexResult(['new first chunk']))).toBe(true);
      expect(await h.stage.countVectors(doc.id, profile)).toBe(0);
      const kept = await embedded(h, orgA, profile, D, [3]);
      await h.store.purgeOrg(orgA);
      expect(await h.stage.countVectors(kept.id, profile)).toBe(0);
    });

    describe('the vector stage state', () => {
      const now = new Date('2026-01-01T00:00:00Z');
      const later = (s: number) => new Date(now.getTime() + s * 1000);

      it('a ready document is due until its vectors are complete; then ready, and due no more', async () => {
        const doc = await indexedInto(h.store, orgA, ['first chunk', 'second chunk']);
        const queued = newDoc(orgA);
        await h.store.createDocuments([queued]);
        expect(await h.stage.dueDocuments(profile, now, 10)).toEqual([{ documentId: doc.id, orgId: orgA }]);
        expect(await h.stage.chunkTexts(doc.id)).toEqual([
          { chunkIndex: 0, text: 'first chunk' },
          { chunkIndex: 1, text: 'second chunk' },
        ]);
        expect(await h.stage.chunkTexts(queued.id)).toBeNull();
        const vectors = [0, 1].map((chunkIndex) => ({
          documentId: doc.id,
          chunkIndex,
          vector: unit(D, chunkIndex),
        }));
        expect(await h.stage.completeDocument(doc.id, orgA, profile, vectors, now)).toBe(true);
        expect(await h.stage.dueDocuments(profile, now, 10)).toEqual([]);
        expect((await h.stage.vectorStates([doc.id, queued.id], profile)).get(doc.id)).toEqual({
          status: 'ready',
          error: null,
          attempts: 1,
        });
        // Another profile has its own stage: the document is due there.
        const other = await h.stage.profileId({ provider: 'onnx', model: 'other', dimensions: D });
        expect(await h.stage.dueDocuments(other, now, 10)).toEqual([{ documentId: doc.id, orgId: orgA }]);
      });

      it('a pending failure waits until its next attempt; a failed one until retryFailed', async () => {
        const a = await indexedInto(h.store, orgA, ['a']);
        const b = await indexedInto(h.store, orgA, ['b']);
        await h.stage.recordFailure(a.id, orgA, profile, {
          status: 'pending',
          code: 'unreachable',
          message: 'down',
          nextAttemptAt: later(30),
          now,
        });
        await h.stage.recordFailure(b.id, orgA, profile, {
          status: 'failed',
          code: 'rejected',
          message: 'too long',
          nextAttemptAt: now,
          now,
        });
        expect(await h.stage.dueDocuments(profile, later(29), 10)).toEqual([]);
        expect(await h.stage.dueDocuments(profile, later(30), 10)).toEqual([
          { documentId: a.id, orgId: orgA },
        ]);
        const states = await h.stage.vectorStates([a.id, b.id], profile);
        expect(states.get(a.id)).toEqual({
          status: 'pending',
          error: { code: 'unreachable', message: 'down' },
          attempts: 1,
        });
        expect(states.get(b.id)?.status).toBe('failed');
        expect(await h.stage.retryFailed(profile)).toBe(1);
        expect((await h.stage.dueDocuments(profile, now, 10)).map((d) => d.documentId)).toEqual([b.id]);
        // reindex --vectors: every document of the profile is due again, its vectors kept meanwhile.
        await h.stage.completeDocument(
          b.id,
          orgA,
          profile,
          [{ documentId: b.id, chunkIndex: 0, vector: unit(D, 0) }],
          now,
        );
        expect(await h.stage.dueDocuments(profile, now, 10)).toEqual([]);
        expect(await h.stage.requeueProfile(profile)).toBe(2);
        expect((await h.stage.dueDocuments(profile, now, 10)).map((d) => d.documentId).sort()).toEqual(
          [a.id, b.id].sort(),
        );
        expect(await h.stage.countVectors(b.id, profile)).toBe(1);
      });

      it('a write naming a chunk that is gone writes nothing, its state neither, and says so', async () => {
        const doc = await indexedInto(h.store, orgA, ['one']);
        const mixed = [
          { documentId: doc.id, chunkIndex: 0, vector: unit(D, 0) },
          { documentId: randomUUID(), chunkIndex: 0, vector: unit(D, 1) },
        ];
        expect(await h.stage.writeVectors(orgA, profile, mixed)).toBe(false);
        expect(await h.stage.completeDocument(doc.id, orgA, profile, mixed, now)).toBe(false);
        expect(await h.stage.countVectors(doc.id, profile)).toBe(0);
        expect(await h.stage.vectorStates([doc.id], profile)).toEqual(new Map());
        expect(await h.stage.dueDocuments(profile, now, 10)).toEqual([{ documentId: doc.id, orgId: orgA }]);
      });

      it('re-chunking makes a document due again; completing a deleted one writes nothing', async () => {
        const doc = await indexedInto(h.store, orgA, ['one']);
        const vectors = [{ documentId: doc.id, chunkIndex: 0, vector: unit(D, 0) }];
        await h.stage.completeDocument(doc.id, orgA, profile, vectors, now);
        await h.store.markProcessing(doc.id);
        await h.store.saveIndex(doc.id, indexResult(['one, re-chunked']));
        expect(await h.stage.dueDocuments(profile, now, 10)).toEqual([{ documentId: doc.id, orgId: orgA }]);
        await h.store.deleteDocument(orgA, doc.id);
        expect(await h.stage.completeDocument(doc.id, orgA, profile, vectors, now)).toBe(false);
        expect(await h.stage.countVectors(doc.id, profile)).toBe(0);
        expect(await h.stage.vectorStates([doc.id], profile)).toEqual(new Map());
      });
    });
  });
}
