// Conformance suite for the metadata filter language (domain/filter.ts) in a store: every operator
// through search and through list, and a property test that the store's SQL selects exactly the
// documents the reference evaluator accepts, on random metadata and random filter trees. Run
// against SQLite and PostgreSQL, so the two backends answer every filter identically.
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { evaluate, type Filter, type FilterJson } from '../../src/domain/filter.js';
import type { Metadata, NewDocument } from '../../src/domain/types.js';
import {
  type DocumentStoreHarness,
  type DocumentStoreOptions,
  indexResult,
  list,
  newDoc,
  query,
  where,
} from './document-fixtures.js';

/** mulberry32: a small seeded PRNG, so a failing run can be repeated from its seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Keys with path syntax in them, and values whose order differs between UTF-16 code units and
// code points (U+FF21 sorts before U+1F600 by code point, after it by UTF-16 unit), dates, case,
// accents, the empty string and prefixes.
const KEYS = ['year', 'lang', 'tag', 'a.b', '$x', 'we"ird'];
const VALUES = [
  '',
  '2019-12-31',
  '2020',
  '2020-01-01',
  '2020-01-01T00:00:00Z',
  '2021',
  'a',
  'A',
  'ab',
  'b',
  'é',
  'e\u0301',
  '\uFF21',
  '😀',
  '😀a',
  'a😀',
  'z',
];

export function filterContract(
  name: string,
  make: (options: DocumentStoreOptions) => Promise<DocumentStoreHarness>,
): void {
  describe(name, () => {
    let h: DocumentStoreHarness;
    let orgA: string;

    beforeEach(async () => {
      h = await make({});
      orgA = `org_${randomUUID()}`;
    });
    afterEach(async () => {
      await h.close();
    });

    /** Ready documents of one chunk each, all holding the word "common"; in one batch. */
    async function corpus(orgId: string, metadatas: Metadata[], store = h.store): Promise<NewDocument[]> {
      const docs = metadatas.map((metadata, i) =>
        newDoc(orgId, { metadata, createdAt: new Date(Date.UTC(2025, 0, 1, 0, 0, i)) }),
      );
      await store.createDocuments(docs);
      for (const [i, doc] of docs.entries()) {
        expect(await store.saveIndex(doc.id, indexResult([`common text of document ${i}`]))).toBe(true);
      }
      return docs;
    }

    /** The ids that pass `filter` through search, and through list. */
    async function selected(
      filter: Filter | null,
      harness = h,
      orgId = orgA,
    ): Promise<{ searched: Set<string>; listed: Set<string> }> {
      const hits = await harness.index.search(query(orgId, 'common', { filter, topK: 1000 }));
      const listed = await harness.store.listDocuments(list(orgId, { filter, limit: 1000 }));
      return {
        searched: new Set(hits.map((hit) => hit.documentId)),
        listed: new Set(listed.map((doc) => doc.id)),
      };
    }

    it('answers every operator, through search and list alike', async () => {
      const named: Record<string, Metadata> = {
        d1: { year: '2019', lang: 'en', tag: 'a' },
        d2: { year: '2020', lang: 'de' },
        d3: { year: '2021-06-01', lang: 'en', tag: 'b' },
        d4: {},
        d5: { year: '2024', 'a.b': 'x', lang: 'FR' },
        d6: { name: '\uFF21' },
        d7: { name: '😀', a: 'x' },
      };
      const docs = await corpus(orgA, Object.values(named));
      const idOf = Object.fromEntries(Object.keys(named).map((n, i) => [n, docs[i]!.id]));
      const all = Object.keys(named);
      const except = (...names: string[]) => all.filter((n) => !names.includes(n));
      const cases: [FilterJson, string[]][] = [
        [{}, all],
        [{ lang: 'en' }, ['d1', 'd3']],
        [{ lang: 'fr' }, []],
        [{ lang: ['en', 'de'] }, ['d1', 'd2', 'd3']],
        [{ lang: { $eq: 'en' } }, ['d1', 'd3']],
        [{ lang: { $ne: 'en' } }, except('d1', 'd3')],
        [{ year: { $gt: '2020' } }, ['d3', 'd5']],
        [{ year: { $gte: '2020' } }, ['d2', 'd3', 'd5']],
        [{ year: { $lt: '2020' } }, ['d1']],
        [{ year: { $lte: '2020' } }, ['d1', 'd2']],
        [{ year: { $gte: '2020', $lt: '2022' } }, ['d2', 'd3']],
        [{ lang: { $in: ['de', 'FR'] } }, ['d2', 'd5']],
        [{ lang: { $nin: ['en'] } }, except('d1', 'd3')],
        [{ tag: { $exists: true } }, ['d1', 'd3']],
        [{ tag: { $exists: false } }, except('d1', 'd3')],
        [{ lang: 'en', tag: 'b' }, ['d3']],
        [{ $and: [{ lang: 'en' }, { tag: 'b' }] }, ['d3']],
        [{ $or: [{ lang: 'de' }, { tag: 'a' }] }, ['d1', 'd2']],
        [{ $not: { lang: 'en' } }, except('d1', 'd3')],
        // A comparison on a missing key is false, so its negation is true there.
        [{ $not: { year: { $gt: '2020' } } }, except('d3', 'd5')],
        // Code point order, not UTF-16 order.
        [{ name: { $gt: '\uFF21' } }, ['d7']],
        [{ name: { $lt: '😀' } }, ['d6']],
        // Keys are plain strings: "a.b" is not the path a → b.
        [{ 'a.b': 'x' }, ['d5']],
        [{ a: 'x' }, ['d7']],
        [
          {
            $or: [
              { $and: [{ year: { $gte: '2020' } }, { $not: { lang: 'de' } }] },
              { tag: { $exists: true }, year: { $lt: '2020' } },
            ],
          },
          ['d1', 'd3', 'd5'],
        ],
      ];
      for (const [json, names] of cases) {
        const expected = new Set(names.map((n) => idOf[n]!));
        const filter = where(json);
        const label = JSON.stringify(json);
        // The reference evaluator agrees with the expectation written here…
        const evaluated = new Set(docs.filter((d) => evaluate(filter, d.metadata)).map((d) => d.id));
        expect(evaluated, label).toEqual(expected);
        // …and so does the store, both ways.
        const { searched, listed } = await selected(filter);
        expect(searched, `search ${label}`).toEqual(expected);
        expect(listed, `list ${label}`).toEqual(expected);
      }
    });

    it('selects exactly what the reference evaluator accepts, on random metadata and filters (property)', async () => {
      const seed = Number(process.env.FILTER_SEED ?? Math.floor(Math.random() * 2 ** 31));
      const random = prng(seed);
      const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
      const metadatas = Array.from({ length: 240 }, () => {
        const metadata: Metadata = {};
        for (const key of KEYS) if (random() < 0.6) metadata[key] = pick(VALUES);
        return metadata;
      });
      const docs = await corpus(orgA, metadatas);
      // A row budget far below the corpus, so filters choose the candidates inside it.
      const budgeted = await make({ searchRowBudget: 40 });
      try {
        const budgetedOrg = `org_${randomUUID()}`;
        const budgetedDocs = await corpus(budgetedOrg, metadatas, budgeted.store);
        const randomFilter = (depth: number): FilterJson => {
          const roll = random();
          if (depth < 4 && roll < 0.25) {
            const op = pick(['$and', '$or'] as const);
            return {
              [op]: Array.from({ length: 1 + Math.floor(random() * 3) }, () => randomFilter(depth + 1)),
            };
          }
          if (depth < 4 && roll < 0.35) return { $not: randomFilter(depth + 1) };
          const key = pick(KEYS);
          const form = pick(['eq', 'list', 'op', 'op', 'op', 'two'] as const);
          const values = () => Array.from({ length: 1 + Math.floor(random() * 3) }, () => pick(VALUES));
          const operator = (): Record<string, string | string[] | boolean> => {
            const op = pick(['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$exists'] as const);
            if (op === '$in' || op === '$nin') return { [op]: values() };
            if (op === '$exists') return { [op]: random() < 0.5 };
            return { [op]: pick(VALUES) };
          };
          if (form === 'eq') return { [key]: pick(VALUES) };
          if (form === 'list') return { [key]: values() };
          if (form === 'two') return { [key]: operator(), [pick(KEYS)]: operator() } as FilterJson;
          return { [key]: operator() } as FilterJson;
        };
        for (let run = 0; run < 250; run++) {
          const json = randomFilter(1);
          const filter = where(json);
          const label = `seed ${seed} (FILTER_SEED=${seed} repeats it), filter ${JSON.stringify(json)}`;
          const expected = new Set(docs.filter((d) => evaluate(filter, d.metadata)).map((d) => d.id));
          const { searched, listed } = await selected(filter);
          expect(searched, `search: ${label}`).toEqual(expected);
          expect(listed, `list: ${label}`).toEqual(expected);

          // Over the budget: exact when the passing documents fit it, never a document that fails.
          const budgetedExpected = new Set(
            budgetedDocs.filter((d) => evaluate(filter, d.metadata)).map((d) => d.id),
          );
          const inBudget = await selected(filter, budgeted, budgetedOrg);
          expect(inBudget.listed, `budgeted list: ${label}`).toEqual(budgetedExpected);
          if (budgetedExpected.size <= 40) {
            expect(inBudget.searched, `budgeted search: ${label}`).toEqual(budgetedExpected);
          } else {
            for (const id of inBudget.searched)
              expect(budgetedExpected.has(id), `budgeted: ${label}`).toBe(true);
          }
        }
      } finally {
        await budgeted.close();
      }
    });
  });
}
