// Conformance suite for access lists, run against each backend's record store, keyword index and
// vector index: a request acting for principals sees only documents without an access list or
// whose list shares one of them, exactly and before ranking on every path (keyword, semantic,
// hybrid, reranked, list); an access list is kept, replaced by PATCH and by a new version, and a
// change checks who may make it in its own transaction; and a property test against a reference.
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DocumentService } from '../../src/domain/documents.js';
import { ApiError } from '../../src/domain/errors.js';
import { ALL_PARTITIONS, accessOfKey, accessOfRequest } from '../../src/domain/partitions.js';
import type { BlobStore, Embedder } from '../../src/domain/ports.js';
import { QueryService } from '../../src/domain/query.js';
import { QueryEmbeddings } from '../../src/domain/query-embeddings.js';
import type { NewVersion } from '../../src/domain/types.js';
import { UsageService } from '../../src/domain/usage.js';
import { FixedClock, MemoryBlobs, MemoryUsage } from '../domain/fakes.js';
import { indexedInto, list, newDoc, query, T0 } from './document-fixtures.js';
import type { PartitionBudgets, PartitionHarness } from './partitions.contract.js';

const D = 8;

/** A unit vector along `axis`, tilted a little towards the next one. */
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
    model: 'access-test',
    dimensions: () => D,
    embed: async (texts) => texts.map(() => unit(0, 0)),
    close: async () => {},
  };
}

const sorted = (ids: readonly string[]) => [...ids].sort();

export function accessContract(
  name: string,
  make: (budgets: PartitionBudgets) => Promise<PartitionHarness>,
): void {
  describe(`access lists: ${name}`, () => {
    let h: PartitionHarness;
    let org: string;

    afterEach(async () => {
      await h.close();
    });

    describe('exact before ranking', () => {
      let mine: string[];
      let open: string[];
      let profile: number;

      /** Ready documents of one chunk naming the quokka, with this access list and a vector along `axis`. */
      async function fill(access: string[] | null, count: number, axis: number) {
        const ids: string[] = [];
        for (let i = 0; i < count; i++) {
          const doc = await indexedInto(h.store, org, [`quokka report number ${i} of ${axis}`], { access });
          expect(
            await h.vectors.writeVectors(org, profile, [
              { documentId: doc.id, chunkIndex: 0, vector: unit(axis) },
            ]),
          ).toBe(true);
          ids.push(doc.id);
        }
        return ids;
      }

      beforeEach(async () => {
        // Budgets far below the 300 matches: every path that cuts before the access check would
        // lose the 3 a user may see.
        h = await make({ searchRowBudget: 20, minCandidates: 5, candidatesPerHit: 1 });
        org = `org_${randomUUID()}`;
        profile = await h.vectors.profileId({ provider: 'openai', model: 'access-test', dimensions: D });
        // The visible ones first, so they are the oldest matches, and farthest from the query vector.
        mine = await fill(['user:7', 'group:eng'], 3, 4);
        await fill(['group:sales'], 297, 0);
        open = await fill(null, 2, 5);
      });

      it('keyword: 3 of 302 matches are visible to user:7 besides the 2 open ones, and top_k 10 returns those 5', async () => {
        const hits = await h.index.search(query(org, 'quokka', { topK: 10, principals: ['user:7'] }));
        expect(sorted(hits.map((hit) => hit.documentId))).toEqual(sorted([...mine, ...open]));
        // No principals: only the documents without a list.
        const none = await h.index.search(query(org, 'quokka', { topK: 10, principals: [] }));
        expect(sorted(none.map((hit) => hit.documentId))).toEqual(sorted(open));
        // Unrestricted: a full page, mostly the sales group's.
        expect(await h.index.search(query(org, 'quokka', { topK: 10 }))).toHaveLength(10);
      });

      it('keyword: the access check holds with named documents and partitions too', async () => {
        const named = await h.index.search(
          query(org, 'quokka', { topK: 10, principals: ['group:eng'], documentIds: mine.slice(0, 2) }),
        );
        expect(sorted(named.map((hit) => hit.documentId))).toEqual(sorted(mine.slice(0, 2)));
        const elsewhere = await h.index.search(
          query(org, 'quokka', { topK: 10, principals: ['group:eng'], partitions: ['other'] }),
        );
        expect(elsewhere).toEqual([]);
      });

      it('semantic: the nearest vectors are all the sales group’s, and user:7 still gets its 3 and the open 2', async () => {
        const hits = await h.vectors.search({
          orgId: org,
          profileId: profile,
          vector: unit(0, 0),
          limit: 10,
          principals: ['user:7'],
        });
        expect(sorted(hits.map((hit) => hit.documentId))).toEqual(sorted([...mine, ...open]));
        const foreign = await h.vectors.search({
          orgId: org,
          profileId: profile,
          vector: unit(0, 0),
          limit: 10,
          principals: ['user:8'],
        });
        expect(sorted(foreign.map((hit) => hit.documentId))).toEqual(sorted(open));
      });

      it('keyword, semantic, hybrid and reranked through the query service, and a bound key', async () => {
        const embedder = fixedEmbedder();
        const semantic = {
          embedder,
          embeddings: new QueryEmbeddings(embedder),
          vectors: h.vectors,
          embeddingDeadlineMs: 5_000,
        };
        const usage = new UsageService(new MemoryUsage(), new FixedClock(new Date()));
        const service = new QueryService(h.index, usage, semantic);
        const asUser = accessOfRequest(ALL_PARTITIONS, ['user:7'], '/principals');
        for (const mode of ['keyword', 'semantic', 'hybrid'] as const) {
          const answer = await service.query(org, asUser, {
            query: 'quokka',
            topK: 10,
            filter: undefined,
            documentIds: null,
            mode,
          });
          expect(sorted(answer.hits.map((hit) => hit.documentId)), mode).toEqual(sorted([...mine, ...open]));
        }
        // Reranked, the candidates are the visible ones alone: a reranker that prefers the sales
        // group's text never sees it.
        const reranked = new QueryService(h.index, usage, semantic, null, {
          reranker: {
            provider: 'http',
            model: 'prefers-sales',
            score: async (_query, texts) => texts.map((text) => (text.includes(' of 0') ? 1 : 0)),
            close: async () => {},
          },
          deadlineMs: 5_000,
        });
        const answer = await reranked.query(org, asUser, {
          query: 'quokka',
          topK: 10,
          filter: undefined,
          documentIds: null,
          mode: 'hybrid',
          rerank: true,
        });
        expect(answer.degraded).toBe(false);
        expect(sorted(answer.hits.map((hit) => hit.documentId))).toEqual(sorted([...mine, ...open]));
        // A key bound to group:eng gets the same without naming it, may narrow to none of its own
        // principals (only the open documents), and may not name another.
        const bound = accessOfKey(null, ['group:eng', 'user:7']);
        const asKey = await service.query(org, bound, {
          query: 'quokka',
          topK: 10,
          filter: undefined,
          documentIds: null,
          mode: 'hybrid',
        });
        expect(sorted(asKey.hits.map((hit) => hit.documentId))).toEqual(sorted([...mine, ...open]));
        const narrowed = await service.query(org, accessOfRequest(bound, [], '/principals'), {
          query: 'quokka',
          topK: 10,
          filter: undefined,
          documentIds: null,
          mode: 'keyword',
        });
        expect(sorted(narrowed.hits.map((hit) => hit.documentId))).toEqual(sorted(open));
        const widened = (() => {
          try {
            return accessOfRequest(bound, ['group:sales'], '/principals');
          } catch (error) {
            return error;
          }
        })();
        expect(widened).toBeInstanceOf(ApiError);
        expect((widened as ApiError).code).toBe('principal_forbidden');
      });

      it('lists only what the principals may see, before the page is cut', async () => {
        const page = await h.store.listDocuments(list(org, { limit: 10, principals: ['group:eng'] }));
        expect(sorted(page.map((doc) => doc.id))).toEqual(sorted([...mine, ...open]));
      });
    });

    describe('records', () => {
      beforeEach(async () => {
        h = await make({});
        org = `org_${randomUUID()}`;
      });

      it('keeps a document’s access list, null when none was given', async () => {
        const plain = await indexedInto(h.store, org, ['plain']);
        const listed = await indexedInto(h.store, org, ['listed'], { access: ['group:eng', 'user:42'] });
        expect((await h.store.getDocument(org, plain.id))?.access).toBeNull();
        expect((await h.store.getDocument(org, listed.id))?.access).toEqual(['group:eng', 'user:42']);
        const seen = await h.store.listDocuments(list(org, { principals: ['user:42'] }));
        expect(sorted(seen.map((doc) => doc.id))).toEqual(sorted([plain.id, listed.id]));
        const other = await h.store.listDocuments(list(org, { principals: ['user:43'] }));
        expect(other.map((doc) => doc.id)).toEqual([plain.id]);
      });

      it('PATCH replaces and removes the list at once, and refuses a request that may not see the document', async () => {
        const doc = await indexedInto(h.store, org, ['patched wombat'], { access: ['group:eng'] });
        const sales = accessOfKey(null, ['group:sales']);
        // Not visible to the sales group: nothing changes, as for a missing document.
        expect(
          await h.store.updateMetadata(org, doc.id, () => ({ stolen: 'yes' }), {
            access: ['group:sales'],
            seenBy: sales,
          }),
        ).toBeNull();
        expect((await h.store.getDocument(org, doc.id))?.metadata).toEqual({});
        const replaced = await h.store.updateMetadata(org, doc.id, (m) => m, {
          access: ['group:sales'],
          seenBy: accessOfKey(null, ['group:eng']),
        });
        expect(replaced?.access).toEqual(['group:sales']);
        // The keyword index sees the change at once.
        const bySales = await h.index.search(query(org, 'wombat', { principals: ['group:sales'] }));
        expect(bySales.map((hit) => hit.documentId)).toEqual([doc.id]);
        expect(await h.index.search(query(org, 'wombat', { principals: ['group:eng'] }))).toEqual([]);
        const removed = await h.store.updateMetadata(org, doc.id, (m) => ({ ...m, team: 'x' }), {
          access: null,
        });
        expect(removed).toMatchObject({ access: null, metadata: { team: 'x' } });
        expect(await h.index.search(query(org, 'wombat', { principals: [] }))).toHaveLength(1);
        // Metadata alone keeps the list.
        await h.store.updateMetadata(org, doc.id, () => ({}), { access: ['user:1'] });
        expect((await h.store.updateMetadata(org, doc.id, () => ({ a: 'b' })))?.access).toEqual(['user:1']);
      });

      it('a new version by external_id takes its request’s list (none when absent); PUT content keeps or replaces it', async () => {
        const first = newDoc(org, { externalId: 'ticket-9', access: ['group:eng'] });
        await h.store.createDocuments([first]);
        await h.store.createDocuments([newDoc(org, { externalId: 'ticket-9', access: ['user:5'] })]);
        expect((await h.store.getDocument(org, first.id))?.access).toEqual(['user:5']);
        await h.store.createDocuments([newDoc(org, { externalId: 'ticket-9' })]);
        expect((await h.store.getDocument(org, first.id))?.access).toBeNull();
        const version = (over: Partial<NewVersion>): NewVersion => ({
          source: { type: 'text', filename: null, url: null, content_type: 'text/plain', bytes: null },
          chunkSize: 512,
          chunkOverlap: 64,
          metadata: null,
          text: 'new text',
          blobKey: null,
          fetchUrl: null,
          at: new Date(T0 + 60_000),
          ...over,
        });
        await h.store.startVersion(org, first.id, version({ access: ['group:hr'] }));
        expect((await h.store.getDocument(org, first.id))?.access).toEqual(['group:hr']);
        await h.store.startVersion(org, first.id, version({}));
        expect((await h.store.getDocument(org, first.id))?.access).toEqual(['group:hr']);
        await h.store.startVersion(org, first.id, version({ access: null }));
        expect((await h.store.getDocument(org, first.id))?.access).toBeNull();
      });

      it('a delete, a new version and an ingest by external_id check the access list while they hold the row', async () => {
        const doc = await indexedInto(h.store, org, ['guarded numbat'], { access: ['group:hr'] });
        const eng = accessOfKey(null, ['group:eng']);
        const hr = accessOfKey(null, ['group:hr']);
        // As a caller that read the document while its list still named group:eng would send them
        // after a PATCH replaced it: nothing happens, as for a missing document.
        expect(await h.store.deleteDocument(org, doc.id, eng)).toBeNull();
        const version: NewVersion = {
          source: { type: 'text', filename: null, url: null, content_type: 'text/plain', bytes: null },
          chunkSize: 512,
          chunkOverlap: 64,
          metadata: { taken: 'yes' },
          access: ['group:eng'],
          text: 'replaced text',
          blobKey: null,
          fetchUrl: null,
          at: new Date(T0 + 60_000),
        };
        expect(await h.store.startVersion(org, doc.id, { ...version, seenBy: eng })).toBeNull();
        const asRead = { version: 1, pendingVersion: null };
        expect(
          await h.store.startVersionIfSettled(org, doc.id, { ...version, seenBy: eng }, asRead),
        ).toBeNull();
        expect(await h.store.getDocument(org, doc.id)).toMatchObject({
          version: 1,
          status: 'ready',
          access: ['group:hr'],
          metadata: {},
        });
        // An ingest by the external_id of a document it may not see is refused whole.
        const keyed = newDoc(org, { externalId: 'payroll-7', access: ['group:hr'] });
        await h.store.createDocuments([keyed]);
        const other = newDoc(org, { text: 'unrelated' });
        const refused = await h.store
          .createDocuments([
            other,
            { ...newDoc(org, { externalId: 'payroll-7', access: null }), seenBy: eng },
          ])
          .catch((e: unknown) => e);
        expect((refused as ApiError).code).toBe('principal_forbidden');
        expect((refused as ApiError).status).toBe(403);
        expect(await h.store.getDocument(org, other.id)).toBeNull();
        expect(await h.store.getDocument(org, keyed.id)).toMatchObject({ version: 1, access: ['group:hr'] });
        // Who may see it does all three.
        const again = await h.store.createDocuments([
          { ...newDoc(org, { externalId: 'payroll-7' }), seenBy: hr },
        ]);
        expect(again[0]).toMatchObject({ id: keyed.id, version: 2, created: false });
        expect(await h.store.startVersion(org, doc.id, { ...version, seenBy: hr })).toMatchObject({
          version: 2,
        });
        expect(await h.store.deleteDocument(org, doc.id, accessOfKey(null, ['group:eng']))).not.toBeNull();
        expect(await h.store.getDocument(org, doc.id)).toBeNull();
      });

      it('the document service answers 404 for a document the principals may not see, on read, PATCH and delete', async () => {
        const service = new DocumentService(h.store, new MemoryBlobs() as unknown as BlobStore);
        const doc = await indexedInto(h.store, org, ['hidden'], { access: ['group:hr'] });
        const outsider = accessOfKey(null, ['group:eng']);
        for (const attempt of [
          () => service.get(org, outsider, doc.id),
          () => service.updateMetadata(org, outsider, doc.id, { a: 'b' }, null),
          () => service.delete(org, outsider, doc.id),
        ]) {
          const error = await attempt().catch((e: unknown) => e);
          expect((error as ApiError).status).toBe(404);
        }
        const kept = await h.store.getDocument(org, doc.id);
        expect(kept).toMatchObject({ access: ['group:hr'], metadata: {} });
        const deleted = await service.deleteMany(org, outsider, { filter: undefined, documentIds: [doc.id] });
        expect(deleted.deleted).toBe(0);
        expect(await h.store.getDocument(org, doc.id)).not.toBeNull();
        await service.delete(org, accessOfKey(null, ['group:hr']), doc.id);
        expect(await h.store.getDocument(org, doc.id)).toBeNull();
      });
    });

    describe('property: queries and lists return exactly what a reference says the request may see', () => {
      const partitions = ['p0', 'p1'] as const;
      const principals = ['u1', 'u2', 'g1'] as const;
      const documents = fc.array(
        fc.record({
          partition: fc.constantFrom(...partitions),
          access: fc.option(fc.subarray([...principals], { minLength: 1 }), { nil: null }),
          matches: fc.boolean(),
        }),
        { minLength: 1, maxLength: 10 },
      );
      const request = fc.record({
        keyPartitions: fc.option(fc.subarray([...partitions], { minLength: 1 }), { nil: null }),
        keyPrincipals: fc.option(fc.subarray([...principals]), { nil: null }),
        named: fc.option(fc.subarray([...principals]), { nil: null }),
      });

      interface Doc {
        partition: string;
        access: string[] | null;
        matches: boolean;
      }

      /** The reference: what a request with these partitions and principals may see. */
      function visible(doc: Doc, keyPartitions: readonly string[] | null, acting: readonly string[] | null) {
        const inPartition = keyPartitions === null || keyPartitions.includes(doc.partition);
        const allowed = acting === null || doc.access === null || doc.access.some((p) => acting.includes(p));
        return inPartition && allowed;
      }

      it('equals the reference for any documents, key and request', async () => {
        h = await make({});
        await fc.assert(
          fc.asyncProperty(documents, request, async (docs, req) => {
            org = `org_${randomUUID()}`;
            const ids: string[] = [];
            for (const d of docs) {
              const doc = await indexedInto(h.store, org, [d.matches ? 'wallaby sighting' : 'nothing here'], {
                partition: d.partition,
                access: d.access,
              });
              ids.push(doc.id);
            }
            const key = accessOfKey(req.keyPartitions, req.keyPrincipals);
            // A bound key names only its own principals: a name outside them is refused.
            const named =
              req.named !== null && req.keyPrincipals !== null
                ? req.named.filter((p) => req.keyPrincipals!.includes(p))
                : req.named;
            const access = accessOfRequest(key, named, '/principals');
            const acting = named ?? req.keyPrincipals;
            const seen = docs.flatMap((d, i) => (visible(d, req.keyPartitions, acting) ? [ids[i]!] : []));
            const matching = docs.flatMap((d, i) =>
              d.matches && visible(d, req.keyPartitions, acting) ? [ids[i]!] : [],
            );
            const hits = await h.index.search(
              query(org, 'wallaby', {
                topK: 100,
                partitions: access.partitions,
                principals: access.principals,
              }),
            );
            expect(sorted(hits.map((hit) => hit.documentId))).toEqual(sorted(matching));
            const service = new DocumentService(h.store, new MemoryBlobs() as unknown as BlobStore);
            const page = await service.list(org, access, {
              limit: 100,
              cursor: null,
              status: null,
              ids: null,
              contentSha256: null,
              filter: null,
            });
            expect(sorted(page.documents.map((doc) => doc.id))).toEqual(sorted(seen));
          }),
          { numRuns: 20 },
        );
      });
    });
  });
}
