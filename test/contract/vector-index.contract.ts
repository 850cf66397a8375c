// Conformance suite for VectorIndex: the SQLite (sqlite-vec) and PostgreSQL (sign-bit prefilter +
// exact cosine) indexes run these same tests, fed with documents made ready through each
// backend's DocumentStore. What a caller relies on: nearest first by cosine; only the org's own
// chunks and only the profile's vectors; vectors go with their chunks when a document is deleted
// or re-chunked, in the same transaction; a write for chunks that are gone writes nothing.
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { seededRandom } from '../../bench/lib.js';
import { parseFilter } from '../../src/domain/filter.js';
import type { ChunkVector, DocumentStore, VectorSearch, VectorStageStore } from '../../src/domain/ports.js';
import type { NewDocument } from '../../src/domain/types.js';
import { indexedInto, indexResult, newDoc } from './document-fixtures.js';

export interface VectorIndexHarness {
  store: DocumentStore;
  vectors: VectorSearch & VectorStageStore;
  close(): Promise<void>;
}

/** A unit vector pointing mostly along `axis`, a little along `tilt`. */
function unit(dimensions: number, axis: number, tilt = (axis + 1) % dimensions, amount = 0.1): Float32Array {
  const v = new Float32Array(dimensions);
  v[axis] = 1;
  v[tilt] = (v[tilt] ?? 0) + amount;
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

/** The prefilter's candidate budget, shrunk by the tests of the two-step search. */
export interface CandidateBudget {
  minCandidates?: number;
  candidatesPerHit?: number;
  /** The prefilter's memory budget (bytes of sign bits held). */
  prefilterMaxBytes?: number;
}

function normalised(v: Float32Array): Float32Array {
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += a[i]! * b[i]!;
  return dot;
}

export function vectorIndexContract(
  name: string,
  make: (budget?: CandidateBudget) => Promise<VectorIndexHarness>,
): void {
  describe(`VectorIndex contract: ${name}`, () => {
    let h: VectorIndexHarness;
    let orgA: string;
    let orgB: string;
    let profile: number;
    const D = 8;

    beforeEach(async () => {
      h = await make();
      orgA = `org_${randomUUID()}`;
      orgB = `org_${randomUUID()}`;
      profile = await h.vectors.profileId({ provider: 'openai', model: 'test', dimensions: D });
    });
    afterEach(async () => {
      await h.close();
    });

    /** A ready document whose chunk i gets a vector along axis axes[i]. */
    async function embedded(orgId: string, axes: number[], over: Partial<NewDocument> = {}) {
      const doc = await indexedInto(
        h.store,
        orgId,
        axes.map((a, i) => `chunk ${i} about axis ${a}`),
        over,
      );
      const vectors: ChunkVector[] = axes.map((axis, chunkIndex) => ({
        documentId: doc.id,
        chunkIndex,
        vector: unit(D, axis),
      }));
      expect(await h.vectors.writeVectors(orgId, profile, vectors)).toBe(true);
      return doc;
    }

    it('numbers a profile once: the same profile, the same number; another length, another one', async () => {
      expect(await h.vectors.profileId({ provider: 'openai', model: 'test', dimensions: D })).toBe(profile);
      expect(await h.vectors.findProfile('openai', 'test')).toBe(profile);
      expect(await h.vectors.findProfile('openai', 'unknown')).toBeNull();
      const other = await h.vectors.profileId({ provider: 'openai', model: 'test', dimensions: 16 });
      expect(other).not.toBe(profile);
      expect(await h.vectors.findProfile('openai', 'test')).toBe(other);
    });

    it('finds the nearest chunks first, with their cosine similarity', async () => {
      const doc = await embedded(orgA, [0, 1, 2, 3]);
      const hits = await h.vectors.search({
        orgId: orgA,
        profileId: profile,
        vector: unit(D, 2, 3, 0),
        limit: 2,
      });
      expect(hits.map((x) => [x.documentId, x.chunkIndex])).toEqual([
        [doc.id, 2],
        [doc.id, 1],
      ]);
      expect(hits[0]!.score).toBeCloseTo(1 / Math.hypot(1, 0.1), 4);
      expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score);
    });

    it("never answers with another org's chunks, nor with another profile's vectors", async () => {
      await embedded(orgB, [0, 0, 0]);
      const mine = await embedded(orgA, [5]);
      const hits = await h.vectors.search({ orgId: orgA, profileId: profile, vector: unit(D, 0), limit: 10 });
      expect(hits.map((x) => x.documentId)).toEqual([mine.id]);
      const other = await h.vectors.profileId({ provider: 'onnx', model: 'other', dimensions: D });
      expect(
        await h.vectors.search({ orgId: orgA, profileId: other, vector: unit(D, 0), limit: 10 }),
      ).toEqual([]);
    });

    it('keeps to document_ids when given', async () => {
      const a = await embedded(orgA, [0]);
      const b = await embedded(orgA, [0]);
      const hits = await h.vectors.search({
        orgId: orgA,
        profileId: profile,
        vector: unit(D, 0),
        limit: 10,
        documentIds: [b.id],
      });
      expect(hits.map((x) => x.documentId)).toEqual([b.id]);
      expect(
        await h.vectors.search({
          orgId: orgA,
          profileId: profile,
          vector: unit(D, 0),
          limit: 10,
          documentIds: [],
        }),
      ).toEqual([]);
      expect(a.id).not.toBe(b.id);
    });

    it('applies the metadata filter before choosing the nearest, and answers with text and metadata', async () => {
      // The nearer chunks are of the document the filter leaves out: the filter must choose first.
      await embedded(orgA, [0, 0, 0], { metadata: { team: 'red' } });
      const blue = await embedded(orgA, [1, 2], { metadata: { team: 'blue', year: '2026' } });
      const hits = await h.vectors.search({
        orgId: orgA,
        profileId: profile,
        vector: unit(D, 0),
        limit: 2,
        filter: parseFilter({ team: 'blue' }, '/filter'),
      });
      expect(hits.map((x) => [x.documentId, x.chunkIndex])).toEqual([
        [blue.id, 0],
        [blue.id, 1],
      ]);
      expect(hits[0]).toMatchObject({
        text: 'chunk 0 about axis 1',
        metadata: { team: 'blue', year: '2026' },
        pageStart: null,
        pageEnd: null,
      });
      expect(
        await h.vectors.search({
          orgId: orgA,
          profileId: profile,
          vector: unit(D, 0),
          limit: 10,
          filter: parseFilter({ $and: [{ team: 'blue' }, { year: { $lt: '2026' } }] }, '/filter'),
        }),
      ).toEqual([]);
    });

    it("a deleted document's vectors are gone with it", async () => {
      const doc = await embedded(orgA, [0, 1]);
      expect(await h.vectors.countVectors(doc.id, profile)).toBe(2);
      await h.store.deleteDocument(orgA, doc.id);
      expect(await h.vectors.countVectors(doc.id, profile)).toBe(0);
      expect(
        await h.vectors.search({ orgId: orgA, profileId: profile, vector: unit(D, 0), limit: 10 }),
      ).toEqual([]);
    });

    it("re-chunking a document drops its old vectors; a purged org's too", async () => {
      const doc = await embedded(orgA, [0, 1, 2]);
      await h.store.markProcessing(doc.id);
      expect(await h.store.saveIndex(doc.id, indexResult(['new first chunk']))).toBe(true);
      expect(await h.vectors.countVectors(doc.id, profile)).toBe(0);
      const kept = await embedded(orgA, [3]);
      await h.store.purgeOrg(orgA);
      expect(await h.vectors.countVectors(kept.id, profile)).toBe(0);
    });

    it('a write for chunks that no longer exist writes nothing and says so', async () => {
      const doc = await embedded(orgA, [0]);
      const gone = { documentId: randomUUID(), chunkIndex: 0, vector: unit(D, 1) };
      const mixed = [{ documentId: doc.id, chunkIndex: 0, vector: unit(D, 4) }, gone];
      expect(await h.vectors.writeVectors(orgA, profile, mixed)).toBe(false);
      // The first vector of the failed write did not replace the stored one.
      const [hit] = await h.vectors.search({ orgId: orgA, profileId: profile, vector: unit(D, 0), limit: 1 });
      expect(hit!.score).toBeGreaterThan(0.9);
    });

    it('rewriting a chunk replaces its vector', async () => {
      const doc = await embedded(orgA, [0]);
      await h.vectors.writeVectors(orgA, profile, [
        { documentId: doc.id, chunkIndex: 0, vector: unit(D, 6) },
      ]);
      expect(await h.vectors.countVectors(doc.id, profile)).toBe(1);
      const [hit] = await h.vectors.search({ orgId: orgA, profileId: profile, vector: unit(D, 6), limit: 1 });
      expect(hit!.score).toBeGreaterThan(0.9);
    });

    describe('the vector stage state', () => {
      const now = new Date('2026-01-01T00:00:00Z');
      const later = (s: number) => new Date(now.getTime() + s * 1000);

      it('a ready document is due until its vectors are complete; then ready, and due no more', async () => {
        const doc = await indexedInto(h.store, orgA, ['first chunk', 'second chunk']);
        const queued = newDoc(orgA);
        await h.store.createDocuments([queued]);
        expect(await h.vectors.dueDocuments(profile, now, 10)).toEqual([{ documentId: doc.id, orgId: orgA }]);
        expect(await h.vectors.chunkTexts(doc.id)).toEqual([
          { chunkIndex: 0, text: 'first chunk' },
          { chunkIndex: 1, text: 'second chunk' },
        ]);
        expect(await h.vectors.chunkTexts(queued.id)).toBeNull();
        const vectors = [0, 1].map((chunkIndex) => ({
          documentId: doc.id,
          chunkIndex,
          vector: unit(D, chunkIndex),
        }));
        expect(await h.vectors.completeDocument(doc.id, orgA, profile, vectors, now)).toBe(true);
        expect(await h.vectors.dueDocuments(profile, now, 10)).toEqual([]);
        expect((await h.vectors.vectorStates([doc.id, queued.id], profile)).get(doc.id)).toEqual({
          status: 'ready',
          error: null,
          attempts: 1,
        });
        // Another profile has its own stage: the document is due there.
        const other = await h.vectors.profileId({ provider: 'onnx', model: 'other', dimensions: D });
        expect(await h.vectors.dueDocuments(other, now, 10)).toEqual([{ documentId: doc.id, orgId: orgA }]);
      });

      it('a pending failure waits until its next attempt; a failed one until retryFailed', async () => {
        const a = await indexedInto(h.store, orgA, ['a']);
        const b = await indexedInto(h.store, orgA, ['b']);
        await h.vectors.recordFailure(a.id, orgA, profile, {
          status: 'pending',
          code: 'unreachable',
          message: 'down',
          nextAttemptAt: later(30),
          now,
        });
        await h.vectors.recordFailure(b.id, orgA, profile, {
          status: 'failed',
          code: 'rejected',
          message: 'too long',
          nextAttemptAt: now,
          now,
        });
        expect(await h.vectors.dueDocuments(profile, later(29), 10)).toEqual([]);
        expect(await h.vectors.dueDocuments(profile, later(30), 10)).toEqual([
          { documentId: a.id, orgId: orgA },
        ]);
        const states = await h.vectors.vectorStates([a.id, b.id], profile);
        expect(states.get(a.id)).toEqual({
          status: 'pending',
          error: { code: 'unreachable', message: 'down' },
          attempts: 1,
        });
        expect(states.get(b.id)?.status).toBe('failed');
        expect(await h.vectors.retryFailed(profile)).toBe(1);
        expect((await h.vectors.dueDocuments(profile, now, 10)).map((d) => d.documentId)).toEqual([b.id]);
        // reindex --vectors: every document of the profile is due again, its vectors kept meanwhile.
        await h.vectors.completeDocument(
          b.id,
          orgA,
          profile,
          [{ documentId: b.id, chunkIndex: 0, vector: unit(D, 0) }],
          now,
        );
        expect(await h.vectors.dueDocuments(profile, now, 10)).toEqual([]);
        expect(await h.vectors.requeueProfile(profile)).toBe(2);
        expect((await h.vectors.dueDocuments(profile, now, 10)).map((d) => d.documentId).sort()).toEqual(
          [a.id, b.id].sort(),
        );
        expect(await h.vectors.countVectors(b.id, profile)).toBe(1);
      });

      it('re-chunking makes a document due again; completing a deleted one writes nothing', async () => {
        const doc = await indexedInto(h.store, orgA, ['one']);
        const vectors = [{ documentId: doc.id, chunkIndex: 0, vector: unit(D, 0) }];
        await h.vectors.completeDocument(doc.id, orgA, profile, vectors, now);
        await h.store.markProcessing(doc.id);
        await h.store.saveIndex(doc.id, indexResult(['one, re-chunked']));
        expect(await h.vectors.dueDocuments(profile, now, 10)).toEqual([{ documentId: doc.id, orgId: orgA }]);
        await h.store.deleteDocument(orgA, doc.id);
        expect(await h.vectors.completeDocument(doc.id, orgA, profile, vectors, now)).toBe(false);
        expect(await h.vectors.countVectors(doc.id, profile)).toBe(0);
        expect(await h.vectors.vectorStates([doc.id], profile)).toEqual(new Map());
      });
    });

    describe('more vectors than candidates: sign-bit prefilter, then exact cosine', () => {
      // 8 candidates per query (4 per hit asked, at least 8) among 96 vectors: the two-step path.
      const C = 64;
      // Clusters of 4: a cluster fits in the candidates, other clusters lie farther by sign bits too.
      const CLUSTERS = 24;
      let approx: VectorIndexHarness;
      let clustered: number;
      const random = seededRandom(42);
      const centroids = Array.from({ length: CLUSTERS }, () =>
        normalised(Float32Array.from({ length: C }, () => random() - 0.5)),
      );
      const near = (cluster: number, noise = 0.25) =>
        normalised(centroids[cluster]!.map((x) => x + noise * (random() - 0.5) * 0.25));

      beforeEach(async () => {
        approx = await make({ minCandidates: 8, candidatesPerHit: 4 });
        clustered = await approx.vectors.profileId({ provider: 'test', model: 'clustered', dimensions: C });
      });
      afterEach(async () => {
        await approx.close();
      });

      /** Four ready documents of 24 chunks, chunk i near centroid i mod CLUSTERS. */
      async function corpus(orgId: string, profileId = clustered, into = approx) {
        const stored: Array<{ documentId: string; chunkIndex: number; vector: Float32Array }> = [];
        for (let d = 0; d < 4; d++) {
          const doc = await indexedInto(
            into.store,
            orgId,
            Array.from({ length: 24 }, (_, i) => `document ${d} chunk ${i}`),
            { metadata: { n: String(d) } },
          );
          const vectors = Array.from({ length: 24 }, (_, chunkIndex) => ({
            documentId: doc.id,
            chunkIndex,
            vector: near(chunkIndex % CLUSTERS),
          }));
          expect(await into.vectors.writeVectors(orgId, profileId, vectors)).toBe(true);
          stored.push(...vectors);
        }
        return stored;
      }

      const exactTop = (
        stored: Array<{ documentId: string; chunkIndex: number; vector: Float32Array }>,
        q: Float32Array,
        k: number,
      ) =>
        [...stored]
          .sort((a, b) => cosine(b.vector, q) - cosine(a.vector, q))
          .slice(0, k)
          .map((v) => `${v.documentId}#${v.chunkIndex}`);

      it('returns the exact nearest on clustered vectors, in cosine order', async () => {
        const stored = await corpus(orgA);
        for (let cluster = 0; cluster < CLUSTERS; cluster++) {
          const q = near(cluster);
          const hits = await approx.vectors.search({
            orgId: orgA,
            profileId: clustered,
            vector: q,
            limit: 2,
          });
          expect(hits.map((x) => `${x.documentId}#${x.chunkIndex}`)).toEqual(exactTop(stored, q, 2));
          expect(hits[0]!.score).toBeCloseTo(
            cosine(
              q,
              stored.find(
                (v) => `${v.documentId}#${v.chunkIndex}` === `${hits[0]!.documentId}#${hits[0]!.chunkIndex}`,
              )!.vector,
            ),
            4,
          );
        }
      });

      it("drops a deleted document's and a re-chunked one's vectors, and sees a rewritten vector", async () => {
        const stored = await corpus(orgA);
        const q = near(1);
        const first = await approx.vectors.search({ orgId: orgA, profileId: clustered, vector: q, limit: 2 });
        const deleted = first[0]!.documentId;
        await approx.store.deleteDocument(orgA, deleted);
        const rechunked = stored.find((v) => v.documentId !== deleted)!.documentId;
        await approx.store.markProcessing(rechunked);
        expect(await approx.store.saveIndex(rechunked, indexResult(['re-chunked']))).toBe(true);
        const after = await approx.vectors.search({ orgId: orgA, profileId: clustered, vector: q, limit: 2 });
        const left = stored.filter((v) => v.documentId !== deleted && v.documentId !== rechunked);
        expect(after.map((x) => `${x.documentId}#${x.chunkIndex}`)).toEqual(exactTop(left, q, 2));
        // A vector rewritten to point at cluster 1 is found there, where it was not before.
        const moved = left.find((v) => v.chunkIndex % CLUSTERS === 4)!;
        const target = normalised(q.map((x, i) => x + 0.001 * (i % 3)));
        expect(await approx.vectors.writeVectors(orgA, clustered, [{ ...moved, vector: target }])).toBe(true);
        const [top] = await approx.vectors.search({
          orgId: orgA,
          profileId: clustered,
          vector: target,
          limit: 1,
        });
        expect([top!.documentId, top!.chunkIndex]).toEqual([moved.documentId, moved.chunkIndex]);
      });

      it('a filter few documents pass still finds their chunks; no chunk failing it is returned', async () => {
        await corpus(orgA);
        const filter = parseFilter({ n: '3' }, '/filter');
        const hits = await approx.vectors.search({
          orgId: orgA,
          profileId: clustered,
          vector: near(2),
          limit: 10,
          filter,
        });
        expect(hits).toHaveLength(10);
        expect(hits.every((x) => x.metadata.n === '3')).toBe(true);
      });

      it('under a memory budget of less than one partition, searches across orgs stay exact, changes made meanwhile included', async () => {
        const small = await make({ minCandidates: 8, candidatesPerHit: 4, prefilterMaxBytes: 1 });
        try {
          const profileId = await small.vectors.profileId({
            provider: 'test',
            model: 'clustered',
            dimensions: C,
          });
          const a = await corpus(orgA, profileId, small);
          const b = await corpus(orgB, profileId, small);
          const top = async (orgId: string, q: Float32Array) =>
            (await small.vectors.search({ orgId, profileId, vector: q, limit: 2 })).map(
              (x) => `${x.documentId}#${x.chunkIndex}`,
            );
          for (const cluster of [5, 6]) {
            const q = near(cluster);
            expect(await top(orgA, q)).toEqual(exactTop(a, q, 2));
            expect(await top(orgB, q)).toEqual(exactTop(b, q, 2));
          }
          expect(small.vectors.heldMemory()).toMatchObject({ partitions: 1 });
          // org A's bits were let go when org B was searched; a deletion meanwhile is seen.
          const q = near(7);
          const gone = (await top(orgA, q))[0]!.split('#')[0]!;
          await top(orgB, q);
          await small.store.deleteDocument(orgA, gone);
          const left = a.filter((v) => v.documentId !== gone);
          expect(await top(orgA, q)).toEqual(exactTop(left, q, 2));
          // Without the tight budget, both orgs' bits stay held.
          await corpus(orgA);
          await corpus(orgB);
          for (const orgId of [orgA, orgB]) {
            await approx.vectors.search({ orgId, profileId: clustered, vector: q, limit: 2 });
          }
          expect(approx.vectors.heldMemory().partitions).toBe(2);
          expect(approx.vectors.heldMemory().bytes).toBeGreaterThan(0);
        } finally {
          await small.close();
        }
      });

      it("never mixes in another org's or another profile's vectors", async () => {
        await corpus(orgB);
        const sameLength = await approx.vectors.profileId({
          provider: 'test',
          model: 'successor',
          dimensions: C,
        });
        const mine = await corpus(orgA, sameLength);
        const q = near(3);
        const hits = await approx.vectors.search({ orgId: orgA, profileId: sameLength, vector: q, limit: 3 });
        expect(hits.map((x) => `${x.documentId}#${x.chunkIndex}`)).toEqual(exactTop(mine, q, 3));
        expect(
          await approx.vectors.search({ orgId: orgA, profileId: clustered, vector: q, limit: 3 }),
        ).toEqual([]);
      });
    });
  });
}
