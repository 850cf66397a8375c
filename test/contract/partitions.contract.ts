// Conformance suite for partitions, run against each backend's record store, keyword index and
// vector index: a query restricted to partitions is exact before ranking on every path (keyword,
// semantic, hybrid), lists and the partition counts see only what they should, an external_id
// never moves a document to another partition, and a partition's purge resumes after a crash.
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type JobRows, LeaseQueue } from '../../src/adapters/lease-queue/engine.js';
import { DocumentService } from '../../src/domain/documents.js';
import { ApiError } from '../../src/domain/errors.js';
import { PartitionService } from '../../src/domain/partition-service.js';
import { ALL_PARTITIONS, accessOfKey } from '../../src/domain/partitions.js';
import type {
  BlobStore,
  DocumentStore,
  Embedder,
  KeywordIndex,
  VectorSearch,
  VectorStageStore,
} from '../../src/domain/ports.js';
import { QueryService } from '../../src/domain/query.js';
import { QueryEmbeddings } from '../../src/domain/query-embeddings.js';
import { UsageService } from '../../src/domain/usage.js';
import { FixedClock, MemoryBlobs, MemoryUsage } from '../domain/fakes.js';
import { indexedInto, indexResult, list, newDoc, query, where } from './document-fixtures.js';

export interface PartitionHarness {
  store: DocumentStore;
  /** The partition-purge queue's rows on the same database (each call: another process's). */
  purgeRows(): JobRows;
  index: KeywordIndex;
  /** The backend's vector index: written as the vector stage writes, searched as queries search. */
  vectors: VectorStageStore & VectorSearch;
  /** Another store on the same database, as a process started after a crash. */
  reopen(): DocumentStore;
  close(): Promise<void>;
}

/** How small each backend's search budgets are made, so the tests reach their over-budget paths. */
export interface PartitionBudgets {
  /** Keyword: most matching chunks one query ranks. */
  searchRowBudget?: number;
  /** Vectors: the sign prefilter's candidates. */
  minCandidates?: number;
  candidatesPerHit?: number;
}

const D = 8;

/** A unit vector along `axis`, tilted a little towards the next one. */
const sorted = (ids: readonly string[]) => [...ids].sort();

function unit(axis: number, amount = 0.1): Float32Array {
  const v = new Float32Array(D);
  v[axis] = 1;
  v[(axis + 1) % D] = amount;
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

/** An embedder that answers one fixed vector (along axis 0) for every text. */
function fixedEmbedder(): Embedder {
  return {
    provider: 'openai',
    model: 'partition-test',
    dimensions: () => D,
    embed: async (texts) => texts.map(() => unit(0, 0)),
    close: async () => {},
  };
}

export function partitionContract(
  name: string,
  make: (budgets: PartitionBudgets) => Promise<PartitionHarness>,
): void {
  describe(`partitions: ${name}`, () => {
    let h: PartitionHarness;
    let org: string;

    afterEach(async () => {
      await h.close();
    });

    /** Ready documents of one partition, each one chunk that names the quokka, with a vector along `axis`. */
    async function fill(partition: string, count: number, axis: number, profile: number | null) {
      const ids: string[] = [];
      for (let i = 0; i < count; i++) {
        const doc = await indexedInto(h.store, org, [`quokka report ${partition} number ${i}`], {
          partition,
          metadata: { side: partition },
        });
        if (profile !== null) {
          expect(
            await h.vectors.writeVectors(org, profile, [
              { documentId: doc.id, chunkIndex: 0, vector: unit(axis) },
            ]),
          ).toBe(true);
        }
        ids.push(doc.id);
      }
      return ids;
    }

    describe('exact before ranking', () => {
      let inB: string[];
      let profile: number;

      beforeEach(async () => {
        // Budgets far below the 200 matches: every path that cuts before filtering would lose b's.
        h = await make({ searchRowBudget: 20, minCandidates: 5, candidatesPerHit: 1 });
        org = `org_${randomUUID()}`;
        profile = await h.vectors.profileId({ provider: 'openai', model: 'partition-test', dimensions: D });
        // b's documents first, so they are the oldest matches: a cut to the newest would miss them.
        inB = await fill('b', 3, 4, profile);
        await fill('a', 200, 0, profile);
      });

      it('keyword: a query restricted to a partition of 3 matches out of 203 returns those 3', async () => {
        const hits = await h.index.search(query(org, 'quokka', { topK: 10, partitions: ['b'] }));
        expect(hits.map((hit) => hit.documentId).sort()).toEqual([...inB].sort());
        const unrestricted = await h.index.search(query(org, 'quokka', { topK: 10 }));
        expect(unrestricted).toHaveLength(10);
      });

      it('keyword: when the rarest word finds fewer than top_k in the partition, every word ranks its documents', async () => {
        // "1" is in two documents of the org (b's and a's number 1), "quokka" in all 203: over
        // the budget of 20, the plan ranks "1" first, which finds one of b's documents.
        const hits = await h.index.search(query(org, 'quokka 1', { topK: 10, partitions: ['b'] }));
        expect(hits.map((hit) => hit.documentId).sort()).toEqual([...inB].sort());
        expect(hits[0]?.documentId).toBe(inB[1]);
      });

      it('keyword: in a partition of many chunks, the chunks of the rarest word outrank the first chunks of a common word', async () => {
        // A budget the document's 700 chunks fit in, and the quokka's 850 matches in the org do
        // not; two of the document's chunks, far along, also name the wombat.
        await h.close();
        h = await make({ searchRowBudget: 800 });
        org = `org_${randomUUID()}`;
        await fill('a', 150, 0, null);
        const texts = Array.from({ length: 700 }, (_, i) =>
          i === 650 || i === 690 ? `quokka wombat section ${i}` : `quokka section ${i}`,
        );
        const doc = await indexedInto(h.store, org, texts, { partition: 'c' });
        const hits = await h.index.search(query(org, 'wombat quokka', { topK: 10, partitions: ['c'] }));
        expect(hits).toHaveLength(10);
        expect(hits.every((hit) => hit.documentId === doc.id)).toBe(true);
        expect(sorted(hits.slice(0, 2).map((hit) => String(hit.chunkIndex)))).toEqual(['650', '690']);
      });

      it('keyword: a partition holding most of the org, or every partition named, fills top_k from them', async () => {
        const inA = await h.index.search(query(org, 'quokka', { topK: 10, partitions: ['a'] }));
        expect(inA).toHaveLength(10);
        expect(inA.every((hit) => !inB.includes(hit.documentId))).toBe(true);
        const both = await h.index.search(query(org, 'quokka', { topK: 10, partitions: ['a', 'b'] }));
        expect(both).toHaveLength(10);
        // Within one of its own documents' partitions, a filter keeps the restriction exact.
        const oneOfA = await h.index.search(
          query(org, 'quokka', { topK: 10, partitions: ['a'], filter: where({ side: 'a' }) }),
        );
        expect(oneOfA).toHaveLength(10);
        expect(oneOfA.every((hit) => !inB.includes(hit.documentId))).toBe(true);
      });

      it('keyword: every partition of the org named answers as unrestricted; a document elsewhere is still kept out', async () => {
        // Naming a partition that holds nothing changes nothing either.
        const every = await h.index.search(
          query(org, 'quokka', { topK: 300, partitions: ['b', 'none', 'a'] }),
        );
        const unrestricted = await h.index.search(query(org, 'quokka', { topK: 300 }));
        expect(sorted(every.map((hit) => hit.documentId))).toEqual(
          sorted(unrestricted.map((hit) => hit.documentId)),
        );
        // A strong match in a partition not named.
        const elsewhere = await indexedInto(h.store, org, ['quokka quokka quokka quokka'], {
          partition: 'c',
        });
        const named = await h.index.search(query(org, 'quokka', { topK: 300, partitions: ['a', 'b'] }));
        expect(named.length).toBeGreaterThanOrEqual(10);
        expect(named.map((hit) => hit.documentId)).not.toContain(elsewhere.id);
      });

      it('keyword: the restriction holds together with a metadata filter and with named documents', async () => {
        const named = await h.index.search(
          query(org, 'quokka', { topK: 10, partitions: ['a'], documentIds: inB }),
        );
        expect(named).toEqual([]);
        // The filter passes only b's 3 among 203 matches, over a budget of 20 rows.
        const filtered = await h.index.search(
          query(org, 'quokka', { topK: 10, partitions: ['a', 'b'], filter: where({ side: 'b' }) }),
        );
        expect(filtered.map((hit) => hit.documentId).sort()).toEqual([...inB].sort());
        const elsewhere = await h.index.search(
          query(org, 'quokka', { topK: 10, partitions: ['a'], filter: where({ side: 'b' }) }),
        );
        expect(elsewhere).toEqual([]);
        const namedInB = await h.index.search(
          query(org, 'quokka', { topK: 10, partitions: ['b'], documentIds: inB.slice(0, 2) }),
        );
        expect(namedInB.map((hit) => hit.documentId).sort()).toEqual(inB.slice(0, 2).sort());
      });

      it('semantic: the nearest vectors are all in the other partition, and b still answers with its 3', async () => {
        const hits = await h.vectors.search({
          orgId: org,
          profileId: profile,
          vector: unit(0, 0),
          limit: 10,
          partitions: ['b'],
        });
        expect(hits.map((hit) => hit.documentId).sort()).toEqual([...inB].sort());
      });

      it('keyword, semantic, hybrid and reranked through the query service answer only b’s chunks, all 3 of them', async () => {
        const embedder = fixedEmbedder();
        const service = new QueryService(
          h.index,
          new UsageService(new MemoryUsage(), new FixedClock(new Date())),
          {
            embedder,
            embeddings: new QueryEmbeddings(embedder),
            vectors: h.vectors,
            embeddingDeadlineMs: 5_000,
          },
        );
        for (const mode of ['keyword', 'semantic', 'hybrid'] as const) {
          const answer = await service.query(org, ALL_PARTITIONS, {
            query: 'quokka',
            topK: 10,
            filter: undefined,
            documentIds: null,
            partitions: ['b'],
            mode,
          });
          expect(answer.hits.map((hit) => hit.documentId).sort(), mode).toEqual([...inB].sort());
        }
        // Reranked, the candidates are b's alone: a reranker that prefers a's text never sees it.
        const reranked = new QueryService(
          h.index,
          new UsageService(new MemoryUsage(), new FixedClock(new Date())),
          {
            embedder,
            embeddings: new QueryEmbeddings(embedder),
            vectors: h.vectors,
            embeddingDeadlineMs: 5_000,
          },
          null,
          {
            reranker: {
              provider: 'http',
              model: 'prefers-a',
              score: async (_query, texts) => texts.map((text) => (text.includes(' a ') ? 1 : 0)),
              close: async () => {},
            },
            deadlineMs: 5_000,
          },
        );
        const answer = await reranked.query(org, ALL_PARTITIONS, {
          query: 'quokka',
          topK: 10,
          filter: undefined,
          documentIds: null,
          partitions: ['b'],
          mode: 'hybrid',
          rerank: true,
        });
        expect(answer.degraded).toBe(false);
        expect(answer.hits.map((hit) => hit.documentId).sort()).toEqual([...inB].sort());
        // A key limited to b gets the same without naming it.
        const limited = await service.query(org, accessOfKey(['b']), {
          query: 'quokka',
          topK: 10,
          filter: undefined,
          documentIds: null,
          mode: 'hybrid',
        });
        expect(limited.hits.map((hit) => hit.documentId).sort()).toEqual([...inB].sort());
        // …and may not widen it.
        const widened = await service
          .query(org, accessOfKey(['b']), {
            query: 'quokka',
            topK: 10,
            filter: undefined,
            documentIds: null,
            partitions: ['a'],
          })
          .catch((error: unknown) => error);
        expect(widened).toBeInstanceOf(ApiError);
        expect((widened as ApiError).code).toBe('partition_forbidden');
      });
    });

    describe('records', () => {
      beforeEach(async () => {
        h = await make({});
        org = `org_${randomUUID()}`;
      });

      it('keeps each document’s partition, `default` when none was given, and lists by partition', async () => {
        const plain = await indexedInto(h.store, org, ['plain text']);
        const support = await indexedInto(h.store, org, ['support text'], { partition: 'support' });
        expect((await h.store.getDocument(org, plain.id))?.partition).toBe('default');
        expect((await h.store.getDocument(org, support.id))?.partition).toBe('support');
        const listed = await h.store.listDocuments(list(org, { partitions: ['support'] }));
        expect(listed.map((doc) => doc.id)).toEqual([support.id]);
        expect(await h.store.listDocuments(list(org, { partitions: ['nowhere'] }))).toEqual([]);
        expect(await h.store.listDocuments(list(org))).toHaveLength(2);
      });

      it('refuses an external_id of another partition instead of moving the document', async () => {
        const first = newDoc(org, { externalId: 'ticket-1', partition: 'support' });
        await h.store.createDocuments([first]);
        const moved = await h.store
          .createDocuments([newDoc(org, { externalId: 'ticket-1', partition: 'sales' })])
          .catch((error: unknown) => error);
        expect(moved).toBeInstanceOf(ApiError);
        expect((moved as ApiError).code).toBe('partition_mismatch');
        expect((await h.store.getDocument(org, first.id))?.partition).toBe('support');
        // In its own partition it is a new version, as ever.
        const [again] = await h.store.createDocuments([
          newDoc(org, { externalId: 'ticket-1', partition: 'support' }),
        ]);
        expect(again).toMatchObject({ id: first.id, version: 2, created: false });
      });

      it('counts each partition’s documents, chunks and bytes', async () => {
        await indexedInto(h.store, org, ['one', 'two'], { partition: 'a' });
        const file = newDoc(org, {
          partition: 'a',
          source: { type: 'file', filename: 'x.txt', url: null, content_type: 'text/plain', bytes: 1234 },
        });
        await h.store.createDocuments([file]);
        await h.store.saveIndex(file.id, indexResult(['three']));
        await indexedInto(h.store, org, ['four'], { partition: 'b' });
        await indexedInto(h.store, `org_${randomUUID()}`, ['elsewhere'], { partition: 'a' });
        expect(await h.store.listPartitions(org)).toEqual([
          { name: 'a', documents: 2, chunks: 3, bytes: 1234, status: 'active' },
          { name: 'b', documents: 1, chunks: 1, bytes: 0, status: 'active' },
        ]);
      });

      it('purges a partition in the background and resumes after a crash until it is gone', async () => {
        const blobs = new MemoryBlobs() as unknown as BlobStore;
        const crash = new AbortController();
        /** Its process dies after its first slice. */
        class DiesAfterASlice extends DocumentService {
          override async deletePartitionSlice(orgId: string, partition: string, limit: number) {
            const found = await super.deletePartitionSlice(orgId, partition, limit);
            crash.abort();
            return found;
          }
        }
        const clock = new FixedClock(new Date());
        for (let i = 0; i < 7; i++) await indexedInto(h.store, org, [`doomed ${i}`], { partition: 'old' });
        const kept = await indexedInto(h.store, org, ['kept'], { partition: 'new' });
        const first = new PartitionService(h.store, new DiesAfterASlice(h.store, blobs), clock, 3);
        await first.delete(org, ALL_PARTITIONS, 'old');
        expect((await h.store.listPartitions(org)).find((p) => p.name === 'old')).toMatchObject({
          documents: 7,
          status: 'deleting',
        });
        await expect(first.purge(org, 'old', crash.signal)).rejects.toThrow();
        const after = h.reopen();
        expect((await after.listPartitions(org)).find((p) => p.name === 'old')).toMatchObject({
          documents: 4,
          status: 'deleting',
        });
        // The next process's run finishes it: the mark goes with the last document.
        const next = new PartitionService(after, new DocumentService(after, blobs), clock, 3);
        expect(await next.purge(org, 'old')).toBe(4);
        expect(await after.listPartitions(org)).toEqual([
          { name: 'new', documents: 1, chunks: 1, bytes: 0, status: 'active' },
        ]);
        expect(await after.getDocument(org, kept.id)).not.toBeNull();
        expect(await h.index.search(query(org, 'doomed'))).toEqual([]);
      });

      it('two processes purge: each partition by one at a time, and one whose process died is taken up', async () => {
        const blobs = new MemoryBlobs() as unknown as BlobStore;
        const clock = new FixedClock(new Date());
        const running = new Map<string, number>();
        let overlapped = false;
        /** Notes whether two slices of one partition ever run at once. */
        class Watched extends DocumentService {
          override async deletePartitionSlice(orgId: string, partition: string, limit: number) {
            const now = (running.get(partition) ?? 0) + 1;
            running.set(partition, now);
            if (now > 1) overlapped = true;
            try {
              await new Promise((resolve) => setTimeout(resolve, 5));
              return await super.deletePartitionSlice(orgId, partition, limit);
            } finally {
              running.set(partition, (running.get(partition) ?? 1) - 1);
            }
          }
        }
        const names = ['p1', 'p2', 'p3'];
        for (const name of names) {
          for (let i = 0; i < 6; i++)
            await indexedInto(h.store, org, [`gone ${name} ${i}`], { partition: name });
        }
        await indexedInto(h.store, org, ['kept'], { partition: 'kept' });
        const marker = new PartitionService(h.store, new DocumentService(h.store, blobs), clock);
        for (const name of names) await marker.delete(org, ALL_PARTITIONS, name);
        // A process took one purge and died: its lease lapses and another process goes on with it.
        expect(await h.purgeRows().claim('a-process-that-died', 50)).not.toBeNull();

        const services = [0, 1].map(() => new LeaseQueue(h.purgeRows(), { pollMs: 10, leaseMs: 2_000 }));
        const consumers = services.map((queue) =>
          queue.consume(new PartitionService(h.store, new Watched(h.store, blobs), clock, 2).purgeJob, {
            concurrency: 2,
          }),
        );
        try {
          await expect
            .poll(async () => (await h.store.listPartitions(org)).map((p) => p.name), { timeout: 15_000 })
            .toEqual(['kept']);
        } finally {
          await Promise.all(consumers.map((c) => c.stop()));
          await Promise.all(services.map((q) => q.close()));
        }
        expect(overlapped).toBe(false);
        for (const name of names) expect(await h.index.search(query(org, `gone ${name}`))).toEqual([]);
      });

      it('answers 404 for a partition that holds nothing or that the key may not see', async () => {
        const blobs = new MemoryBlobs() as unknown as BlobStore;
        const service = new PartitionService(
          h.store,
          new DocumentService(h.store, blobs),
          new FixedClock(new Date()),
        );
        await indexedInto(h.store, org, ['x'], { partition: 'secret' });
        for (const [access, name] of [
          [ALL_PARTITIONS, 'empty'],
          [accessOfKey(['other']), 'secret'],
        ] as const) {
          const error = await service.delete(org, access, name).catch((e: unknown) => e);
          expect((error as ApiError).status).toBe(404);
        }
        expect(await service.list(org, accessOfKey(['other']))).toEqual([]);
        expect(await h.store.listPartitions(org)).toEqual([
          { name: 'secret', documents: 1, chunks: 1, bytes: 0, status: 'active' },
        ]);
      });

      it('refuses a write into a partition marked for deletion and writes none of its rows', async () => {
        const old = await indexedInto(h.store, org, ['old one'], { partition: 'old', externalId: 'ext-1' });
        await h.store.markPartitionDeleting(org, 'old', new Date());
        const refusals = [
          [newDoc(org, { partition: 'new' }), newDoc(org, { partition: 'old' })],
          [newDoc(org, { partition: 'old', externalId: 'ext-1' })],
          [newDoc(org, { partition: 'old', externalId: 'ext-2' })],
        ];
        for (const docs of refusals) {
          const error = await h.store.createDocuments(docs).catch((e: unknown) => e);
          expect(error).toBeInstanceOf(ApiError);
          expect((error as ApiError).code).toBe('partition_deleting');
          for (const doc of docs) {
            if (doc.id !== old.id) expect(await h.store.getDocument(org, doc.id)).toBeNull();
          }
        }
        expect((await h.store.getDocument(org, old.id))?.version).toBe(1);
        // Another org's partition of the same name still takes documents.
        const elsewhere = newDoc(`org_${randomUUID()}`, { partition: 'old' });
        await h.store.createDocuments([elsewhere]);
        expect(await h.store.getDocument(elsewhere.orgId, elsewhere.id)).not.toBeNull();
      });

      it('leaves nothing behind when writes race the deletion of their partition', async () => {
        const blobs = new MemoryBlobs() as unknown as BlobStore;
        const service = new PartitionService(
          h.store,
          new DocumentService(h.store, blobs),
          new FixedClock(new Date()),
        );
        await indexedInto(h.store, org, ['first'], { partition: 'race' });
        const writes = Array.from({ length: 24 }, (_, i) =>
          h.store.createDocuments([
            newDoc(org, { partition: 'race', externalId: i % 3 === 0 ? `r${i}` : null }),
          ]),
        );
        const marked = service.delete(org, ALL_PARTITIONS, 'race');
        const outcomes = await Promise.allSettled([...writes, marked]);
        const refused = outcomes.filter((o) => o.status === 'rejected');
        for (const o of refused) expect((o.reason as ApiError).code).toBe('partition_deleting');
        // Marked, the partition takes nothing until its purge has finished.
        const late = await h.store
          .createDocuments([newDoc(org, { partition: 'race' })])
          .catch((e: unknown) => e);
        expect((late as ApiError).code).toBe('partition_deleting');
        await service.purge(org, 'race');
        expect((await h.store.listPartitions(org)).map((p) => p.name)).not.toContain('race');
        const reopened = await h.store.createDocuments([newDoc(org, { partition: 'race' })]);
        expect(reopened).toHaveLength(1);
      });
    });

    describe('property: a query returns exactly the matching documents of the partitions it may read', () => {
      const names = ['p0', 'p1', 'p2'] as const;
      const corpora = fc.array(fc.record({ partition: fc.constantFrom(...names), matches: fc.boolean() }), {
        minLength: 1,
        maxLength: 12,
      });
      const asks = fc.subarray([...names], { minLength: 1 });

      /** Indexes the documents in a new org; the ids a query asking `asked` must find. */
      async function corpus(docs: { partition: string; matches: boolean }[], asked: string[]) {
        org = `org_${randomUUID()}`;
        const expected: string[] = [];
        for (const d of docs) {
          const doc = await indexedInto(h.store, org, [d.matches ? 'wallaby sighting' : 'nothing here'], {
            partition: d.partition,
          });
          if (d.matches && asked.includes(d.partition)) expected.push(doc.id);
        }
        return expected;
      }

      it('equals the reference set for any assignment of partitions and any subset asked', async () => {
        h = await make({});
        await fc.assert(
          fc.asyncProperty(corpora, asks, async (docs, asked) => {
            const expected = await corpus(docs, asked);
            const hits = await h.index.search(query(org, 'wallaby', { topK: 100, partitions: asked }));
            expect(hits.map((hit) => hit.documentId).sort()).toEqual(expected.sort());
          }),
          { numRuns: 15 },
        );
      });

      it('under a row budget smaller than the matches, finds only those, and never fewer than the budget allows', async () => {
        const budget = 4;
        h = await make({ searchRowBudget: budget });
        await fc.assert(
          fc.asyncProperty(corpora, asks, async (docs, asked) => {
            const expected = await corpus(docs, asked);
            const hits = await h.index.search(query(org, 'wallaby', { topK: 100, partitions: asked }));
            const found = hits.map((hit) => hit.documentId);
            for (const id of found) expect(expected).toContain(id);
            expect(found.length).toBeGreaterThanOrEqual(Math.min(expected.length, budget));
          }),
          { numRuns: 15 },
        );
      });
    });
  });
}
