// Conformance suite for KeywordIndex: BM25 ranking, query parsing that no input
// can break, metadata filters and document_ids, tenant isolation, and the row budget that bounds
// one query's work (planned once, in domain/search-plan.ts). Run against SQLite FTS5 and
// PostgreSQL full-text search, fed through each backend's DocumentStore.saveIndex.
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Filter } from '../../src/domain/filter.js';
import type { DocumentStore, KeywordIndex } from '../../src/domain/ports.js';
import { analyzer } from '../../src/domain/search-words.js';
import type { ChunkRow, NewDocument, SearchHit, SearchQuery } from '../../src/domain/types.js';
import {
  chunks,
  type DocumentStoreHarness,
  type DocumentStoreOptions,
  eachTestOnFreshStore,
  FILLER,
  HOSTILE_QUERIES,
  indexedInto,
  indexResult,
  newDoc,
  query,
  where,
} from './document-fixtures.js';

export function keywordIndexContract(
  name: string,
  make: (options: DocumentStoreOptions) => Promise<DocumentStoreHarness>,
): void {
  describe(name, () => {
    let h: DocumentStoreHarness;
    let store: DocumentStore;
    let index: KeywordIndex;
    let orgA: string;
    let orgB: string;
    eachTestOnFreshStore(make, (setup) => {
      ({ h, store, index, orgA, orgB } = setup);
    });

    const indexed = (orgId: string, texts: string[], over: Partial<NewDocument> = {}) =>
      indexedInto(store, orgId, texts, over);

    describe('search', () => {
      it('ranks the chunk that uses the query words more often first, best score first', async () => {
        const doc = await indexed(orgA, [
          'a quokka was seen near the river',
          'quokka quokka quokka: the quokka habitat survey counted every quokka in its habitat',
          'nothing relevant here at all',
          ...FILLER,
        ]);
        const hits = await index.search(query(orgA, 'Quokka habitat'));
        expect(hits.map((hit) => hit.chunkIndex)).toEqual([1, 0]);
        expect(hits[0]).toMatchObject({ documentId: doc.id, pageStart: null, pageEnd: null, metadata: {} });
        expect(hits[0]?.text).toContain('habitat survey');
        expectKeywordScores(hits);
        expect(hits[0]?.score).toBeGreaterThan(hits[1]?.score ?? Number.POSITIVE_INFINITY);
      });

      it('counts a word repeated in the query once: the same scores and order as written once', async () => {
        // Counting each occurrence (as Lucene does) scored lower on BEIR SciFact; both backends
        // must agree either way.
        await indexed(orgA, [
          'the wombat burrow is deep',
          'a wombat and a burrow and a burrow and another burrow',
          'wombat wombat wombat wombat sleeping in the sun',
          ...FILLER,
        ]);
        const once = await index.search(query(orgA, 'wombat burrow'));
        const repeated = await index.search(query(orgA, 'Wombat wombat burrow WOMBAT wombats'));
        expect(once.map((hit) => hit.chunkIndex)).toHaveLength(3);
        expect(repeated.map((hit) => hit.chunkIndex)).toEqual(once.map((hit) => hit.chunkIndex));
        for (const [i, hit] of repeated.entries()) expect(hit.score).toBeCloseTo(once[i]!.score, 9);
      });

      it('returns only chunks that contain a query word, at most topK of them', async () => {
        const texts = Array.from({ length: 30 }, (_, i) => `capybara number ${i} swims`);
        await indexed(orgA, [...texts, ...FILLER]);
        const hits = await index.search(query(orgA, 'capybara', { topK: 7 }));
        expect(hits).toHaveLength(7);
        for (const hit of hits) expect(hit.text).toContain('capybara');
        const scores = hits.map((hit) => hit.score);
        expect(scores).toEqual([...scores].sort((x, y) => y - x));
        expect(await index.search(query(orgA, 'zzzunknownword'))).toEqual([]);
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
        const hits = await index.search(query(orgA, 'tapir'));
        const byIndex = new Map(hits.map((hit) => [hit.chunkIndex, hit]));
        expect(byIndex.get(0)).toMatchObject({ pageStart: 1, pageEnd: 1, metadata: { lang: 'en' } });
        expect(byIndex.get(1)).toMatchObject({ pageStart: 2, pageEnd: 3, text: 'tapir page two' });
      });

      it('never shows another org’s chunks, whatever the query or restriction', async () => {
        const mine = await indexed(orgA, ['shared word lemur', ...FILLER], { metadata: { tag: 'x' } });
        const theirs = await indexed(orgB, ['shared word lemur lemur lemur', ...FILLER], {
          metadata: { tag: 'x' },
        });

        const a = await index.search(query(orgA, 'lemur'));
        expect(a.map((hit) => hit.documentId)).toEqual([mine.id]);
        expect(await index.search(query(orgA, 'lemur', { documentIds: [theirs.id] }))).toEqual([]);
        expect(
          (await index.search(query(orgA, 'lemur', { filter: where({ tag: ['x'] }) }))).map(
            (hit) => hit.documentId,
          ),
        ).toEqual([mine.id]);
        expect((await index.search(query(orgB, 'lemur'))).map((hit) => hit.documentId)).toEqual([theirs.id]);
        expect(await index.search(query(`org_${randomUUID()}`, 'lemur'))).toEqual([]);
      });

      it('is not crowded out by another org’s many better matches', async () => {
        // An adapter that ranked across all orgs and filtered afterwards would return nothing here.
        const loud = Array.from({ length: 60 }, () => 'meerkat meerkat meerkat meerkat');
        await indexed(orgB, [...loud, ...FILLER]);
        const mine = await indexed(orgA, [
          'one quiet meerkat among many other words in a long sentence',
          ...FILLER,
        ]);
        const hits = await index.search(query(orgA, 'meerkat', { topK: 1 }));
        expect(hits.map((hit) => hit.documentId)).toEqual([mine.id]);
      });

      it('restricts to the given documents', async () => {
        const d1 = await indexed(orgA, ['ibis wading', ...FILLER]);
        const d2 = await indexed(orgA, ['ibis flying']);
        const d3 = await indexed(orgA, ['ibis nesting']);
        const ids = async (documentIds: string[] | null) =>
          new Set((await index.search(query(orgA, 'ibis', { documentIds }))).map((hit) => hit.documentId));
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

        const ids = async (json: Record<string, string[]>) => {
          // An empty list passes no document (the API refuses one; the stores must still agree).
          const filter: Filter | null = Object.values(json).some((v) => v.length === 0)
            ? { kind: 'list', op: '$in', key: 'team', values: [] }
            : where(json);
          return new Set((await index.search(query(orgA, 'heron', { filter }))).map((hit) => hit.documentId));
        };
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
          expect(await index.search(query(orgA, q)), JSON.stringify(q)).toEqual([]);
        }
      });

      it('never throws on hostile query strings, and still finds the words in them', async () => {
        await indexed(orgA, ['quokka habitat near the zoo', ...FILLER]);
        await indexed(orgB, ['quokka habitat of the other org', ...FILLER]);
        for (const q of HOSTILE_QUERIES) {
          const hits = await index.search(query(orgA, q));
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
          expect((await index.search(query(orgA, q))).length, q).toBe(1);
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
            const hits = await index.search(
              query(orgA, q, { filter: { kind: 'list', op: '$in', key: q, values: [q] } }),
            );
            expect(hits).toEqual([]);
            const unfiltered = await index.search(query(orgA, q, { documentIds: null }));
            expectKeywordScores(unfiltered, JSON.stringify(q));
          }),
          { numRuns: 300 },
        );
      });
    });

    describe('scores', () => {
      /** Indexes `texts` as the chunks of one English document, each chunk's words given. */
      const indexedEnglish = async (orgId: string, texts: string[]) => {
        const doc = newDoc(orgId);
        await store.createDocuments([doc]);
        const rows = chunks(texts).map((c) => ({ ...c, words: ENGLISH.words(c.text) }));
        const result = indexResult(texts, { chunks: rows, language: 'en' });
        expect(await store.saveIndex(doc.id, result)).toBe(true);
        return doc;
      };

      it('scores a one-document org’s match as a fraction of the most its query could score', async () => {
        // Every word of a one-chunk org is in every chunk: BM25's IDF is floored at a millionth,
        // and the raw score with it; a word once in a chunk of average length is 1 / 2.2 of the most.
        await indexedEnglish(orgA, ['the heron waded in the shallow marsh']);
        for (const q of ['heron', 'heron marsh', 'Herons of a marsh']) {
          const [hit, ...rest] = await index.search(query(orgA, q));
          expect(rest, q).toEqual([]);
          expect(hit?.score, q).toBeGreaterThan(0.2);
          expect(hit?.score, q).toBeLessThan(1);
          expect(hit?.score, q).toBeCloseTo(1 / 2.2, 9);
        }
      });

      it('orders and scores results as BM25 over its most, computed here from the words’ counts', async () => {
        // The only chunks of a fresh index: N, every backend's, is TREES' length.
        const doc = await indexedEnglish(orgA, TREES);
        for (const q of TREE_QUERIES) {
          const expected = treeScores(q);
          const hits = await index.search(query(orgA, q));
          expect(
            hits.map((h) => h.chunkIndex),
            q,
          ).toEqual(expected.map((e) => e.index));
          for (const [i, hit] of hits.entries()) {
            expect(hit.documentId, q).toBe(doc.id);
            expect(hit.score, q).toBeCloseTo(expected[i]!.score, 9);
          }
          expectKeywordScores(hits, q);
          // A document restriction ranks among the document's chunks alone: the same scores.
          const restricted = await index.search(query(orgA, q, { documentIds: [doc.id] }));
          expect(
            restricted.map((h) => h.chunkIndex),
            q,
          ).toEqual(hits.map((h) => h.chunkIndex));
          for (const [i, hit] of restricted.entries()) expect(hit.score, q).toBeCloseTo(hits[i]!.score, 9);
        }
      });
    });

    describe('analysis', () => {
      const ids = async (i: KeywordIndex, orgId: string, q: string) =>
        new Set((await i.search(query(orgId, q))).map((hit) => hit.documentId));

      it('stems English words: a query finds the other forms of its words', async () => {
        const run = await indexed(orgA, ['The runner kept running while the others ran', ...FILLER]);
        const cells = await indexed(orgA, ['Cells connected by a connection']);
        for (const q of ['runs', 'RUNNING', 'run'])
          expect(await ids(index, orgA, q), q).toEqual(new Set([run.id]));
        for (const q of ['cell', 'connecting', 'connections']) {
          expect(await ids(index, orgA, q), q).toEqual(new Set([cells.id]));
        }
        // Porter leaves irregular forms alone, as Lucene's English analysis does.
        expect(await ids(index, orgA, 'ran')).toEqual(new Set([run.id]));
        expect(await ids(index, orgA, 'runnings')).toEqual(new Set([run.id]));
      });

      it('finds each document in its own language: segmented, without particles, stemmed', async () => {
        const inLanguage = async (language: string, text: string) => {
          const doc = newDoc(orgA);
          await store.createDocuments([doc]);
          const rows = chunks([text]).map((c) => ({ ...c, words: analyzer(language).words(c.text) }));
          expect(await store.saveIndex(doc.id, indexResult([], { chunks: rows, language }))).toBe(true);
          return doc.id;
        };
        const zh = await inLanguage('zh', '我们今天去北京旅游，然后参观了故宫。');
        const ja = await inLanguage('ja', '明日の天気予報によると、東京では雨が降るそうです。');
        const ko = await inLanguage(
          'ko',
          '한국의 수도는 서울입니다. 서울에서 부산까지 기차로 세 시간 걸립니다.',
        );
        const de = await inLanguage('de', 'Die Kinder spielten in den großen Häusern der Stadt.');
        const ru = await inLanguage('ru', 'Дети играли в больших домах города.');
        const en = await inLanguage('en', 'The runners were running along the river.');
        const expectations: [string, string][] = [
          ['北京', zh],
          ['故宫', zh],
          ['東京', ja],
          ['天気', ja],
          ['한국', ko],
          ['부산', ko],
          ['Haus', de],
          ['дом', ru],
          ['runs', en],
        ];
        for (const [q, id] of expectations) expect(await ids(index, orgA, q), q).toEqual(new Set([id]));
        // Another org's languages are not this one's, and its documents never answer.
        expect(await ids(index, orgB, '北京')).toEqual(new Set());
      });

      it('finds words of other scripts, numbers and codes exactly as written', async () => {
        const texts = [
          'Привет мир',
          '東京タワー',
          'Naïve café in Straße',
          'ελληνικά γράμματα',
          'error E1234 v2',
        ];
        const docs = [];
        for (const text of texts) docs.push(await indexed(orgA, [text, ...FILLER]));
        const expectations: [string, number][] = [
          ['привет', 0],
          ['東京タワー', 1],
          ['naive', 2],
          ['CAFÉ', 2],
          ['STRASSE', -1],
          ['straße', 2],
          ['ελληνικα', 3],
          ['e1234', 4],
          ['V2', 4],
        ];
        for (const [q, i] of expectations) {
          expect(await ids(index, orgA, q), q).toEqual(new Set(i < 0 ? [] : [docs[i]?.id]));
        }
        expect(await ids(index, orgA, 'мира')).toEqual(new Set());
      });

      it('with SEARCH_LANGUAGE=none, matches words exactly as folded', async () => {
        const plain = h.reopen({ language: 'none' });
        const doc = await indexedInto(plain.store, orgA, ['The runner kept running', ...FILLER]);
        expect(await ids(plain.index, orgA, 'running')).toEqual(new Set([doc.id]));
        expect(await ids(plain.index, orgA, 'run')).toEqual(new Set());
      });

      it('rewrites an index an earlier release wrote online, resuming where a run stopped', async () => {
        // An earlier release wrote every chunk with one analysis (`none`: folding only).
        const before = h.reopen({ language: 'none' });
        await h.setWrittenAnalysis('none');
        const docs = [];
        for (let i = 0; i < 5; i++) {
          const first = `The runners of team number ${i} were running along the river every morning before work.`;
          docs.push(await indexedInto(before.store, orgA, [first, ...FILLER]));
        }
        const total = 5 * (1 + FILLER.length);
        expect(await index.analysisState()).toEqual({
          configured: 'languages',
          written: 'none',
          reindexNeeded: true,
        });
        // Until the rewrite is done, a query looks for its words in either form.
        expect(await ids(index, orgA, 'running')).toEqual(new Set(docs.map((d) => d.id)));

        let rewritten = 0;
        const first = await index.reindexBatch(7);
        expect(first).toEqual({ rewritten: 7, done: false });
        rewritten += first.rewritten;
        // Written meanwhile, with the new analysis.
        const during = await indexed(orgA, ['a runner arrives running']);
        // Another process carries on from where the first stopped.
        const other = h.reopen({});
        for (;;) {
          expect(await ids(other.index, orgA, 'running')).toEqual(
            new Set([...docs.map((d) => d.id), during.id]),
          );
          const batch = await other.index.reindexBatch(7);
          rewritten += batch.rewritten;
          if (batch.done) break;
        }
        expect(rewritten).toBeGreaterThanOrEqual(total);
        expect(rewritten).toBeLessThanOrEqual(total + 1);
        expect(await index.analysisState()).toEqual({
          configured: 'languages',
          written: 'languages',
          reindexNeeded: false,
        });
        // Each document was told to be English on the way and is stemmed as English now.
        expect(await ids(index, orgA, 'runs')).toEqual(new Set([...docs.map((d) => d.id), during.id]));
        expect(await index.reindexBatch(7)).toEqual({ rewritten: 0, done: true });
      });

      it('adopts the configured analysis on a new index, and never overwrites a recorded one', async () => {
        await index.adoptAnalysis();
        expect(await index.analysisState()).toEqual({
          configured: 'languages',
          written: 'languages',
          reindexNeeded: false,
        });
        // SEARCH_LANGUAGE decides only the language of documents nobody named: no rewrite.
        const plain = h.reopen({ language: 'none' });
        await plain.index.adoptAnalysis();
        expect((await plain.index.analysisState()).reindexNeeded).toBe(false);
        await h.setWrittenAnalysis('english');
        await plain.index.adoptAnalysis();
        expect(await plain.index.analysisState()).toEqual({
          configured: 'languages',
          written: 'english',
          reindexNeeded: true,
        });
      });
    });

    describe('filters on metadata that changes', () => {
      const ids = async (text: string, json: Parameters<typeof where>[0]) =>
        (await index.search(query(orgA, text, { filter: where(json), topK: 100 }))).map((h) => h.documentId);

      it('a filter sees metadata set by ingest, PATCH and a new version at once, and nothing once deleted', async () => {
        const doc = await indexed(orgA, ['walrus on the ice', ...FILLER], { metadata: { team: 'red' } });
        await indexed(orgA, ['walrus in the water'], { metadata: { team: 'blue', year: '2020' } });
        expect(await ids('walrus', { team: 'red' })).toEqual([doc.id]);
        expect(await ids('walrus', { team: { $ne: 'blue' } })).toEqual([doc.id]);

        await store.updateMetadata(orgA, doc.id, (m) => ({ ...m, team: 'green', year: '2024' }));
        expect(await ids('walrus', { team: 'red' })).toEqual([]);
        expect(await ids('walrus', { team: 'green', year: { $gt: '2021' } })).toEqual([doc.id]);
        await store.updateMetadata(orgA, doc.id, () => ({}));
        expect(await ids('walrus', { team: { $exists: false } })).toEqual([doc.id]);
        expect(await ids('walrus', { year: { $lte: '2024' } })).not.toContain(doc.id);

        // A new version's metadata is the record's from its start; its chunks answer once saved.
        const started = await store.startVersion(orgA, doc.id, {
          source: { type: 'text', filename: null, url: null, content_type: 'text/plain', bytes: null },
          chunkSize: 512,
          chunkOverlap: 64,
          metadata: { team: 'violet' },
          text: 'walrus on the beach',
          blobKey: null,
          fetchUrl: null,
          at: new Date(),
        });
        expect(started?.version).toBe(2);
        expect(await ids('walrus', { team: 'violet' })).toEqual([doc.id]);
        expect(await store.saveIndex(doc.id, { ...indexResult(['walrus on the beach']), version: 2 })).toBe(
          true,
        );
        const swapped = await index.search(query(orgA, 'walrus', { filter: where({ team: 'violet' }) }));
        expect(swapped.map((h) => h.text)).toEqual(['walrus on the beach']);

        expect(await store.deleteDocument(orgA, doc.id)).not.toBeNull();
        expect(await ids('walrus', { team: 'violet' })).toEqual([]);
        expect(await ids('walrus', { $not: { team: 'blue' } })).toEqual([]);
        expect(await ids('walrus', { team: { $nin: ['red'] } })).toHaveLength(1);
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
          const hits = await budgeted.index.search(query(orgA, q, { topK: 10 }));
          expect(new Set(hits.slice(0, 3).map(keyOf)), q).toEqual(rare);
          for (const hit of hits) expect(hit.text, q).not.toContain('other org');
        }
        const top = await budgeted.index.search(query(orgA, 'report aurora', { topK: 3 }));
        expect(new Set(top.map(keyOf))).toEqual(rare);
      });

      it('answers a query of only words in every chunk with top_k of their chunks, best first', async () => {
        const { docs } = await commonAndRare();
        const mine = new Set(docs.map((d) => d.id));
        for (const q of ['report', 'the report', 'report on the figures of week']) {
          const hits = await budgeted.index.search(query(orgA, q, { topK: 10 }));
          expect(hits, q).toHaveLength(10);
          for (const hit of hits) {
            expect(mine.has(hit.documentId), q).toBe(true);
            expect(hit.text, q).toContain('report');
          }
          expectKeywordScores(hits, q);
        }
        for (const q of HOSTILE_QUERIES) {
          const hits = await budgeted.index.search(query(orgA, `report ${q}`));
          for (const hit of hits) expect(mine.has(hit.documentId), JSON.stringify(q.slice(0, 40))).toBe(true);
        }
      });

      it('ranks no more matches than the budget when every query word is over it', async () => {
        const texts = Array.from({ length: BUDGET + 20 }, (_, i) => `common filler ${i}`);
        await indexedIn(orgA, texts);
        for (const q of ['common', 'common filler']) {
          const hits = await budgeted.index.search(query(orgA, q, { topK: 1000 }));
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
        const hits = await budgeted.index.search(query(orgA, 'alpha beta', { topK: 100 }));
        expect(hits).toHaveLength(39);
        expect(hits[0]).toMatchObject({ documentId: doc.id, chunkIndex: 0 });
        expect(hits.filter((hit) => hit.text.startsWith('beta only'))).toHaveLength(19);
      });

      it('applies filters and document restrictions under the budget', async () => {
        const { docs } = await commonAndRare();
        const [red1, blue, red2] = docs as [NewDocument, NewDocument, NewDocument];
        const byTeam = await budgeted.index.search(
          query(orgA, 'report aurora', { filter: where({ team: ['blue'] }), topK: 5 }),
        );
        expect(byTeam[0]).toMatchObject({ documentId: blue.id, chunkIndex: 8 });
        for (const hit of byTeam) expect(hit.documentId).toBe(blue.id);

        const byId = await budgeted.index.search(
          query(orgA, 'report aurora', { documentIds: [red1.id, red2.id], topK: 5 }),
        );
        expect(new Set(byId.slice(0, 2).map(keyOf))).toEqual(new Set([`${red1.id}:7`, `${red2.id}:9`]));
        for (const hit of byId) expect([red1.id, red2.id]).toContain(hit.documentId);
        expect(
          await budgeted.index.search(query(orgA, 'report aurora', { filter: where({ team: ['green'] }) })),
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
            { filter: where({ topic: ['fish'] }) },
            { documentIds: [doc.id], filter: where({ topic: ['fish'] }) },
          ];
          for (const over of restrictions) {
            const label = `target ${target}: ${JSON.stringify(Object.keys(over))}`;
            // "zebra" matches nothing in orgA and "river" only the target's other chunks: the
            // restriction, not the org's counts, decides which words are affordable.
            for (const text of ['salmon', 'salmon zebra', 'zebra salmon upstream']) {
              const hits = await budgeted.index.search(query(orgA, text, { ...over, topK: 10 }));
              expect(new Set(hits.map(keyOf)), `${label} ${text}`).toEqual(theirs);
            }
            const both = await budgeted.index.search(query(orgA, 'salmon river', { ...over, topK: 100 }));
            expect(both, label).toHaveLength(20);
            for (const hit of both) expect(hit.documentId, label).toBe(doc.id);
          }
          // A filter every document passes still ranks no more than the budget.
          const loose = await budgeted.index.search(
            query(orgA, 'salmon', { filter: where({ topic: ['fish', 'other'] }), topK: 1000 }),
          );
          expect(loose.length).toBeGreaterThan(0);
          expect(loose.length).toBeLessThanOrEqual(BUDGET);
          for (const hit of loose) expect(hit.text).toContain('salmon');
          orgA = `org_${randomUUID()}`;
          orgB = `org_${randomUUID()}`;
        }
      });

      it('finds a loose filter’s chunks when every better match fails it, or lies past the ranked ones', async () => {
        // 60 chunks pass (more than the budget: a loose filter), all older than, and ranked
        // below, 80 chunks that fail it and hold the word three times each.
        const kept: string[] = [];
        for (let d = 0; d < 3; d++) {
          const doc = await indexedIn(
            orgA,
            Array.from({ length: 20 }, (_, i) => `salmon pool ${d}-${i} with quiet water and reeds`),
            { metadata: { shelf: 'keep' } },
          );
          kept.push(doc.id);
        }
        for (let d = 0; d < 4; d++) {
          await indexedIn(
            orgA,
            Array.from({ length: 20 }, (_, i) => `salmon salmon salmon run ${d}-${i}`),
            { metadata: { shelf: 'drop' } },
          );
        }
        for (const json of [{ shelf: 'keep' }, { shelf: { $ne: 'drop' } }, { shelf: { $gt: 'j' } }]) {
          const hits = await budgeted.index.search(query(orgA, 'salmon', { filter: where(json), topK: 5 }));
          expect(hits, JSON.stringify(json)).toHaveLength(5);
          for (const hit of hits) expect(kept, JSON.stringify(json)).toContain(hit.documentId);
          // A word in every chunk too: the rarer one ranks, the filter still holds.
          const both = await budgeted.index.search(
            query(orgA, 'salmon reeds', { filter: where(json), topK: 5 }),
          );
          expect(both, JSON.stringify(json)).toHaveLength(5);
          for (const hit of both) expect(kept, JSON.stringify(json)).toContain(hit.documentId);
        }
        const failing = await budgeted.index.search(
          query(orgA, 'salmon', { filter: where({ shelf: 'drop' }), topK: 5 }),
        );
        expect(failing).toHaveLength(5);
        for (const hit of failing) {
          expect(kept).not.toContain(hit.documentId);
          expect(hit.text).toContain('salmon salmon salmon');
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
          const hits = await budgeted.index.search(
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
        expect((await budgeted.index.search(query(orgA, `${unknown} narwhal`))).map(keyOf)).toEqual([
          `${doc.id}:60`,
        ]);
        // 69 words in 60 chunks each, then the one rare word: it is the one kept and ranked.
        const common = Array.from({ length: 69 }, (_, w) => `word${w}`).join(' ');
        const hits = await budgeted.index.search(query(orgA, `${common} narwhal`, { topK: 3 }));
        expect(hits[0]).toMatchObject({ documentId: doc.id, chunkIndex: 60 });
      });
    });
  });
}

const ENGLISH = analyzer('en');

/** Chunks of five words each, so BM25's length normalisation is 1 for every chunk. */
const TREES = [
  'alder birch cedar larch maple',
  'alder alder alder birch rowan',
  'birch birch hazel rowan willow',
  'cedar cedar cedar cedar cedar',
  'alder hazel larch poplar pine',
  'willow willow willow willow poplar',
  'pine poplar elm aspen spruce',
  'elm aspen spruce beech holly',
  'moss fern lichen reed sedge',
  'moss moss fern fern lichen',
  'reed sedge rush clover thistle',
  'clover thistle nettle dock sorrel',
];

const TREE_QUERIES = [
  'alder',
  'alder birch',
  'cedar alder',
  'birch rowan hazel',
  'willow poplar',
  'larch maple cedar alder birch',
  'moss fern',
  'elm holly oak',
];

/**
 * Okapi BM25 as FTS5 defines it (k1 1.2, b 0.75, IDF ln((N − n + 0.5) / (n + 0.5)) floored at a
 * millionth), from TREES' words alone, and each chunk's score: that BM25 over the most the
 * query's matching words could give, Σ IDF × 2.2. Best first, ties in chunk order.
 */
function treeScores(q: string): { index: number; score: number }[] {
  const chunkWords = TREES.map((text) => ENGLISH.words(text).split(' '));
  for (const words of chunkWords) expect(words).toHaveLength(5);
  const total = chunkWords.length;
  const idfs = new Map<string, number>();
  for (const word of new Set(ENGLISH.queryWords(q))) {
    const holding = chunkWords.filter((words) => words.includes(word)).length;
    if (holding > 0) idfs.set(word, Math.max(Math.log((total - holding + 0.5) / (holding + 0.5)), 1e-6));
  }
  let most = 0;
  for (const idf of idfs.values()) most += idf * 2.2;
  const scored: { index: number; bm25: number; score: number }[] = [];
  for (const [index, words] of chunkWords.entries()) {
    let bm25 = 0;
    for (const [word, idf] of idfs) {
      const tf = words.filter((w) => w === word).length;
      bm25 += (idf * tf * 2.2) / (tf + 1.2);
    }
    if (bm25 > 0) scored.push({ index, bm25, score: bm25 / most });
  }
  return scored.sort((a, b) => b.bm25 - a.bm25 || a.index - b.index);
}

/** Keyword scores as a reader sees them: each in (0, 1], best first. */
function expectKeywordScores(hits: readonly SearchHit[], label?: string): void {
  const scores = hits.map((hit) => hit.score);
  for (const score of scores) {
    expect(score, label).toBeGreaterThan(0);
    expect(score, label).toBeLessThanOrEqual(1);
  }
  expect(scores, label).toEqual([...scores].sort((x, y) => y - x));
}
