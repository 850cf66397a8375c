// Conformance suite for VectorSearch: the SQLite (sqlite-vec) and PostgreSQL (sign-bit prefilter +
// exact cosine) indexes run these same tests, fed with documents made ready through each
// backend's DocumentStore and vectors written through its VectorStageStore, as the vector stage
// writes them (a search kept elsewhere runs them with the records' database as the writer). What
// a query relies on: profiles numbered as the stage store numbers them; nearest first by cosine;
// only the org's own chunks and only the profile's vectors; the filters applied before the cut;
// vectors written, rewritten, or gone with their chunks (a document deleted or re-chunked) seen by
// the next search; a write for chunks that are gone leaves what search finds as it was.
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { seededRandom } from '../../bench/lib.js';
import { parseFilter } from '../../src/domain/filter.js';
import type { DocumentStore, VectorSearch, VectorStageStore } from '../../src/domain/ports.js';
import type { NewDocument } from '../../src/domain/types.js';
import { indexedInto, indexResult } from './document-fixtures.js';
import { embedded as embeddedWith, unit } from './vector-fixtures.js';

export interface VectorSearchHarness {
  store: DocumentStore;
  /** Writes the vectors searched, as the vector stage does. */
  stage: VectorStageStore;
  vectors: VectorSearch;
  close(): Promise<void>;
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

export function vectorSearchContract(
  name: string,
  make: (budget?: CandidateBudget) => Promise<VectorSearchHarness>,
): void {
  describe(`VectorSearch contract: ${name}`, () => {
    let h: VectorSearchHarness;
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
    const embedded = (orgId: string, axes: number[], over: Partial<NewDocument> = {}) =>
      embeddedWith(h, orgId, profile, D, axes, over);

    it('numbers a profile as the stage store does', async () => {
      expect(await h.stage.profileId({ provider: 'openai', model: 'test', dimensions: D })).toBe(profile);
      const other = { provider: 'onnx', model: 'other', dimensions: 16 };
      expect(await h.vectors.profileId(other)).toBe(await h.stage.profileId(other));
      expect(await h.vectors.profileId(other)).not.toBe(profile);
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
      expect(await h.stage.countVectors(doc.id, profile)).toBe(2);
      await h.store.deleteDocument(orgA, doc.id);
      expect(await h.stage.countVectors(doc.id, profile)).toBe(0);
      expect(
        await h.vectors.search({ orgId: orgA, profileId: profile, vector: unit(D, 0), limit: 10 }),
      ).toEqual([]);
    });

    it('a write for chunks that no longer exist writes nothing and says so', async () => {
      const doc = await embedded(orgA, [0]);
      const gone = { documentId: randomUUID(), chunkIndex: 0, vector: unit(D, 1) };
      const mixed = [{ documentId: doc.id, chunkIndex: 0, vector: unit(D, 4) }, gone];
      expect(await h.stage.writeVectors(orgA, profile, mixed)).toBe(false);
      // The first vector of the failed write did not replace the stored one.
      const [hit] = await h.vectors.search({ orgId: orgA, profileId: profile, vector: unit(D, 0), limit: 1 });
      expect(hit!.score).toBeGreaterThan(0.9);
    });

    it('rewriting a chunk replaces its vector', async () => {
      const doc = await embedded(orgA, [0]);
      await h.stage.writeVectors(orgA, profile, [{ documentId: doc.id, chunkIndex: 0, vector: unit(D, 6) }]);
      expect(await h.stage.countVectors(doc.id, profile)).toBe(1);
      const [hit] = await h.vectors.search({ orgId: orgA, profileId: profile, vector: unit(D, 6), limit: 1 });
      expect(hit!.score).toBeGreaterThan(0.9);
    });

    describe('more vectors than candidates: sign-bit prefilter, then exact cosine', () => {
      // 8 candidates per query (4 per hit asked, at least 8) among 96 vectors: the two-step path.
      const C = 64;
      // Clusters of 4: a cluster fits in the candidates, other clusters lie farther by sign bits too.
      const CLUSTERS = 24;
      let approx: VectorSearchHarness;
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
          expect(await into.stage.writeVectors(orgId, profileId, vectors)).toBe(true);
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
        expect(await approx.stage.writeVectors(orgA, clustered, [{ ...moved, vector: target }])).toBe(true);
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
