// Conformance suite for DocumentStore: records, listing, the worker-side lifecycle (the keyword
// index sees a document when it turns ready, and never half-indexed), tenant isolation and
// delete. Every adapter (SQLite, PostgreSQL) runs these same tests, so the API behaves the same in
// embedded and scale-out mode. Ranking and filters are keyword-index.contract.ts's.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { DocumentStore, KeywordIndex } from '../../src/domain/ports.js';
import type { ChunkRow, DocumentRecord, ListQuery, NewDocument, NewVersion } from '../../src/domain/types.js';
import {
  canonicalText,
  createOne,
  type DocumentStoreHarness,
  type DocumentStoreOptions,
  eachTestOnFreshStore,
  FILLER,
  indexedInto,
  indexResult,
  list,
  newDoc,
  query,
  streamed,
  T0,
  where,
} from './document-fixtures.js';
import { URL_INPUT } from './job-document.js';

export function documentStoreContract(
  name: string,
  make: (options: DocumentStoreOptions) => Promise<DocumentStoreHarness>,
): void {
  describe(name, () => {
    let store: DocumentStore;
    let index: KeywordIndex;
    let orgA: string;
    let orgB: string;
    eachTestOnFreshStore(make, (setup) => {
      ({ store, index, orgA, orgB } = setup);
    });

    const indexed = (orgId: string, texts: string[], over: Partial<NewDocument> = {}) =>
      indexedInto(store, orgId, texts, over);
    const newVersionOf = (text: string): NewVersion => ({
      source: { type: 'text', filename: null, url: null, content_type: 'text/plain', bytes: null },
      chunkSize: 512,
      chunkOverlap: 64,
      metadata: null,
      text,
      blobKey: null,
      fetchUrl: null,
      at: new Date(T0 + 60_000),
    });

    describe('records', () => {
      it('reads back a created document as queued, with every field', async () => {
        const doc = newDoc(orgA, {
          metadata: { team: 'search', 'a.b': 'dotted', 'we"ird': 'quo"te', $x: '[1]', '': 'empty key' },
          source: {
            type: 'file',
            filename: 'report.pdf',
            url: null,
            content_type: 'application/pdf',
            bytes: 1234,
          },
          text: null,
          blobKey: 'ab/blob-key',
          chunkSize: 256,
          chunkOverlap: 32,
        });
        await store.createDocuments([doc]);
        const expected: DocumentRecord = {
          id: doc.id,
          orgId: orgA,
          externalId: null,
          partition: 'default',
          access: null,
          version: 1,
          pendingVersion: null,
          status: 'queued',
          source: doc.source,
          metadata: doc.metadata,
          chunkSize: 256,
          chunkOverlap: 32,
          tokenizer: 'o200k_base',
          chunkCount: null,
          tokenCount: null,
          contentSha256: null,
          ocrPages: null,
          language: null,
          requestedLanguage: null,
          error: null,
          attempts: 0,
          createdAt: new Date(T0),
          updatedAt: new Date(T0),
        };
        expect(await store.getDocument(orgA, doc.id)).toEqual(expected);
        expect(await store.loadJobInput(doc.id)).toEqual({
          record: expected,
          version: 1,
          text: null,
          blobKey: 'ab/blob-key',
          currentBlobKey: 'ab/blob-key',
          fetchUrl: null,
        });
      });

      it('keeps the input a worker needs for each kind of ingest', async () => {
        const text = newDoc(orgA, { text: 'hello world' });
        const url = newDoc(orgA, {
          text: null,
          fetchUrl: 'https://example.com/file.pdf?X-Amz-Signature=secret',
          source: {
            type: 'url',
            filename: null,
            url: 'https://example.com/file.pdf',
            content_type: null,
            bytes: null,
          },
        });
        await store.createDocuments([text, url]);
        expect(await store.loadJobInput(text.id)).toMatchObject({
          text: 'hello world',
          blobKey: null,
          fetchUrl: null,
        });
        const input = await store.loadJobInput(url.id);
        expect(input).toMatchObject({ text: null, blobKey: null, fetchUrl: url.fetchUrl });
        expect(input?.record.source.url).toBe('https://example.com/file.pdf');
      });

      it('commits a batch all or nothing', async () => {
        const existing = newDoc(orgA);
        await store.createDocuments([existing]);
        const fresh = newDoc(orgA);
        await expect(store.createDocuments([fresh, newDoc(orgA, { id: existing.id })])).rejects.toThrow();
        expect(await store.getDocument(orgA, fresh.id)).toBeNull();
        expect(await store.listDocuments(list(orgA))).toHaveLength(1);
        expect(await store.countPending()).toBe(1);
      });

      it('hides a document from every other org', async () => {
        const doc = newDoc(orgA);
        await store.createDocuments([doc]);
        expect(await store.getDocument(orgB, doc.id)).toBeNull();
        expect(await store.listDocuments(list(orgB))).toEqual([]);
        expect(await store.listDocuments(list(orgB, { ids: [doc.id] }))).toEqual([]);
        expect(await store.getDocument(orgA, randomUUID())).toBeNull();
      });

      it('lists the documents named by many external_ids in one read, the org’s only', async () => {
        const named = ['ext/a', 'ext/b', 'ext/c'].map((externalId) => newDoc(orgA, { externalId }));
        await store.createDocuments([...named, newDoc(orgA), newDoc(orgB, { externalId: 'ext/d' })]);
        const found = await store.listDocuments(
          list(orgA, { limit: 10, externalIds: ['ext/c', 'ext/a', 'ext/d', 'ext/none'] }),
        );
        expect(new Map(found.map((d) => [d.externalId, d.id]))).toEqual(
          new Map([
            ['ext/a', named[0]!.id],
            ['ext/c', named[2]!.id],
          ]),
        );
        expect(await store.listDocuments(list(orgA, { externalIds: [] }))).toEqual([]);
      });

      it('stores NUL and lone surrogates in their canonical form, the same on every read path', async () => {
        const metadata = { 'k\u0000ey': 'va\uD800l', plain: 'x\uDC00y\u0000z', emoji: '😀' };
        const doc = newDoc(orgA, {
          metadata,
          source: {
            type: 'file',
            filename: 'a\u0000b\uD83D.txt',
            url: null,
            content_type: 'text/plain',
            bytes: 3,
          },
        });
        await store.createDocuments([doc]);
        const canonicalMetadata = { key: 'va\uFFFDl', plain: 'x\uFFFDyz', emoji: '😀' };
        const got = await store.getDocument(orgA, doc.id);
        expect(got?.metadata).toEqual(canonicalMetadata);
        expect(got?.source.filename).toBe(canonicalText('a\u0000b\uD83D.txt'));
        expect((await store.listDocuments(list(orgA)))[0]?.metadata).toEqual(canonicalMetadata);

        const chunkText = 'alpha\u0000beta \uDC00 gamma 😀 delta\uD800';
        expect(await store.saveIndex(doc.id, indexResult([chunkText, ...FILLER]))).toBe(true);
        const hits = await index.search(query(orgA, 'gamma'));
        expect(hits).toHaveLength(1);
        expect(hits[0]?.text).toBe(canonicalText(chunkText));
        expect(hits[0]?.metadata).toEqual(canonicalMetadata);
        // Filters compare canonical forms.
        expect(
          await index.search(query(orgA, 'gamma', { filter: where({ key: ['va\uFFFDl'] }) })),
        ).toHaveLength(1);
        expect(await index.search(query(orgA, 'delta'))).toHaveLength(1);
      });
    });

    describe('listing', () => {
      it('lists newest first, ties broken by id, and pages through every document exactly once', async () => {
        const docs: NewDocument[] = [];
        for (let i = 0; i < 23; i++) {
          // Groups of three share a timestamp, so the id tie-break is exercised at page edges.
          docs.push(newDoc(orgA, { createdAt: new Date(T0 + Math.floor(i / 3) * 1000) }));
        }
        await store.createDocuments(docs.slice(0, 10));
        await store.createDocuments([newDoc(orgB), newDoc(orgB, { createdAt: new Date(T0 + 5000) })]);
        await store.createDocuments(docs.slice(10));

        const expected = [...docs]
          .sort(
            (x, y) =>
              y.createdAt.getTime() - x.createdAt.getTime() || (x.id < y.id ? 1 : x.id > y.id ? -1 : 0),
          )
          .map((d) => d.id);
        expect((await store.listDocuments(list(orgA))).map((d) => d.id)).toEqual(expected);

        const seen: string[] = [];
        let after: ListQuery['after'] = null;
        for (let page = 0; page < 10; page++) {
          const rows = await store.listDocuments(list(orgA, { limit: 5, after }));
          expect(rows.length).toBeLessThanOrEqual(5);
          if (rows.length === 0) break;
          seen.push(...rows.map((r) => r.id));
          const last = rows[rows.length - 1] as DocumentRecord;
          after = { createdAt: last.createdAt, id: last.id };
        }
        expect(seen).toEqual(expected);
      });

      it('filters by status, ids and content hash', async () => {
        const [q1, q2, ready, failed] = [newDoc(orgA), newDoc(orgA), newDoc(orgA), newDoc(orgA)] as [
          NewDocument,
          NewDocument,
          NewDocument,
          NewDocument,
        ];
        const other = newDoc(orgB);
        await store.createDocuments([q1, q2, ready, failed, other]);
        await store.saveIndex(ready.id, indexResult(['ready text'], { contentSha256: 'f'.repeat(64) }));
        await store.markFailed(failed.id, { code: 'corrupt', message: 'bad file' });

        const ids = async (q: Partial<ListQuery>) =>
          new Set((await store.listDocuments(list(orgA, q))).map((d) => d.id));
        expect(await ids({ status: 'queued' })).toEqual(new Set([q1.id, q2.id]));
        expect(await ids({ status: 'ready' })).toEqual(new Set([ready.id]));
        expect(await ids({ status: 'failed' })).toEqual(new Set([failed.id]));
        expect(await ids({ status: 'processing' })).toEqual(new Set());
        expect(await ids({ ids: [q1.id, ready.id, other.id, randomUUID()] })).toEqual(
          new Set([q1.id, ready.id]),
        );
        expect(await ids({ ids: [] })).toEqual(new Set());
        expect(await ids({ contentSha256: 'f'.repeat(64) })).toEqual(new Set([ready.id]));
        expect(await ids({ contentSha256: 'f'.repeat(64), status: 'queued' })).toEqual(new Set());
        expect(await store.listDocuments(list(orgA, { limit: 2 }))).toHaveLength(2);
      });
    });

    describe('worker lifecycle', () => {
      it('counts attempts and keeps the last error while retrying', async () => {
        const doc = newDoc(orgA);
        await store.createDocuments([doc]);
        expect(await store.markProcessing(doc.id)).toBe(true);
        let rec = await store.getDocument(orgA, doc.id);
        expect(rec).toMatchObject({ status: 'processing', attempts: 1, error: null });
        expect(rec?.updatedAt.getTime()).toBeGreaterThan(T0);

        expect(
          await store.markRetrying(doc.id, { code: 'url_unreachable', message: 'connection reset' }),
        ).toBe(true);
        rec = await store.getDocument(orgA, doc.id);
        expect(rec).toMatchObject({
          status: 'queued',
          attempts: 1,
          error: { code: 'url_unreachable', message: 'connection reset' },
        });

        expect(await store.markProcessing(doc.id)).toBe(true);
        expect(await store.getDocument(orgA, doc.id)).toMatchObject({
          status: 'processing',
          attempts: 2,
          error: null,
        });
      });

      it('saves an index: ready with counts, source details, and the input forgotten', async () => {
        const doc = newDoc(orgA, {
          text: null,
          blobKey: 'cd/upload',
          source: { type: 'file', filename: 'notes.md', url: null, content_type: null, bytes: 77 },
        });
        await store.createDocuments([doc]);
        await store.markProcessing(doc.id);
        const result = indexResult(['first chunk words', 'second chunk words here'], {
          contentSha256: 'b'.repeat(64),
          contentType: 'text/markdown',
        });
        expect(await store.saveIndex(doc.id, result)).toBe(true);
        const rec = await store.getDocument(orgA, doc.id);
        expect(rec).toMatchObject({
          status: 'ready',
          chunkCount: 2,
          tokenCount: result.tokenCount,
          contentSha256: 'b'.repeat(64),
          error: null,
          attempts: 1,
          source: { type: 'file', filename: 'notes.md', content_type: 'text/markdown', bytes: 77 },
        });
        const input = await store.loadJobInput(doc.id);
        expect(input).toMatchObject({ text: null, fetchUrl: null });
      });

      it('records how many pages OCR recognised, batched or streamed, and null when not told', async () => {
        const scanned = newDoc(orgA, { text: null, blobKey: 'ef/scan' });
        const streamedScan = newDoc(orgA, { text: null, blobKey: 'ef/scan2' });
        const plain = newDoc(orgA, { text: 'typed text' });
        await store.createDocuments([scanned, streamedScan, plain]);
        for (const doc of [scanned, streamedScan, plain]) await store.markProcessing(doc.id);
        expect(await store.saveIndex(scanned.id, indexResult(['recognised words'], { ocrPages: 3 }))).toBe(
          true,
        );
        expect(
          await store.saveIndex(streamedScan.id, streamed(indexResult(['a', 'b'], { ocrPages: 0 }), 2)),
        ).toBe(true);
        expect(await store.saveIndex(plain.id, indexResult(['typed text']))).toBe(true);
        expect((await store.getDocument(orgA, scanned.id))?.ocrPages).toBe(3);
        expect((await store.getDocument(orgA, streamedScan.id))?.ocrPages).toBe(0);
        expect((await store.getDocument(orgA, plain.id))?.ocrPages).toBeNull();
      });

      it('clears the stored text once indexed', async () => {
        const doc = newDoc(orgA, { text: 'secret input text' });
        await store.createDocuments([doc]);
        await store.saveIndex(doc.id, indexResult(['secret input text']));
        expect((await store.loadJobInput(doc.id))?.text).toBeNull();
      });

      it('replaces, never appends, when an index is saved twice', async () => {
        const doc = newDoc(orgA);
        await store.createDocuments([doc]);
        await store.saveIndex(doc.id, indexResult(['walrus one', 'walrus two', ...FILLER]));
        await store.saveIndex(doc.id, indexResult(['walrus one', 'narwhal only in the second', ...FILLER]));
        await store.saveIndex(doc.id, indexResult(['walrus one', 'narwhal only in the second', ...FILLER]));

        const walrus = await index.search(query(orgA, 'walrus'));
        expect(walrus.map((hit) => hit.chunkIndex)).toEqual([0]);
        const narwhal = await index.search(query(orgA, 'narwhal'));
        expect(narwhal.map((hit) => [hit.documentId, hit.chunkIndex])).toEqual([[doc.id, 1]]);
        expect((await store.getDocument(orgA, doc.id))?.chunkCount).toBe(2 + FILLER.length);
      });

      it('records a URL download and forgets the signed URL', async () => {
        const doc = newDoc(orgA, URL_INPUT);
        await store.createDocuments([doc]);
        expect(
          await store.attachBlob(doc.id, { blobKey: 'ef/dl', contentType: 'application/pdf', bytes: 4096 }),
        ).toBe(true);
        const input = await store.loadJobInput(doc.id);
        expect(input).toMatchObject({ blobKey: 'ef/dl', fetchUrl: null, text: null });
        expect(input?.record.source).toEqual({
          type: 'url',
          filename: null,
          url: 'https://example.com/a.pdf',
          content_type: 'application/pdf',
          bytes: 4096,
        });
      });

      it('marks a document failed and forgets its input', async () => {
        const doc = newDoc(orgA, {
          text: 'input',
          fetchUrl: 'https://example.com/x?sig=1',
          source: {
            type: 'url',
            filename: null,
            url: 'https://example.com/x',
            content_type: null,
            bytes: null,
          },
        });
        await store.createDocuments([doc]);
        await store.markProcessing(doc.id);
        expect(await store.markFailed(doc.id, { code: 'unsupported_format', message: 'not a PDF' })).toBe(
          true,
        );
        expect(await store.getDocument(orgA, doc.id)).toMatchObject({
          status: 'failed',
          error: { code: 'unsupported_format', message: 'not a PDF' },
          attempts: 1,
        });
        expect(await store.loadJobInput(doc.id)).toMatchObject({ text: null, fetchUrl: null });
      });

      it('counts queued and processing documents across orgs as pending', async () => {
        const docs = [newDoc(orgA), newDoc(orgA), newDoc(orgB), newDoc(orgB)] as [
          NewDocument,
          NewDocument,
          NewDocument,
          NewDocument,
        ];
        await store.createDocuments(docs);
        expect(await store.countPending()).toBe(4);
        await store.markProcessing(docs[0].id);
        expect(await store.countPending()).toBe(4);
        await store.saveIndex(docs[0].id, indexResult(['x']));
        await store.markFailed(docs[2].id, { code: 'corrupt', message: 'x' });
        expect(await store.countPending()).toBe(2);
        await store.deleteDocument(orgA, docs[1].id);
        expect(await store.countPending()).toBe(1);
      });

      it('lists unfinished documents not updated since a cutoff, oldest first', async () => {
        const old = (minutes: number) => new Date(Date.now() - minutes * 60_000);
        const a = newDoc(orgA, { createdAt: old(50) });
        const b = newDoc(orgB, { createdAt: old(40) });
        const c = newDoc(orgA, { createdAt: old(45) });
        const processing = newDoc(orgA, { createdAt: old(55) });
        const retried = newDoc(orgA, { createdAt: old(60) });
        const recent = newDoc(orgA, { createdAt: old(1) });
        const url = newDoc(orgA, {
          createdAt: old(35),
          text: null,
          fetchUrl: 'https://example.com/a.pdf?sig=1',
        });
        await store.createDocuments([a, b, c, processing, retried, recent, url]);
        await store.markProcessing(processing.id);
        await store.markProcessing(retried.id);
        await store.markRetrying(retried.id, { code: 'timeout', message: 'slow' });

        const cutoff = old(30);
        expect(await store.listStaleQueued(cutoff, 10)).toEqual([
          { documentId: a.id, orgId: orgA, needsDownload: false },
          { documentId: c.id, orgId: orgA, needsDownload: false },
          { documentId: b.id, orgId: orgB, needsDownload: false },
          { documentId: url.id, orgId: orgA, needsDownload: true },
        ]);
        expect(await store.listStaleQueued(cutoff, 2)).toHaveLength(2);

        // Documents in processing count too (a queue that lost its job must not strand them);
        // finished ones never do.
        const done = newDoc(orgA, { createdAt: old(70) });
        const failed = newDoc(orgA, { createdAt: old(70) });
        await store.createDocuments([done, failed]);
        await store.saveIndex(done.id, {
          chunks: [],
          tokenCount: 0,
          contentSha256: '0'.repeat(64),
          contentType: null,
          bytes: null,
        });
        await store.markFailed(failed.id, { code: 'corrupt', message: 'bad' });
        const later = await store.listStaleQueued(new Date(Date.now() + 60_000), 100);
        const ids = later.map((r) => r.documentId);
        expect(ids).toEqual(expect.arrayContaining([processing.id, retried.id, a.id, url.id]));
        expect(ids).not.toContain(done.id);
        expect(ids).not.toContain(failed.id);
        expect(ids).toHaveLength(7);
      });
    });

    describe('large documents', () => {
      // 600 chunks of ~1.3 KB: over half a megabyte of text, more than one write of an adapter
      // that writes (or deletes) a large index in slices (SQLite) holds.
      const LARGE = 600;
      const largeTexts = (word: string) =>
        Array.from({ length: LARGE }, (_, i) => `${word} part ${i} ${FILLER[i % FILLER.length]} `.repeat(20));

      it('is never found half-indexed: nothing matches until every chunk does', async () => {
        await indexed(orgA, ['a small walrus note that is ready already']);
        const doc = newDoc(orgA);
        await store.createDocuments([doc]);
        await store.markProcessing(doc.id);
        let done = false;
        const saving = store.saveIndex(doc.id, indexResult(largeTexts('walrus'))).finally(() => {
          done = true;
        });
        const seen = new Set<number>();
        while (!done) {
          const hits = await index.search(query(orgA, 'walrus', { topK: 100 }));
          const status = (await store.getDocument(orgA, doc.id))?.status;
          const mine = hits.filter((hit) => hit.documentId === doc.id).length;
          // Read after the search: a document ready by then may have been ready for it, too.
          if (status !== 'ready') expect(mine).toBe(0);
          seen.add(mine);
          await new Promise((resolve) => setImmediate(resolve));
        }
        expect(await saving).toBe(true);
        expect(await index.search(query(orgA, 'walrus', { topK: 100 }))).toHaveLength(100);
        expect(
          await index.search(query(orgA, 'walrus note', { topK: 100, documentIds: [doc.id] })),
        ).toHaveLength(100);
        expect((await store.getDocument(orgA, doc.id))?.chunkCount).toBe(LARGE);
      });

      it('keeps one set of chunks when a second run indexes a document the first is still writing', async () => {
        const doc = newDoc(orgA);
        await store.createDocuments([doc]);
        await store.markProcessing(doc.id);
        // The first run (a worker that lost its job) and the second overlap.
        const first = store.saveIndex(doc.id, indexResult(largeTexts('oldrun')));
        await new Promise((resolve) => setImmediate(resolve));
        const second = store.saveIndex(doc.id, indexResult(largeTexts('newrun').slice(0, LARGE - 1)));
        await Promise.all([first, second]);
        // The runs take turns and the last to write wins. Which one that is depends on which took
        // its turn first (on PostgreSQL a busy machine can let the second in first): either way,
        // exactly one run's chunks are left, whole.
        const oldHits = await index.search(query(orgA, 'oldrun', { topK: 100 }));
        const newHits = await index.search(query(orgA, 'newrun', { topK: 100 }));
        const [left, gone, count] =
          newHits.length > 0 ? [newHits, oldHits, LARGE - 1] : [oldHits, newHits, LARGE];
        expect(gone).toEqual([]);
        expect(left).toHaveLength(100);
        expect(new Set(left.map((hit) => hit.chunkIndex)).size).toBe(100);
        expect(await store.getDocument(orgA, doc.id)).toMatchObject({ status: 'ready', chunkCount: count });
      });

      it('indexes chunks that arrive in batches exactly as the same chunks in a list', async () => {
        for (const [word, texts] of [
          ['otter', largeTexts('otter')],
          ['beaver', ['a beaver dam', 'beaver lodge', ...FILLER]],
        ] as const) {
          const doc = newDoc(orgA);
          await store.createDocuments([doc]);
          const listed = indexResult([...texts], { contentType: 'text/plain', bytes: 10 });
          expect(await store.saveIndex(doc.id, streamed(listed, 7))).toBe(true);
          expect(await store.getDocument(orgA, doc.id)).toMatchObject({
            status: 'ready',
            chunkCount: texts.length,
            tokenCount: listed.tokenCount,
            contentSha256: listed.contentSha256,
          });
          const hits = await index.search(query(orgA, word, { topK: 100 }));
          expect(hits).toHaveLength(Math.min(100, texts.length - (word === 'beaver' ? FILLER.length : 0)));
          expect(hits.every((hit) => hit.documentId === doc.id)).toBe(true);
        }
      });

      it('stops reading the batches of a document deleted meanwhile', async () => {
        for (const texts of [largeTexts('lynx'), ['one lynx']]) {
          const doc = newDoc(orgA);
          await store.createDocuments([doc]);
          await store.deleteDocument(orgA, doc.id);
          // A source that notices being let go: read to its end, or told to stop (return()).
          const list = indexResult(texts).chunks;
          let read = 0;
          let closed = false;
          const chunks: AsyncIterable<readonly ChunkRow[]> = {
            [Symbol.asyncIterator]: () => ({
              next: async () =>
                read < list.length
                  ? { done: false, value: [list[read++]!] }
                  : { done: true as const, value: undefined },
              return: async () => {
                closed = true;
                return { done: true as const, value: undefined };
              },
            }),
          };
          const result = { chunks, totals: () => ({ tokenCount: 1, contentSha256: 'c'.repeat(64) }) };
          expect(await store.saveIndex(doc.id, { ...result, contentType: null, bytes: null })).toBe(false);
          expect(closed || read === list.length).toBe(true);
          expect(await index.search(query(orgA, 'lynx'))).toEqual([]);
        }
      });

      it('deletes a large document at once: no read of its org finds it again', async () => {
        const small = await indexed(orgA, ['a manatee grazes on sea grass']);
        const doc = await indexed(orgA, largeTexts('manatee'));
        expect(await index.search(query(orgA, 'manatee', { topK: 5 }))).toHaveLength(5);
        expect(await store.deleteDocument(orgA, doc.id)).toEqual({ blobKey: null, pendingBlobKey: null });
        expect(await store.getDocument(orgA, doc.id)).toBeNull();
        expect((await store.listDocuments(list(orgA))).map((d) => d.id)).toEqual([small.id]);
        expect(await store.listDocuments(list(orgA, { ids: [doc.id] }))).toEqual([]);
        for (const over of [{}, { documentIds: [doc.id] }, { filter: where({ team: ['x'] }) }]) {
          const hits = await index.search(query(orgA, 'manatee grazes', { topK: 100, ...over }));
          expect(hits.map((hit) => hit.documentId)).toEqual(
            'documentIds' in over || 'filter' in over ? [] : [small.id],
          );
        }
        expect(await store.deleteDocument(orgA, doc.id)).toBeNull();
        expect(await store.saveIndex(doc.id, indexResult(['manatee again']))).toBe(false);
        expect(await store.countPending()).toBe(0);
      });

      it('writes nothing more once the document is deleted while its index is written', async () => {
        const doc = newDoc(orgA);
        await store.createDocuments([doc]);
        await store.markProcessing(doc.id);
        const saving = store.saveIndex(doc.id, indexResult(largeTexts('narwhal')));
        await new Promise((resolve) => setImmediate(resolve));
        expect(await store.deleteDocument(orgA, doc.id)).not.toBeNull();
        await saving;
        expect(await store.getDocument(orgA, doc.id)).toBeNull();
        expect(await index.search(query(orgA, 'narwhal', { topK: 100 }))).toEqual([]);
        // Its chunks are gone too, not only hidden: a new document with the same words is found
        // alone, and the document cannot come back.
        const other = await indexed(orgA, ['one narwhal sighting']);
        expect(
          (await index.search(query(orgA, 'narwhal', { topK: 100 }))).map((hit) => hit.documentId),
        ).toEqual([other.id]);
        expect(await store.saveIndex(doc.id, indexResult(['narwhal again']))).toBe(false);
      });
    });

    describe('chunks read back', () => {
      it('lists a document’s chunks in index order from a position, only for its org', async () => {
        const doc = await indexed(orgA, ['zero', 'one', 'two', 'three', 'four']);
        const first = await store.listChunks(orgA, doc.id, { afterIndex: -1, limit: 2 });
        expect(first).toEqual({
          version: 1,
          chunks: [
            {
              index: 0,
              text: 'zero',
              tokenCount: 1,
              charStart: 0,
              charEnd: 4,
              pageStart: null,
              pageEnd: null,
            },
            {
              index: 1,
              text: 'one',
              tokenCount: 1,
              charStart: 4,
              charEnd: 7,
              pageStart: null,
              pageEnd: null,
            },
          ],
        });
        expect(
          (await store.listChunks(orgA, doc.id, { afterIndex: 1, limit: 10 }))?.chunks.map((c) => c.text),
        ).toEqual(['two', 'three', 'four']);
        expect(await store.listChunks(orgA, doc.id, { afterIndex: 4, limit: 10 })).toEqual({
          version: 1,
          chunks: [],
        });
        expect(await store.listChunks(orgB, doc.id, { afterIndex: -1, limit: 10 })).toBeNull();
        expect(await store.listChunks(orgA, randomUUID(), { afterIndex: -1, limit: 10 })).toBeNull();
      });
    });

    describe('metadata update', () => {
      it('replaces the metadata with what the update makes of it, stamps updated_at, and filters see it', async () => {
        const doc = await indexed(orgA, ['a quokka in the metadata test'], { metadata: { team: 'red' } });
        const before = await store.getDocument(orgA, doc.id);
        await new Promise((resolve) => setTimeout(resolve, 5));
        const seen: unknown[] = [];
        const updated = await store.updateMetadata(orgA, doc.id, (current) => {
          seen.push({ ...current });
          return { team: 'blue', 'we"ird.key': 'v\u0000al' };
        });
        expect(seen).toEqual([{ team: 'red' }]);
        expect(updated).toMatchObject({
          id: doc.id,
          status: 'ready',
          metadata: { team: 'blue', 'we"ird.key': 'val' },
        });
        expect(updated!.updatedAt.getTime()).toBeGreaterThan(before!.updatedAt.getTime());
        expect(await store.getDocument(orgA, doc.id)).toEqual(updated);
        expect(await index.search(query(orgA, 'quokka', { filter: where({ team: ['red'] }) }))).toEqual([]);
        expect(await index.search(query(orgA, 'quokka', { filter: where({ team: ['blue'] }) }))).toHaveLength(
          1,
        );
      });

      it('answers null for another org’s or a missing document and changes nothing; a throwing update changes nothing', async () => {
        const doc = newDoc(orgA, { metadata: { keep: 'me' } });
        await store.createDocuments([doc]);
        expect(await store.updateMetadata(orgB, doc.id, () => ({ stolen: 'yes' }))).toBeNull();
        expect(await store.updateMetadata(orgA, randomUUID(), () => ({}))).toBeNull();
        await expect(
          store.updateMetadata(orgA, doc.id, () => {
            throw new Error('refused');
          }),
        ).rejects.toThrow('refused');
        expect((await store.getDocument(orgA, doc.id))?.metadata).toEqual({ keep: 'me' });
      });

      it('applies concurrent updates one after the other: none is lost', async () => {
        const doc = newDoc(orgA);
        await store.createDocuments([doc]);
        await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            store.updateMetadata(orgA, doc.id, (current) => ({ ...current, [`k${i}`]: String(i) })),
          ),
        );
        expect(Object.keys((await store.getDocument(orgA, doc.id))!.metadata).sort()).toEqual(
          Array.from({ length: 10 }, (_, i) => `k${i}`).sort(),
        );
      });
    });

    describe('delete', () => {
      it('removes the document and its chunks at once, and returns the blob to remove', async () => {
        const file = await indexed(orgA, ['pangolin scales', ...FILLER], {
          text: null,
          blobKey: 'aa/blob',
          source: { type: 'file', filename: 'p.txt', url: null, content_type: 'text/plain', bytes: 10 },
        });
        const text = await indexed(orgA, ['pangolin diet']);
        expect(await index.search(query(orgA, 'pangolin'))).toHaveLength(2);

        expect(await store.deleteDocument(orgA, file.id)).toEqual({
          blobKey: 'aa/blob',
          pendingBlobKey: null,
        });
        expect(await store.getDocument(orgA, file.id)).toBeNull();
        expect((await index.search(query(orgA, 'pangolin'))).map((hit) => hit.documentId)).toEqual([text.id]);
        expect(await index.search(query(orgA, 'pangolin scales', { documentIds: [file.id] }))).toEqual([]);
        expect((await store.listDocuments(list(orgA))).map((d) => d.id)).toEqual([text.id]);

        expect(await store.deleteDocument(orgA, text.id)).toEqual({ blobKey: null, pendingBlobKey: null });
        expect(await store.deleteDocument(orgA, text.id)).toBeNull();
        expect(await index.search(query(orgA, 'pangolin'))).toEqual([]);
      });

      it('refuses another org’s delete and leaves the document intact', async () => {
        const doc = await indexed(orgA, ['armadillo shell']);
        expect(await store.deleteDocument(orgB, doc.id)).toBeNull();
        expect(await store.getDocument(orgA, doc.id)).not.toBeNull();
        expect(await index.search(query(orgA, 'armadillo'))).toHaveLength(1);
      });

      it('turns every worker-side write on a deleted document into a no-op', async () => {
        const doc = newDoc(orgA);
        await store.createDocuments([doc]);
        await store.markProcessing(doc.id);
        await store.deleteDocument(orgA, doc.id);

        expect(await store.loadJobInput(doc.id)).toBeNull();
        expect(await store.markProcessing(doc.id)).toBe(false);
        expect(await store.markRetrying(doc.id, { code: 'timeout', message: 'x' })).toBe(false);
        expect(await store.attachBlob(doc.id, { blobKey: 'k', contentType: 'text/plain', bytes: 1 })).toBe(
          false,
        );
        expect(await store.saveIndex(doc.id, indexResult(['okapi stripes']))).toBe(false);
        expect(await store.markFailed(doc.id, { code: 'corrupt', message: 'x' })).toBe(false);

        // Nothing came back: not the record, not the chunks.
        expect(await store.getDocument(orgA, doc.id)).toBeNull();
        expect(await store.listDocuments(list(orgA))).toEqual([]);
        expect(await index.search(query(orgA, 'okapi'))).toEqual([]);
        expect(await store.countPending()).toBe(0);
      });
    });

    /**
     * An index write of version 2 of a ready document that stops after its first batch until
     * released: a long write in progress (a large file being extracted and indexed).
     */
    const heldWrite = async (orgId: string, externalId: string) => {
      const started = await createOne(store, { ...newDoc(orgId), externalId });
      expect(await store.saveIndex(started.id, indexResult(['walrus old text', ...FILLER]))).toBe(true);
      expect((await store.startVersion(orgId, started.id, newVersionOf('narwhal')))?.version).toBe(2);
      expect(await store.markProcessing(started.id, 2)).toBe(true);
      let release = () => {};
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      let reached = () => {};
      const waiting = new Promise<void>((resolve) => {
        reached = resolve;
      });
      const rows = indexResult(Array.from({ length: 40 }, (_, i) => `narwhal new part ${i}`));
      const chunks = (async function* () {
        yield rows.chunks.slice(0, 20);
        reached();
        await gate;
        yield rows.chunks.slice(20);
      })();
      const saving = store.saveIndex(started.id, { ...rows, chunks, totals: () => rows, version: 2 });
      await waiting;
      return { id: started.id, saving, release };
    };
    /** Whether `promise` settles within `ms` (generous: the point is "at once", not "after the write"). */
    const settlesWithin = (promise: Promise<unknown>, ms: number) =>
      Promise.race([
        promise.then(() => true),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms)),
      ]);

    describe('delete during an index write', () => {
      // The write waits for the test to release it, so a delete that waited for the write would
      // wait forever: 10 s only bounds how long the test takes to say so.
      it('answers a delete at once, hides the document from every read, and the write leaves nothing', async () => {
        const held = await heldWrite(orgA, 'ext/held');
        try {
          const deleting = store.deleteDocument(orgA, held.id);
          expect(await settlesWithin(deleting, 10_000)).toBe(true);
          expect(await deleting).toEqual({ blobKey: null, pendingBlobKey: null });
          expect(await store.getDocument(orgA, held.id)).toBeNull();
          expect(await store.listDocuments(list(orgA))).toEqual([]);
          expect(await store.listChunks(orgA, held.id, { afterIndex: -1, limit: 10 })).toBeNull();
          expect(await index.search(query(orgA, 'walrus narwhal', { topK: 100 }))).toEqual([]);
          expect(await store.loadJobInput(held.id)).toBeNull();
          expect(await store.countPending()).toBe(0);
          // Deleted once: a second delete finds nothing, and the external_id is free again.
          expect(await store.deleteDocument(orgA, held.id)).toBeNull();
          expect(await store.startVersion(orgA, held.id, newVersionOf('again'))).toBeNull();
        } finally {
          held.release();
        }
        expect(await held.saving).toBe(false);
        expect(await store.getDocument(orgA, held.id)).toBeNull();
        expect(await index.search(query(orgA, 'walrus narwhal', { topK: 100 }))).toEqual([]);
        const again = await createOne(store, { ...newDoc(orgA), externalId: 'ext/held' });
        expect(again).toMatchObject({ created: true, version: 1 });
        expect(await store.saveIndex(again.id, indexResult(['one narwhal']))).toBe(true);
        expect(
          (await index.search(query(orgA, 'narwhal', { topK: 100 }))).map((hit) => hit.documentId),
        ).toEqual([again.id]);
      });

      it('answers 15 concurrent deletes at once: one deletes, the others find nothing', async () => {
        const held = await heldWrite(orgA, 'ext/many');
        let answers: unknown[] = [];
        try {
          const deleting = Promise.all(Array.from({ length: 15 }, () => store.deleteDocument(orgA, held.id)));
          expect(await settlesWithin(deleting, 10_000)).toBe(true);
          answers = await deleting;
        } finally {
          held.release();
        }
        expect(answers.filter((a) => a !== null)).toHaveLength(1);
        expect(await held.saving).toBe(false);
        expect(await store.getDocument(orgA, held.id)).toBeNull();
      });

      it('purges an org at once while a write holds one of its documents; nothing of it is left', async () => {
        const held = await heldWrite(orgA, 'ext/purged');
        const kept = await indexed(orgB, ['walrus of another org']);
        try {
          const purging = store.purgeOrg(orgA);
          expect(await settlesWithin(purging, 10_000)).toBe(true);
          expect((await purging).documents).toBe(1);
          expect(await store.getDocument(orgA, held.id)).toBeNull();
          expect(await store.listDocuments(list(orgA))).toEqual([]);
          expect(await index.search(query(orgA, 'walrus narwhal', { topK: 100 }))).toEqual([]);
        } finally {
          held.release();
        }
        expect(await held.saving).toBe(false);
        expect(await store.purgeOrg(orgA)).toEqual({ documents: 0, chunks: 0, blobKeys: [] });
        expect((await index.search(query(orgB, 'walrus'))).map((hit) => hit.documentId)).toEqual([kept.id]);
      });
    });

    describe('purge an org', () => {
      // More chunks than one slice of an adapter that deletes a large index in slices (SQLite).
      const largeTexts = (word: string) =>
        Array.from({ length: 600 }, (_, i) => `${word} part ${i} ${FILLER[i % FILLER.length]}`);

      it('removes every document of the org with its chunks, large ones too, and nothing of another org', async () => {
        const file = await indexed(orgA, ['quokka smiles', 'quokka hops'], {
          text: null,
          blobKey: 'ab/quokka',
          source: { type: 'file', filename: 'q.txt', url: null, content_type: 'text/plain', bytes: 10 },
        });
        const large = await indexed(orgA, largeTexts('quokka'));
        const queued = newDoc(orgA, { fetchUrl: 'https://example.com/q.pdf', text: null });
        await store.createDocuments([queued]);
        const kept = await indexed(orgB, ['quokka of another org']);

        const receipt = await store.purgeOrg(orgA);
        expect(receipt.documents).toBe(3);
        expect(receipt.chunks).toBe(2 + largeTexts('quokka').length);
        expect(receipt.blobKeys).toEqual(['ab/quokka']);

        for (const doc of [file, large, queued]) expect(await store.getDocument(orgA, doc.id)).toBeNull();
        expect(await store.listDocuments(list(orgA))).toEqual([]);
        expect(await index.search(query(orgA, 'quokka', { topK: 100 }))).toEqual([]);
        expect(await store.countPending()).toBe(0);
        // A job still queued for one of them finds nothing to run and cannot bring it back.
        expect(await store.loadJobInput(queued.id)).toBeNull();
        expect(await store.markProcessing(queued.id)).toBe(false);
        expect(await store.saveIndex(large.id, indexResult(['quokka again']))).toBe(false);
        expect(await store.getDocument(orgA, large.id)).toBeNull();

        expect((await index.search(query(orgB, 'quokka'))).map((hit) => hit.documentId)).toEqual([kept.id]);
        expect((await store.listChunks(orgB, kept.id, { afterIndex: -1, limit: 10 }))?.chunks).toHaveLength(
          1,
        );
        expect(await store.purgeOrg(orgA)).toEqual({ documents: 0, chunks: 0, blobKeys: [] });

        // The org's words are found again for a document it adds afterwards.
        const again = await indexed(orgA, ['a new quokka']);
        expect((await index.search(query(orgA, 'quokka'))).map((hit) => hit.documentId)).toEqual([again.id]);
      });
    });
  });
}
