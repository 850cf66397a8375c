// Conformance suite for document versions and external ids (DocumentStore.createDocuments with external ids,
// startVersion and the version-guarded worker writes): a new version is pending while the
// current one answers, its saveIndex swaps the two in one transaction, a stale version writes
// nothing, a failed one leaves the current in place, and a delete takes every version. Run
// against every adapter by sqlite.test.ts and postgres.test.ts.
import { describe, expect, it } from 'vitest';
import { readDocumentText } from '../../src/domain/documents.js';
import type { DocumentStore, KeywordIndex } from '../../src/domain/ports.js';
import type { NewDocument, NewVersion } from '../../src/domain/types.js';
import {
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
} from './document-fixtures.js';

const TEXT_SOURCE = {
  type: 'text',
  filename: null,
  url: null,
  content_type: 'text/plain',
  bytes: null,
} as const;

function textVersion(text: string, over: Partial<NewVersion> = {}): NewVersion {
  return {
    source: TEXT_SOURCE,
    chunkSize: 512,
    chunkOverlap: 64,
    metadata: null,
    text,
    blobKey: null,
    fetchUrl: null,
    at: new Date(T0 + 60_000),
    ...over,
  };
}

/** 600 chunks of ~1.3 KB: more than one slice of an adapter that writes in slices (SQLite). */
const LARGE = 600;
const largeTexts = (word: string) =>
  Array.from({ length: LARGE }, (_, i) => `${word} part ${i} ${FILLER[i % FILLER.length]} `.repeat(20));

export function documentVersionsContract(
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

    const keyed = (orgId: string, externalId: string, over: Partial<NewDocument> = {}) => ({
      ...newDoc(orgId, over),
      externalId,
    });
    const hitsOf = async (orgId: string, text: string, documentId: string) =>
      (await index.search(query(orgId, text, { topK: 100, documentIds: [documentId] }))).map(
        (hit) => hit.text,
      );

    describe('external ids', () => {
      it('creates a document for a new external_id and versions it for a known one', async () => {
        const first = await createOne(store, keyed(orgA, 'crm-42', { text: 'first' }));
        expect(first).toMatchObject({ version: 1, created: true });
        await store.saveIndex(first.id, { ...indexResult(['kestrel first']), version: 1 });
        const second = await createOne(store, keyed(orgA, 'crm-42', { text: 'second' }));
        expect(second).toEqual({ id: first.id, version: 2, created: false, discardedBlobKeys: [] });
        expect(await store.getDocument(orgA, first.id)).toMatchObject({
          externalId: 'crm-42',
          status: 'ready',
          version: 1,
          pendingVersion: { version: 2, status: 'queued', error: null },
        });
        expect((await store.listDocuments(list(orgA, { externalId: 'crm-42' }))).map((d) => d.id)).toEqual([
          first.id,
        ]);
        expect(await store.listDocuments(list(orgA, { externalId: 'crm-43' }))).toEqual([]);
      });

      it('keeps external ids apart per org', async () => {
        const a = await createOne(store, keyed(orgA, 'same'));
        const b = await createOne(store, keyed(orgB, 'same'));
        expect(a.id).not.toBe(b.id);
        expect(b.created).toBe(true);
        expect(await store.listDocuments(list(orgB, { externalId: 'same' }))).toHaveLength(1);
      });

      it('creates one document when ingests race on a new external_id; the others version it', async () => {
        const raced = await Promise.all(
          Array.from({ length: 8 }, (_, i) => createOne(store, keyed(orgA, 'race', { text: `t${i}` }))),
        );
        expect(new Set(raced.map((r) => r.id)).size).toBe(1);
        expect(raced.filter((r) => r.created)).toHaveLength(1);
        expect(new Set(raced.map((r) => r.version)).size).toBe(8);
        expect(await store.listDocuments(list(orgA))).toHaveLength(1);
      });
    });

    describe('versions', () => {
      it('keeps the ready version answering until the new one is saved, then swaps them', async () => {
        const doc = await indexedInto(store, orgA, ['walrus old text', ...FILLER]);
        const started = await store.startVersion(orgA, doc.id, textVersion('narwhal new text'));
        expect(started).toEqual({ id: doc.id, version: 2, created: false, discardedBlobKeys: [] });
        expect(await store.getDocument(orgA, doc.id)).toMatchObject({
          status: 'ready',
          version: 1,
          chunkCount: 1 + FILLER.length,
          pendingVersion: { version: 2, status: 'queued', error: null },
        });
        const input = await store.loadJobInput(doc.id);
        expect(input).toMatchObject({ version: 2, text: 'narwhal new text', record: { status: 'queued' } });
        expect(await store.markProcessing(doc.id, 2)).toBe(true);
        expect((await store.getDocument(orgA, doc.id))?.pendingVersion?.status).toBe('processing');
        expect(await hitsOf(orgA, 'walrus', doc.id)).toEqual(['walrus old text']);

        expect(await store.saveIndex(doc.id, { ...indexResult(['narwhal new text']), version: 2 })).toBe(
          true,
        );
        expect(await hitsOf(orgA, 'walrus', doc.id)).toEqual([]);
        expect(await hitsOf(orgA, 'narwhal', doc.id)).toEqual(['narwhal new text']);
        expect(await store.getDocument(orgA, doc.id)).toMatchObject({
          status: 'ready',
          version: 2,
          chunkCount: 1,
          pendingVersion: null,
        });
        const page = await store.listChunks(orgA, doc.id, { afterIndex: -1, limit: 100 });
        expect(page?.version).toBe(2);
        expect(page?.chunks.map((c) => c.text)).toEqual(['narwhal new text']);
      });

      it('refuses every write of a version a newer one superseded', async () => {
        const doc = await indexedInto(store, orgA, ['walrus old text']);
        await store.startVersion(orgA, doc.id, textVersion('second'));
        await store.markProcessing(doc.id, 2);
        expect((await store.startVersion(orgA, doc.id, textVersion('third')))?.version).toBe(3);
        expect(await store.markProcessing(doc.id, 2)).toBe(false);
        expect(await store.markFailed(doc.id, { code: 'corrupt', message: 'x' }, 2)).toBe(false);
        expect(await store.saveIndex(doc.id, { ...indexResult(['second text']), version: 2 })).toBe(false);
        expect(await hitsOf(orgA, 'walrus', doc.id)).toEqual(['walrus old text']);
        expect((await store.loadJobInput(doc.id))?.text).toBe('third');
        expect(await store.saveIndex(doc.id, { ...indexResult(['third text']), version: 3 })).toBe(true);
        expect(await hitsOf(orgA, 'third', doc.id)).toEqual(['third text']);
        expect(await hitsOf(orgA, 'second', doc.id)).toEqual([]);
        expect((await store.getDocument(orgA, doc.id))?.version).toBe(3);
      });

      it('keeps the current version when the new one fails, with the error on pending_version', async () => {
        const doc = await indexedInto(store, orgA, ['walrus old text']);
        await store.startVersion(orgA, doc.id, textVersion('broken'));
        await store.markProcessing(doc.id, 2);
        const error = { code: 'corrupt' as const, message: 'The file is damaged.' };
        expect(await store.markRetrying(doc.id, error, 2)).toBe(true);
        expect((await store.getDocument(orgA, doc.id))?.pendingVersion).toEqual({
          version: 2,
          status: 'queued',
          error,
        });
        expect(await store.markFailed(doc.id, error, 2)).toBe(true);
        expect(await store.getDocument(orgA, doc.id)).toMatchObject({
          status: 'ready',
          version: 1,
          error: null,
          pendingVersion: { version: 2, status: 'failed', error },
        });
        expect(await hitsOf(orgA, 'walrus', doc.id)).toEqual(['walrus old text']);
        // A job finding a failed pending version has nothing to do.
        expect((await store.loadJobInput(doc.id))?.record.status).toBe('ready');
        // The next version goes on from there.
        expect((await store.startVersion(orgA, doc.id, textVersion('fixed')))?.version).toBe(3);
      });

      it('replaces a version that never became ready in place', async () => {
        const doc = newDoc(orgA, { text: 'first try' });
        await store.createDocuments([doc]);
        await store.markProcessing(doc.id, 1);
        const started = await store.startVersion(orgA, doc.id, textVersion('second try'));
        expect(started?.version).toBe(2);
        expect(await store.getDocument(orgA, doc.id)).toMatchObject({
          status: 'queued',
          version: 2,
          pendingVersion: null,
          attempts: 0,
        });
        expect(await store.saveIndex(doc.id, { ...indexResult(['first try']), version: 1 })).toBe(false);
        expect(await store.saveIndex(doc.id, { ...indexResult(['second try']), version: 2 })).toBe(true);
        expect(await hitsOf(orgA, 'try', doc.id)).toEqual(['second try']);
      });

      it('hands back a superseded pending version’s blob and the blob a version replaced in place', async () => {
        const file = (blobKey: string): Partial<NewVersion> => ({
          source: { type: 'file', filename: 'a.pdf', url: null, content_type: 'application/pdf', bytes: 3 },
          text: null,
          blobKey,
        });
        const doc = await indexedInto(store, orgA, ['walrus'], { text: null, blobKey: 'aa/one' });
        expect(
          (await store.startVersion(orgA, doc.id, textVersion('', file('aa/two'))))?.discardedBlobKeys,
        ).toEqual([]);
        expect(
          (await store.startVersion(orgA, doc.id, textVersion('', file('aa/three'))))?.discardedBlobKeys,
        ).toEqual(['aa/two']);
        const input = await store.loadJobInput(doc.id);
        expect(input).toMatchObject({ blobKey: 'aa/three', currentBlobKey: 'aa/one', version: 3 });
        expect(await store.deleteDocument(orgA, doc.id)).toEqual({
          blobKey: 'aa/one',
          pendingBlobKey: 'aa/three',
        });
      });

      it('is another org’s business to no one: startVersion of another org’s id is null', async () => {
        const doc = await indexedInto(store, orgA, ['walrus']);
        expect(await store.startVersion(orgB, doc.id, textVersion('mine now'))).toBeNull();
        expect((await store.getDocument(orgA, doc.id))?.pendingVersion).toBeNull();
      });

      it('deletes every version of a document whose new version is in flight; it never comes back', async () => {
        const doc = await indexedInto(store, orgA, ['walrus old text']);
        await store.startVersion(orgA, doc.id, textVersion('narwhal'));
        await store.markProcessing(doc.id, 2);
        expect(await store.deleteDocument(orgA, doc.id)).not.toBeNull();
        expect(await store.saveIndex(doc.id, { ...indexResult(['narwhal new']), version: 2 })).toBe(false);
        expect(await store.saveIndex(doc.id, indexResult(['narwhal new']))).toBe(false);
        expect(await store.getDocument(orgA, doc.id)).toBeNull();
        expect(await index.search(query(orgA, 'walrus narwhal'))).toEqual([]);
      });

      it('swaps a large version in one step: a query sees the old chunks or the new ones, never both or neither', async () => {
        const doc = newDoc(orgA);
        await store.createDocuments([doc]);
        expect(await store.saveIndex(doc.id, indexResult(largeTexts('walrus')))).toBe(true);
        await store.startVersion(orgA, doc.id, textVersion('large'));
        await store.markProcessing(doc.id, 2);
        let done = false;
        const saving = store
          .saveIndex(doc.id, { ...streamed(indexResult(largeTexts('narwhal')), 9), version: 2 })
          .finally(() => {
            done = true;
          });
        const seen = new Set<string>();
        while (!done) {
          const hits = await index.search(
            query(orgA, 'walrus narwhal part', { topK: 100, documentIds: [doc.id] }),
          );
          const words = new Set(hits.map((hit) => hit.text.split(' ')[0]));
          expect(hits).toHaveLength(100);
          expect(words.size).toBe(1);
          seen.add([...words].join());
          await new Promise((resolve) => setImmediate(resolve));
        }
        expect(await saving).toBe(true);
        expect(seen.has('walrus')).toBe(true);
        expect(await hitsOf(orgA, 'walrus', doc.id)).toEqual([]);
        expect(await hitsOf(orgA, 'narwhal', doc.id)).toHaveLength(100);
        const all = [];
        for (let after = -1; ; ) {
          const page =
            (await store.listChunks(orgA, doc.id, { afterIndex: after, limit: 500 }))?.chunks ?? [];
          all.push(...page);
          if (page.length < 500) break;
          after = page[page.length - 1]?.index ?? after;
        }
        expect(all).toHaveLength(LARGE);
        expect(all.every((chunk) => chunk.text.startsWith('narwhal'))).toBe(true);
        expect(await store.getDocument(orgA, doc.id)).toMatchObject({ version: 2, chunkCount: LARGE });
      });

      it('reads a document’s text as one version: a swap during the read ends it with version_changed', async () => {
        const doc = await indexedInto(store, orgA, largeTexts('walrus'));
        const reader = readDocumentText(store, orgA, doc.id)[Symbol.asyncIterator]();
        const pieces: string[] = [];
        const first = await reader.next();
        pieces.push(first.value as string);

        await store.startVersion(orgA, doc.id, textVersion('large'));
        expect(await store.markProcessing(doc.id, 2)).toBe(true);
        expect(await store.saveIndex(doc.id, { ...indexResult(largeTexts('narwhal')), version: 2 })).toBe(
          true,
        );

        let error: unknown = null;
        try {
          for (let next = await reader.next(); !next.done; next = await reader.next())
            pieces.push(next.value);
        } catch (caught) {
          error = caught;
        }
        expect(error).toMatchObject({ code: 'version_changed' });
        // What came before the error is the old version's alone, never a mix.
        expect(pieces.length).toBeGreaterThan(0);
        expect(pieces.every((piece) => piece.startsWith('walrus'))).toBe(true);
        // Read again, it is the new version's whole.
        const again: string[] = [];
        for await (const piece of readDocumentText(store, orgA, doc.id)) again.push(piece);
        expect(again).toHaveLength(LARGE);
        expect(again.every((piece) => piece.startsWith('narwhal'))).toBe(true);
      });

      it('drops a large version superseded part-way, leaving the current one whole', async () => {
        const doc = await indexedInto(store, orgA, ['walrus old text']);
        await store.startVersion(orgA, doc.id, textVersion('large'));
        const saving = store.saveIndex(doc.id, {
          ...streamed(indexResult(largeTexts('narwhal')), 9),
          version: 2,
        });
        await new Promise((resolve) => setImmediate(resolve));
        await store.startVersion(orgA, doc.id, textVersion('third'));
        expect(await saving).toBe(false);
        expect(await hitsOf(orgA, 'walrus', doc.id)).toEqual(['walrus old text']);
        expect(await hitsOf(orgA, 'narwhal', doc.id)).toEqual([]);
        expect(await store.saveIndex(doc.id, { ...indexResult(['third text']), version: 3 })).toBe(true);
        expect((await store.listChunks(orgA, doc.id, { afterIndex: -1, limit: 10 }))?.chunks).toHaveLength(1);
      });

      it('starts one of 30 concurrent versions begun on one reading; the others are in_flight', async () => {
        const doc = await indexedInto(store, orgA, ['walrus old text']);
        const asRead = { version: 1, pendingVersion: null };
        const answers = await Promise.all(
          Array.from({ length: 30 }, (_, i) =>
            store.startVersionIfSettled(orgA, doc.id, textVersion(`again ${i}`), asRead),
          ),
        );
        const started = answers.filter((a) => a !== null && a !== 'in_flight');
        expect(started).toHaveLength(1);
        expect(answers.filter((a) => a === 'in_flight')).toHaveLength(29);
        expect(started[0]).toMatchObject({ id: doc.id, version: 2 });
        expect(await store.getDocument(orgA, doc.id)).toMatchObject({
          version: 1,
          pendingVersion: { version: 2, status: 'queued' },
        });
      });

      it('does not start over a version begun after the reading: the later content is kept', async () => {
        const doc = await indexedInto(store, orgA, ['walrus old text']);
        const asRead = { version: 1, pendingVersion: null };
        // New content arrives between the reading and the conditional start.
        expect((await store.startVersion(orgA, doc.id, textVersion('narwhal new text')))?.version).toBe(2);
        expect(await store.startVersionIfSettled(orgA, doc.id, textVersion('walrus old text'), asRead)).toBe(
          'in_flight',
        );
        expect((await store.loadJobInput(doc.id))?.text).toBe('narwhal new text');
        expect(await store.saveIndex(doc.id, { ...indexResult(['narwhal new text']), version: 2 })).toBe(
          true,
        );
        // Once it is ready, a start on a fresh reading goes ahead; one on the old reading does not.
        expect(await store.startVersionIfSettled(orgA, doc.id, textVersion('x'), asRead)).toBe('in_flight');
        const again = await store.startVersionIfSettled(orgA, doc.id, textVersion('again'), {
          version: 2,
          pendingVersion: null,
        });
        expect(again).toMatchObject({ version: 3 });
      });

      it('does not start a conditional version while the document is queued, nor on another org', async () => {
        const doc = newDoc(orgA);
        await store.createDocuments([doc]);
        const asRead = { version: 1, pendingVersion: null };
        expect(await store.startVersionIfSettled(orgA, doc.id, textVersion('x'), asRead)).toBe('in_flight');
        expect(await store.markFailed(doc.id, { code: 'corrupt', message: 'x' })).toBe(true);
        expect(await store.startVersionIfSettled(orgB, doc.id, textVersion('x'), asRead)).toBeNull();
        expect(await store.startVersionIfSettled(orgA, doc.id, textVersion('x'), asRead)).toMatchObject({
          version: 2,
        });
      });

      it('answers every document exactly once while 200 of them are replaced', async () => {
        const docs: NewDocument[] = [];
        for (let i = 0; i < 200; i += 1) docs.push(await indexedInto(store, orgA, [`common doc${i} apple`]));
        for (const doc of docs) await store.startVersion(orgA, doc.id, textVersion('banana'));
        let done = false;
        const replacing = Promise.all(
          docs.map((doc, i) =>
            store.saveIndex(doc.id, { ...indexResult([`common doc${i} banana`]), version: 2 }),
          ),
        ).finally(() => {
          done = true;
        });
        const halves = [docs.slice(0, 100), docs.slice(100)].map((half) => half.map((d) => d.id));
        let rounds = 0;
        while (!done || rounds === 0) {
          for (const ids of halves) {
            const hits = await index.search(query(orgA, 'common', { topK: 100, documentIds: ids }));
            expect(hits).toHaveLength(100);
            expect(new Set(hits.map((hit) => hit.documentId)).size).toBe(100);
          }
          rounds += 1;
          await new Promise((resolve) => setImmediate(resolve));
        }
        expect((await replacing).every(Boolean)).toBe(true);
        for (const ids of halves) {
          expect(await index.search(query(orgA, 'apple', { topK: 100, documentIds: ids }))).toEqual([]);
          expect(await index.search(query(orgA, 'banana', { topK: 100, documentIds: ids }))).toHaveLength(
            100,
          );
        }
      });
    });
  });
}
