// Conformance suite for DocumentStore: records, the worker-side lifecycle, tenant isolation and
// lexical search. Every adapter (SQLite + FTS5, PostgreSQL + tsvector) runs these same tests, so
// the API behaves the same in embedded and scale-out mode.
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DocumentStore } from '../../src/domain/ports.js';
import type {
  ChunkList,
  ChunkRow,
  DocumentRecord,
  IndexResult,
  ListQuery,
  NewDocument,
  SearchHit,
  SearchQuery,
} from '../../src/domain/types.js';
import { URL_INPUT } from './job-document.js';

export interface DocumentStoreHarness {
  store: DocumentStore;
  close(): Promise<void>;
}

/** Constructor options every adapter takes; a harness passes them on to its store. */
export interface DocumentStoreOptions {
  /** Most matching chunks one query may rank (the adapters default to 20,000). */
  searchRowBudget?: number;
}

/**
 * The one form every adapter stores strings in (PostgreSQL cannot hold NUL; UTF-8 cannot hold a
 * lone surrogate): NUL removed, each lone surrogate replaced by U+FFFD. The HTTP edge cleans input
 * the same way; the stores do it too so no adapter can diverge.
 */
export function canonicalText(s: string): string {
  return s.replaceAll('\u0000', '').replace(/[\uD800-\uDFFF]/gu, '\uFFFD');
}

const T0 = Date.parse('2025-06-01T12:00:00.000Z');

function newDoc(orgId: string, over: Partial<NewDocument> = {}): NewDocument {
  return {
    id: randomUUID(),
    orgId,
    source: { type: 'text', filename: null, url: null, content_type: 'text/plain', bytes: null },
    metadata: {},
    chunkSize: 512,
    chunkOverlap: 64,
    tokenizer: 'o200k_base',
    createdAt: new Date(T0),
    text: 'some input text',
    blobKey: null,
    fetchUrl: null,
    ...over,
  };
}

function chunks(texts: string[]): ChunkRow[] {
  let offset = 0;
  return texts.map((text, index) => {
    const row: ChunkRow = {
      index,
      text,
      tokenCount: text.split(/\s+/).filter(Boolean).length,
      charStart: offset,
      charEnd: offset + text.length,
      pageStart: null,
      pageEnd: null,
    };
    offset += text.length;
    return row;
  });
}

type ListedIndex = ChunkList & Pick<IndexResult, 'contentType' | 'bytes'>;

function indexResult(texts: string[], over: Partial<ListedIndex> = {}): ListedIndex {
  const rows = chunks(texts);
  return {
    chunks: rows,
    tokenCount: rows.reduce((n, c) => n + c.tokenCount, 0),
    contentSha256: 'a'.repeat(64),
    contentType: null,
    bytes: null,
    ...over,
  };
}

/** The same chunks as a stream: `batches` of them, arriving one at a time. */
function streamed(result: ListedIndex, batches: number): IndexResult {
  const size = Math.ceil(result.chunks.length / batches);
  const { chunks: list, tokenCount, contentSha256, contentType, bytes } = result;
  return {
    chunks: (async function* () {
      for (let i = 0; i < list.length; i += size) {
        await new Promise((resolve) => setImmediate(resolve));
        yield list.slice(i, i + size);
      }
    })(),
    totals: () => ({ tokenCount, contentSha256 }),
    contentType,
    bytes,
  };
}

/** Creates a document in `store` and indexes the given chunk texts: a `ready` document. */
async function indexedInto(
  store: DocumentStore,
  orgId: string,
  texts: string[],
  over: Partial<NewDocument> = {},
): Promise<NewDocument> {
  const doc = newDoc(orgId, over);
  await store.createDocuments([doc]);
  expect(await store.saveIndex(doc.id, indexResult(texts))).toBe(true);
  return doc;
}

function query(orgId: string, text: string, over: Partial<SearchQuery> = {}): SearchQuery {
  return { orgId, query: text, topK: 10, filter: {}, documentIds: null, ...over };
}

function list(orgId: string, over: Partial<ListQuery> = {}): ListQuery {
  return { orgId, limit: 100, after: null, status: null, ids: null, contentSha256: null, ...over };
}

const FILLER = [
  'the committee reviewed the annual budget in detail',
  'rain is expected over the northern hills tomorrow',
  'a new bridge opened to traffic on monday morning',
  'the library extended its opening hours for students',
  'engineers replaced the pumps at the water plant',
  'the orchestra rehearsed a symphony by dvorak',
  'farmers reported an early harvest of apples',
  'the museum acquired a collection of old maps',
];

/** Strings that would break a naive FTS5 / tsquery / LIKE translation. */
const HOSTILE_QUERIES = [
  '"',
  '""',
  '"unterminated',
  '*',
  'quokka*',
  '^quokka',
  'NEAR(',
  'NEAR(quokka habitat, 2)',
  'AND',
  'OR',
  'NOT',
  'quokka AND',
  'AND OR NOT',
  '(',
  ')',
  '((quokka)',
  'text:quokka',
  'org:quokka',
  '{text org}: quokka',
  '-quokka',
  '+quokka',
  'quokka:*',
  "quokka' OR 1=1 --",
  '\\',
  '%_%',
  '\u0000',
  'quo\u0000kka',
  '\uD800',
  '\uDC00quokka',
  '😀',
  '😀 quokka 🦘',
  'ﬁ ß İ ǅ',
  '中文 检索',
  'עברית',
  '   ',
  '',
  '!@#$%^&*()_+=[]{}|;:,.<>?/~`',
  '&|!<->',
  'quokka & habitat | !zoo',
  'x'.repeat(10_000),
  Array.from({ length: 500 }, (_, i) => `w${i}`).join(' '),
];

export function documentStoreContract(
  name: string,
  make: (options: DocumentStoreOptions) => Promise<DocumentStoreHarness>,
): void {
  describe(name, () => {
    let h: DocumentStoreHarness;
    let store: DocumentStore;
    let orgA: string;
    let orgB: string;

    beforeEach(async () => {
      h = await make({});
      store = h.store;
      orgA = `org_${randomUUID()}`;
      orgB = `org_${randomUUID()}`;
    });
    afterEach(async () => {
      await h.close();
    });

    const indexed = (orgId: string, texts: string[], over: Partial<NewDocument> = {}) =>
      indexedInto(store, orgId, texts, over);

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
          status: 'queued',
          source: doc.source,
          metadata: doc.metadata,
          chunkSize: 256,
          chunkOverlap: 32,
          tokenizer: 'o200k_base',
          chunkCount: null,
          tokenCount: null,
          contentSha256: null,
          error: null,
          attempts: 0,
          createdAt: new Date(T0),
          updatedAt: new Date(T0),
        };
        expect(await store.getDocument(orgA, doc.id)).toEqual(expected);
        expect(await store.loadJobInput(doc.id)).toEqual({
          record: expected,
          text: null,
          blobKey: 'ab/blob-key',
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
        const hits = await store.search(query(orgA, 'gamma'));
        expect(hits).toHaveLength(1);
        expect(hits[0]?.text).toBe(canonicalText(chunkText));
        expect(hits[0]?.metadata).toEqual(canonicalMetadata);
        // Filters compare canonical forms.
        expect(await store.search(query(orgA, 'gamma', { filter: { key: ['va\uFFFDl'] } }))).toHaveLength(1);
        expect(await store.search(query(orgA, 'delta'))).toHaveLength(1);
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

        const walrus = await store.search(query(orgA, 'walrus'));
        expect(walrus.map((hit) => hit.chunkIndex)).toEqual([0]);
        const narwhal = await store.search(query(orgA, 'narwhal'));
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
          const hits = await store.search(query(orgA, 'walrus', { topK: 100 }));
          const status = (await store.getDocument(orgA, doc.id))?.status;
          const mine = hits.filter((hit) => hit.documentId === doc.id).length;
          // Read after the search: a document ready by then may have been ready for it, too.
          if (status !== 'ready') expect(mine).toBe(0);
          seen.add(mine);
          await new Promise((resolve) => setImmediate(resolve));
        }
        expect(await saving).toBe(true);
        expect(await store.search(query(orgA, 'walrus', { topK: 100 }))).toHaveLength(100);
        expect(
          await store.search(query(orgA, 'walrus note', { topK: 100, documentIds: [doc.id] })),
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
        expect(await store.search(query(orgA, 'oldrun', { topK: 100 }))).toEqual([]);
        const hits = await store.search(query(orgA, 'newrun part 5', { topK: 100 }));
        expect(hits).toHaveLength(100);
        expect(new Set(hits.map((hit) => hit.chunkIndex)).size).toBe(100);
        expect(await store.getDocument(orgA, doc.id)).toMatchObject({
          status: 'ready',
          chunkCount: LARGE - 1,
        });
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
          const hits = await store.search(query(orgA, word, { topK: 100 }));
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
          expect(await store.search(query(orgA, 'lynx'))).toEqual([]);
        }
      });

      it('deletes a large document at once: no read of its org finds it again', async () => {
        const small = await indexed(orgA, ['a manatee grazes on sea grass']);
        const doc = await indexed(orgA, largeTexts('manatee'));
        expect(await store.search(query(orgA, 'manatee', { topK: 5 }))).toHaveLength(5);
        expect(await store.deleteDocument(orgA, doc.id)).toEqual({ blobKey: null });
        expect(await store.getDocument(orgA, doc.id)).toBeNull();
        expect((await store.listDocuments(list(orgA))).map((d) => d.id)).toEqual([small.id]);
        expect(await store.listDocuments(list(orgA, { ids: [doc.id] }))).toEqual([]);
        for (const over of [{}, { documentIds: [doc.id] }, { filter: { team: ['x'] } }]) {
          const hits = await store.search(query(orgA, 'manatee grazes', { topK: 100, ...over }));
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
        expect(await store.search(query(orgA, 'narwhal', { topK: 100 }))).toEqual([]);
        // Its chunks are gone too, not only hidden: a new document with the same words is found
        // alone, and the document cannot come back.
        const other = await indexed(orgA, ['one narwhal sighting']);
        expect(
          (await store.search(query(orgA, 'narwhal', { topK: 100 }))).map((hit) => hit.documentId),
        ).toEqual([other.id]);
        expect(await store.saveIndex(doc.id, indexResult(['narwhal again']))).toBe(false);
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
        expect(await store.search(query(orgA, 'pangolin'))).toHaveLength(2);

        expect(await store.deleteDocument(orgA, file.id)).toEqual({ blobKey: 'aa/blob' });
        expect(await store.getDocument(orgA, file.id)).toBeNull();
        expect((await store.search(query(orgA, 'pangolin'))).map((hit) => hit.documentId)).toEqual([text.id]);
        expect(await store.search(query(orgA, 'pangolin scales', { documentIds: [file.id] }))).toEqual([]);
        expect((await store.listDocuments(list(orgA))).map((d) => d.id)).toEqual([text.id]);

        expect(await store.deleteDocument(orgA, text.id)).toEqual({ blobKey: null });
        expect(await store.deleteDocument(orgA, text.id)).toBeNull();
        expect(await store.search(query(orgA, 'pangolin'))).toEqual([]);
      });

      it('refuses another org’s delete and leaves the document intact', async () => {
        const doc = await indexed(orgA, ['armadillo shell']);
        expect(await store.deleteDocument(orgB, doc.id)).toBeNull();
        expect(await store.getDocument(orgA, doc.id)).not.toBeNull();
        expect(await store.search(query(orgA, 'armadillo'))).toHaveLength(1);
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
        expect(await store.search(query(orgA, 'okapi'))).toEqual([]);
        expect(await store.countPending()).toBe(0);
      });
    });

    describe('search', () => {
      it('ranks the chunk that uses the query words more often first, best score first', async () => {
        const doc = await indexed(orgA, [
          'a quokka was seen near the river',
          'quokka quokka quokka: the quokka habitat survey counted every quokka in its habitat',
          'nothing relevant here at all',
          ...FILLER,
        ]);
        const hits = await store.search(query(orgA, 'Quokka habitat'));
        expect(hits.map((hit) => hit.chunkIndex)).toEqual([1, 0]);
        expect(hits[0]).toMatchObject({ documentId: doc.id, pageStart: null, pageEnd: null, metadata: {} });
        expect(hits[0]?.text).toContain('habitat survey');
        for (const hit of hits) expect(Number.isFinite(hit.score)).toBe(true);
        expect(hits[0]?.score).toBeGreaterThan(hits[1]?.score ?? Number.POSITIVE_INFINITY);
      });

      it('returns only chunks that contain a query word, at most topK of them', async () => {
        const texts = Array.from({ length: 30 }, (_, i) => `capybara number ${i} swims`);
        await indexed(orgA, [...texts, ...FILLER]);
        const hits = await store.search(query(orgA, 'capybara', { topK: 7 }));
        expect(hits).toHaveLength(7);
        for (const hit of hits) expect(hit.text).toContain('capybara');
        const scores = hits.map((hit) => hit.score);
        expect(scores).toEqual([...scores].sort((x, y) => y - x));
        expect(await store.search(query(orgA, 'zzzunknownword'))).toEqual([]);
      });

      it('carries the page range and metadata of each hit', async () => {
        const doc = newDoc(orgA, { metadata: { lang: 'en' } });
        await store.createDocuments([doc]);
        const result = indexResult(['tapir page one', 'tapir page two', ...FILLER]);
        (result.chunks[0] as ChunkRow).pageStart = 1;
        (result.chunks[0] as ChunkRow).pageEnd = 1;
        (result.chunks[1] as ChunkRow).pageStart = 2;
        (result.chunks[1] as ChunkRow).pageEnd = 3;
        await store.saveIndex(doc.id, result);
        const hits = await store.search(query(orgA, 'tapir'));
        const byIndex = new Map(hits.map((hit) => [hit.chunkIndex, hit]));
        expect(byIndex.get(0)).toMatchObject({ pageStart: 1, pageEnd: 1, metadata: { lang: 'en' } });
        expect(byIndex.get(1)).toMatchObject({ pageStart: 2, pageEnd: 3, text: 'tapir page two' });
      });

      it('never shows another org’s chunks, whatever the query or restriction', async () => {
        const mine = await indexed(orgA, ['shared word lemur', ...FILLER], { metadata: { tag: 'x' } });
        const theirs = await indexed(orgB, ['shared word lemur lemur lemur', ...FILLER], {
          metadata: { tag: 'x' },
        });

        const a = await store.search(query(orgA, 'lemur'));
        expect(a.map((hit) => hit.documentId)).toEqual([mine.id]);
        expect(await store.search(query(orgA, 'lemur', { documentIds: [theirs.id] }))).toEqual([]);
        expect(
          (await store.search(query(orgA, 'lemur', { filter: { tag: ['x'] } }))).map((hit) => hit.documentId),
        ).toEqual([mine.id]);
        expect((await store.search(query(orgB, 'lemur'))).map((hit) => hit.documentId)).toEqual([theirs.id]);
        expect(await store.search(query(`org_${randomUUID()}`, 'lemur'))).toEqual([]);
      });

      it('is not crowded out by another org’s many better matches', async () => {
        // An adapter that ranked across all orgs and filtered afterwards would return nothing here.
        const loud = Array.from({ length: 60 }, () => 'meerkat meerkat meerkat meerkat');
        await indexed(orgB, [...loud, ...FILLER]);
        const mine = await indexed(orgA, [
          'one quiet meerkat among many other words in a long sentence',
          ...FILLER,
        ]);
        const hits = await store.search(query(orgA, 'meerkat', { topK: 1 }));
        expect(hits.map((hit) => hit.documentId)).toEqual([mine.id]);
      });

      it('restricts to the given documents', async () => {
        const d1 = await indexed(orgA, ['ibis wading', ...FILLER]);
        const d2 = await indexed(orgA, ['ibis flying']);
        const d3 = await indexed(orgA, ['ibis nesting']);
        const ids = async (documentIds: string[] | null) =>
          new Set((await store.search(query(orgA, 'ibis', { documentIds }))).map((hit) => hit.documentId));
        expect(await ids([d1.id, d3.id])).toEqual(new Set([d1.id, d3.id]));
        expect(await ids(null)).toEqual(new Set([d1.id, d2.id, d3.id]));
        expect(await ids([])).toEqual(new Set());
        expect(await ids([randomUUID()])).toEqual(new Set());
      });

      it('filters on metadata: every key must match one of its values, any characters in keys', async () => {
        const keys = ['a.b', 'we"ird', '$root', 'arr[0]', "it's", 'sp ace', '__proto__'];
        const meta = (v: string) => Object.fromEntries(keys.map((k) => [k, v]));
        const d1 = await indexed(orgA, ['heron one', ...FILLER], {
          metadata: { ...meta('v1'), team: 'red' },
        });
        const d2 = await indexed(orgA, ['heron two'], { metadata: { ...meta('v2'), team: 'blue' } });
        const d3 = await indexed(orgA, ['heron three'], { metadata: { team: 'red' } });
        // Looks like d1's dotted key read as a path; must not match the key "a.b".
        const d4 = await indexed(orgA, ['heron four'], { metadata: { a: 'v1' } });

        const ids = async (filter: Record<string, string[]>) =>
          new Set((await store.search(query(orgA, 'heron', { filter }))).map((hit) => hit.documentId));
        expect(await ids({})).toEqual(new Set([d1.id, d2.id, d3.id, d4.id]));
        expect(await ids({ team: ['red'] })).toEqual(new Set([d1.id, d3.id]));
        expect(await ids({ team: ['red', 'blue'] })).toEqual(new Set([d1.id, d2.id, d3.id]));
        expect(await ids({ team: ['red'], 'a.b': ['v1'] })).toEqual(new Set([d1.id]));
        expect(await ids({ team: ['blue'], 'a.b': ['v1'] })).toEqual(new Set());
        expect(await ids({ team: [] })).toEqual(new Set());
        expect(await ids({ missing: ['red'] })).toEqual(new Set());
        for (const key of keys) {
          expect(await ids({ [key]: ['v2'] }), key).toEqual(new Set([d2.id]));
        }
        expect(await ids({ a: ['v1'] })).toEqual(new Set([d4.id]));
        expect(await ids({ 'a.b': ['v1', "v1' OR '1'='1"] })).toEqual(new Set([d1.id]));
        expect(await ids({ 'a.b': ['V1'] })).toEqual(new Set());
      });

      it('returns nothing for a query without words', async () => {
        await indexed(orgA, ['gecko climbing walls', ...FILLER]);
        for (const q of ['', '   ', '!!!', '*', '"', '\u0000', '😀', '(-)', '\uD800']) {
          expect(await store.search(query(orgA, q)), JSON.stringify(q)).toEqual([]);
        }
      });

      it('never throws on hostile query strings, and still finds the words in them', async () => {
        await indexed(orgA, ['quokka habitat near the zoo', ...FILLER]);
        await indexed(orgB, ['quokka habitat of the other org', ...FILLER]);
        for (const q of HOSTILE_QUERIES) {
          const hits = await store.search(query(orgA, q));
          expect(Array.isArray(hits), JSON.stringify(q.slice(0, 40))).toBe(true);
          for (const hit of hits) expect(hit.text).not.toContain('other org');
        }
        for (const q of [
          '"quokka',
          'quokka*',
          'NEAR(quokka habitat, 2)',
          'text:quokka',
          '((quokka)',
          '😀 quokka 🦘',
        ]) {
          expect((await store.search(query(orgA, q))).length, q).toBe(1);
        }
      });

      it('never throws on arbitrary strings (property)', async () => {
        await indexed(orgA, ['quokka habitat near the zoo', ...FILLER]);
        const syntax = fc.constantFrom(
          '"',
          '*',
          '^',
          ':',
          '(',
          ')',
          '{',
          '}',
          'NEAR(',
          ' AND ',
          ' OR ',
          ' NOT ',
          '-',
          '+',
          '&',
          '|',
          '!',
          '<->',
          "'",
          '\\',
          '\u0000',
          '\uD800',
          '\uDFFF',
          '😀',
          'quokka',
          ' ',
        );
        const hostile = fc.oneof(
          fc.string({ unit: 'binary', maxLength: 64 }),
          fc.array(syntax, { maxLength: 24 }).map((parts) => parts.join('')),
          fc
            .array(fc.oneof(syntax, fc.string({ unit: 'grapheme', maxLength: 6 })), { maxLength: 16 })
            .map((p) => p.join('')),
        );
        await fc.assert(
          fc.asyncProperty(hostile, async (q) => {
            const hits = await store.search(query(orgA, q, { filter: { [q]: [q] } }));
            expect(hits).toEqual([]);
            const unfiltered = await store.search(query(orgA, q, { documentIds: null }));
            expect(Array.isArray(unfiltered)).toBe(true);
          }),
          { numRuns: 300 },
        );
      });
    });

    describe('search with a row budget', () => {
      // A budget as small as a test corpus stands for the default one in an org of millions of
      // chunks: a word in every chunk is over it, a word in a few chunks is not.
      const BUDGET = 50;
      let budgeted: DocumentStoreHarness;

      beforeEach(async () => {
        budgeted = await make({ searchRowBudget: BUDGET });
      });
      afterEach(async () => {
        await budgeted.close();
      });

      const indexedIn = (orgId: string, texts: string[], over: Partial<NewDocument> = {}) =>
        indexedInto(budgeted.store, orgId, texts, over);

      /**
       * Three documents of 40 chunks in orgA, every chunk holding "report", one chunk of each
       * also "aurora"; orgB holds "report" and "aurora" too.
       */
      async function commonAndRare() {
        const docs: NewDocument[] = [];
        const rare = new Set<string>();
        for (const [d, team] of ['red', 'blue', 'red'].entries()) {
          const texts = Array.from({ length: 40 }, (_, i) => `report ${d}-${i} on the figures of week ${i}`);
          texts[7 + d] = `report ${d}-${7 + d} on the aurora seen in week ${7 + d}`;
          const doc = await indexedIn(orgA, texts, { metadata: { team } });
          docs.push(doc);
          rare.add(`${doc.id}:${7 + d}`);
        }
        await indexedIn(orgB, [
          ...Array.from({ length: 60 }, (_, i) => `report report from the other org ${i}`),
          'aurora aurora report of the other org',
        ]);
        return { docs, rare };
      }

      const keyOf = (hit: SearchHit) => `${hit.documentId}:${hit.chunkIndex}`;

      it('still ranks the chunks of a rare query word first when another word is in every chunk', async () => {
        const { rare } = await commonAndRare();
        for (const q of ['report aurora', 'aurora report', 'the report on aurora']) {
          const hits = await budgeted.store.search(query(orgA, q, { topK: 10 }));
          expect(new Set(hits.slice(0, 3).map(keyOf)), q).toEqual(rare);
          for (const hit of hits) expect(hit.text, q).not.toContain('other org');
        }
        const top = await budgeted.store.search(query(orgA, 'report aurora', { topK: 3 }));
        expect(new Set(top.map(keyOf))).toEqual(rare);
      });

      it('answers a query of only words in every chunk with top_k of their chunks, best first', async () => {
        const { docs } = await commonAndRare();
        const mine = new Set(docs.map((d) => d.id));
        for (const q of ['report', 'the report', 'report on the figures of week']) {
          const hits = await budgeted.store.search(query(orgA, q, { topK: 10 }));
          expect(hits, q).toHaveLength(10);
          for (const hit of hits) {
            expect(mine.has(hit.documentId), q).toBe(true);
            expect(hit.text, q).toContain('report');
            expect(Number.isFinite(hit.score), q).toBe(true);
          }
          const scores = hits.map((hit) => hit.score);
          expect(scores, q).toEqual([...scores].sort((x, y) => y - x));
        }
        for (const q of HOSTILE_QUERIES) {
          const hits = await budgeted.store.search(query(orgA, `report ${q}`));
          for (const hit of hits) expect(mine.has(hit.documentId), JSON.stringify(q.slice(0, 40))).toBe(true);
        }
      });

      it('ranks no more matches than the budget when every query word is over it', async () => {
        const texts = Array.from({ length: BUDGET + 20 }, (_, i) => `common filler ${i}`);
        await indexedIn(orgA, texts);
        for (const q of ['common', 'common filler']) {
          const hits = await budgeted.store.search(query(orgA, q, { topK: 1000 }));
          expect(hits, q).toHaveLength(BUDGET);
          for (const hit of hits) expect(hit.text, q).toContain('common filler');
        }
      });

      it('ranks with every query word while their matches fit the budget', async () => {
        // 20 chunks hold "alpha", 20 hold "beta" (one holds both): 40 matches, within the budget,
        // in an org whose 60 other chunks put the org as a whole over it.
        const texts = [
          'alpha and beta together',
          ...Array.from({ length: 19 }, (_, i) => `alpha only ${i}`),
          ...Array.from({ length: 19 }, (_, i) => `beta only ${i}`),
          ...Array.from({ length: 60 }, (_, i) => `filler line ${i}`),
        ];
        const doc = await indexedIn(orgA, texts);
        const hits = await budgeted.store.search(query(orgA, 'alpha beta', { topK: 100 }));
        expect(hits).toHaveLength(39);
        expect(hits[0]).toMatchObject({ documentId: doc.id, chunkIndex: 0 });
        expect(hits.filter((hit) => hit.text.startsWith('beta only'))).toHaveLength(19);
      });

      it('applies filters and document restrictions under the budget', async () => {
        const { docs } = await commonAndRare();
        const [red1, blue, red2] = docs as [NewDocument, NewDocument, NewDocument];
        const byTeam = await budgeted.store.search(
          query(orgA, 'report aurora', { filter: { team: ['blue'] }, topK: 5 }),
        );
        expect(byTeam[0]).toMatchObject({ documentId: blue.id, chunkIndex: 8 });
        for (const hit of byTeam) expect(hit.documentId).toBe(blue.id);

        const byId = await budgeted.store.search(
          query(orgA, 'report aurora', { documentIds: [red1.id, red2.id], topK: 5 }),
        );
        expect(new Set(byId.slice(0, 2).map(keyOf))).toEqual(new Set([`${red1.id}:7`, `${red2.id}:9`]));
        for (const hit of byId) expect([red1.id, red2.id]).toContain(hit.documentId);
        expect(
          await budgeted.store.search(query(orgA, 'report aurora', { filter: { team: ['green'] } })),
        ).toEqual([]);
      });

      /**
       * orgA: 11 documents in a row, each holding "salmon" in 20 of its 20 chunks, except the
       * one at `target` (first, middle or last), which holds it in 2 of 20 and is the only one
       * tagged topic=fish. 202 matches, four times the budget: whichever bounded subset of them
       * a cut keeps (newest rows or first rows in table order), the target's 2 are a sliver.
       */
      async function salmonOrg(target: number) {
        let targetDoc: NewDocument | null = null;
        for (let d = 0; d < 11; d++) {
          const isTarget = d === target;
          const texts = Array.from({ length: 20 }, (_, i) =>
            isTarget && i > 1 ? `river notes ${d}-${i}` : `salmon run ${d}-${i} upstream`,
          );
          const doc = await indexedIn(orgA, texts, { metadata: { topic: isTarget ? 'fish' : 'other' } });
          if (isTarget) targetDoc = doc;
        }
        await indexedIn(orgB, ['salmon of the other org', 'zebra of the other org']);
        return targetDoc as unknown as NewDocument;
      }

      it('answers a document restriction or a filter that few documents pass from all their matches', async () => {
        for (const target of [0, 5, 10]) {
          const doc = await salmonOrg(target);
          const theirs = new Set([`${doc.id}:0`, `${doc.id}:1`]);
          const restrictions: Partial<SearchQuery>[] = [
            { documentIds: [doc.id] },
            { filter: { topic: ['fish'] } },
            { documentIds: [doc.id], filter: { topic: ['fish'] } },
          ];
          for (const over of restrictions) {
            const label = `target ${target}: ${JSON.stringify(Object.keys(over))}`;
            // "zebra" matches nothing in orgA and "river" only the target's other chunks: the
            // restriction, not the org's counts, decides which words are affordable.
            for (const text of ['salmon', 'salmon zebra', 'zebra salmon upstream']) {
              const hits = await budgeted.store.search(query(orgA, text, { ...over, topK: 10 }));
              expect(new Set(hits.map(keyOf)), `${label} ${text}`).toEqual(theirs);
            }
            const both = await budgeted.store.search(query(orgA, 'salmon river', { ...over, topK: 100 }));
            expect(both, label).toHaveLength(20);
            for (const hit of both) expect(hit.documentId, label).toBe(doc.id);
          }
          // A filter every document passes still ranks no more than the budget.
          const loose = await budgeted.store.search(
            query(orgA, 'salmon', { filter: { topic: ['fish', 'other'] }, topK: 1000 }),
          );
          expect(loose.length).toBeGreaterThan(0);
          expect(loose.length).toBeLessThanOrEqual(BUDGET);
          for (const hit of loose) expect(hit.text).toContain('salmon');
          orgA = `org_${randomUUID()}`;
          orgB = `org_${randomUUID()}`;
        }
      });

      it('searches inside a named document that holds more chunks than the budget', async () => {
        // The target (120 chunks, budget 50) comes first, then last, among 300 chunks of other
        // documents that also hold "salmon": neither the budget's newest matches (SQLite) nor its
        // first ones in table order (PostgreSQL) reach it in both cases.
        for (const targetFirst of [true, false]) {
          const others = async () => {
            for (let d = 0; d < 6; d++) {
              await indexedIn(
                orgA,
                Array.from({ length: 50 }, (_, i) => `salmon run ${d}-${i}`),
              );
            }
          };
          if (!targetFirst) await others();
          const target = await indexedIn(
            orgA,
            Array.from({ length: 120 }, (_, i) => (i % 40 === 7 ? `salmon leap ${i}` : `quiet pool ${i}`)),
          );
          if (targetFirst) await others();
          const hits = await budgeted.store.search(
            query(orgA, 'salmon', { documentIds: [target.id], topK: 10 }),
          );
          expect(hits.map(keyOf).sort(), `target first: ${targetFirst}`).toEqual(
            [7, 47, 87].map((i) => `${target.id}:${i}`).sort(),
          );
          orgA = `org_${randomUUID()}`;
        }
      });

      it('keeps the rarest of more than 64 query words, not the first 64', async () => {
        const doc = await indexedIn(orgA, [
          ...Array.from(
            { length: 60 },
            (_, i) => `${Array.from({ length: 69 }, (_, w) => `word${w}`).join(' ')} ${i}`,
          ),
          'the narwhal surfaced near the ice',
        ]);
        const unknown = Array.from({ length: 69 }, (_, i) => `nosuchword${i}`).join(' ');
        expect((await budgeted.store.search(query(orgA, `${unknown} narwhal`))).map(keyOf)).toEqual([
          `${doc.id}:60`,
        ]);
        // 69 words in 60 chunks each, then the one rare word: it is the one kept and ranked.
        const common = Array.from({ length: 69 }, (_, w) => `word${w}`).join(' ');
        const hits = await budgeted.store.search(query(orgA, `${common} narwhal`, { topK: 3 }));
        expect(hits[0]).toMatchObject({ documentId: doc.id, chunkIndex: 60 });
      });
    });
  });
}
