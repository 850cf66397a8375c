// The term-proximity bonus (domain/proximity.ts) as a user of keyword search sees it: of two
// chunks BM25 scores alike, the one holding the query's words side by side comes first.
import { describe, expect, it } from 'vitest';
import { ALL_PARTITIONS } from '../../src/domain/partitions.js';
import { PROXIMITY_DEPTH, proximityBonus, rerankByProximity } from '../../src/domain/proximity.js';
import { QueryService } from '../../src/domain/query.js';
import { analyzer } from '../../src/domain/search-words.js';
import { UsageService } from '../../src/domain/usage.js';
import { FakeKeywordIndex, FixedClock, MemoryUsage } from './fakes.js';

const english = analyzer('english');
const words = (text: string) => english.words(text).split(' ');
const query = (text: string) => new Set(english.queryWords(text));

describe('proximity bonus', () => {
  it('is larger the closer two query words stand, and nothing past five words apart', () => {
    const q = query('vitamin deficiency');
    const adjacent = proximityBonus(words('a vitamin deficiency was found'), q);
    const three = proximityBonus(words('vitamin levels and deficiency'), q);
    const six = proximityBonus(words('vitamin a b c d e deficiency'), q);
    expect(adjacent).toBeGreaterThan(three);
    expect(three).toBeGreaterThan(0);
    expect(six).toBe(0);
  });

  it('gives nothing for one query word, however often it repeats', () => {
    expect(proximityBonus(words('cell cell cell cells'), query('cell division'))).toBe(0);
  });

  it('saturates: many close pairs earn less than that many times one pair', () => {
    const q = query('blood pressure');
    const one = proximityBonus(words('blood pressure'), q);
    const many = proximityBonus(words(Array(20).fill('blood pressure').join(' and ')), q);
    expect(many).toBeGreaterThan(one);
    expect(many).toBeLessThan(5 * one);
  });

  it('gives function words no bonus of their own, but they lend nearness to other words', () => {
    // "of the" side by side earns nothing; "risk of" does.
    expect(proximityBonus(words('one of the most'), query('of the'), new Set(['of', 'the']))).toBe(0);
    expect(
      proximityBonus(words('the risk of stroke'), query('risk of stroke'), new Set(['of', 'the'])),
    ).toBeGreaterThan(0);
  });
});

/** The ceiling of every hit below: a list's hits share the ceiling of the terms that ranked them. */
const CEILING = 200;

const hit = (text: string, bm25: number) => ({
  text,
  bm25,
  bm25Max: CEILING,
  score: bm25 / CEILING,
  id: text,
});

describe('rerankByProximity', () => {
  it('puts the chunk with the query words together ahead of an equal BM25 score', () => {
    const scattered = hit('low vitamin intake was seen in the group; deficiency of iron too', 5);
    const together = hit('low intake caused vitamin deficiency in the group studied', 5);
    const ranked = rerankByProximity([scattered, together], 'Vitamin deficiency', english);
    expect(ranked.map((h) => h.id)).toEqual([together.id, scattered.id]);
    expect(ranked[0]!.bm25).toBeGreaterThan(5);
    expect(ranked[1]!.bm25).toBe(5);
    expect(ranked[0]!.score).toBeGreaterThan(ranked[1]!.score);
  });

  it('keeps BM25 order and scores for a one-word query, and the index order on ties', () => {
    const hits = [hit('kelp forest', 3), hit('kelp kelp', 3), hit('kelp', 2)];
    expect(rerankByProximity(hits, 'kelp', english)).toEqual(hits);
  });

  it('does not lift a weak match over a much better BM25 score', () => {
    const strong = hit('insulin resistance in muscle; insulin and glucose; resistance training', 20);
    const weak = hit('insulin resistance', 1);
    expect(rerankByProximity([strong, weak], 'insulin resistance', english)[0]!.id).toBe(strong.id);
  });

  it('scores each hit as its BM25 plus bonus over one ceiling grown by the most the bonus gives', () => {
    // Two weighted words, each tally saturating under k1 + 1 = 2.2: the ceiling grows by 4.4.
    const q = 'blood pressure';
    const best = hit(Array(50).fill('blood pressure').join(' '), CEILING - 1);
    const hits = [best, hit('pressure of blood', 30), hit('blood and then pressure', 30), hit('blood', 2)];
    const ranked = rerankByProximity(hits, q, english);
    for (const h of ranked) {
      expect(h.bm25Max).toBeCloseTo(CEILING + 4.4, 9);
      expect(h.score).toBe(h.bm25 / h.bm25Max);
      expect(h.score).toBeGreaterThan(0);
      expect(h.score).toBeLessThan(1);
    }
    // The best is near the most BM25 and bonus can give together.
    expect(ranked[0]!.score).toBeGreaterThan(0.99);
    const scores = ranked.map((h) => h.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });
});

describe('rerankByProximity past its depth', () => {
  it('reorders only the first PROXIMITY_DEPTH hits; the rest follow in BM25 order, scores falling', () => {
    // Every hit holds the words side by side, so each of the first PROXIMITY_DEPTH gains.
    const hits = Array.from({ length: PROXIMITY_DEPTH + 5 }, (_, i) =>
      hit(`vitamin deficiency case ${i}`, 100 - i),
    );
    const ranked = rerankByProximity(hits, 'vitamin deficiency', english);
    expect(ranked.slice(PROXIMITY_DEPTH).map((h) => [h.id, h.bm25])).toEqual(
      hits.slice(PROXIMITY_DEPTH).map((h) => [h.id, h.bm25]),
    );
    for (const h of ranked.slice(0, PROXIMITY_DEPTH)) expect(h.bm25).toBeGreaterThan(100 - PROXIMITY_DEPTH);
    const scores = ranked.map((h) => h.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });
});

describe('keyword queries with the proximity bonus', () => {
  it('answer BM25 and bonus over their most as score and scores.keyword, and score_threshold compares that', async () => {
    const search = new FakeKeywordIndex();
    const chunk = { chunkIndex: 0, metadata: {}, pageStart: null, pageEnd: null };
    search.hits = [
      { ...hit('vitamin intake and iron deficiency', 10), ...chunk, documentId: 'apart' },
      { ...hit('vitamin deficiency', 10), ...chunk, documentId: 'together' },
      { ...hit('vitamin', 4), ...chunk, documentId: 'one word' },
    ];
    const service = new QueryService(
      search,
      new UsageService(new MemoryUsage(), new FixedClock(new Date())),
      null,
      english,
    );
    const ask = (scoreThreshold?: number) =>
      service.query('org', ALL_PARTITIONS, {
        query: 'vitamin deficiency',
        topK: 10,
        filter: undefined,
        documentIds: null,
        scoreThreshold,
      });
    const { hits } = await ask();
    expect(hits.map((h) => h.documentId)).toEqual(['together', 'apart', 'one word']);
    for (const h of hits) {
      expect(h.scores.keyword).toBe(h.score);
      expect(h.score).toBeGreaterThan(0);
      expect(h.score).toBeLessThan(1);
    }
    // The ceiling grew by the bonus's most (two words, 2.2 each): one divisor for the list.
    expect(hits[2]!.score).toBeCloseTo(4 / (CEILING + 4.4), 12);
    const between = (hits[1]!.score + hits[2]!.score) / 2;
    expect((await ask(between)).hits.map((h) => h.documentId)).toEqual(['together', 'apart']);
  });
});
