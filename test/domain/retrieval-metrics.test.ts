// The ranking measures against values worked out by hand from trec_eval's definitions (pytrec_eval
// is not installable here): graded gains used as they are, ideal DCG from every judged grade,
// ties in score broken by document id descending, a relevant document outside the cutoff.
import { describe, expect, it } from 'vitest';
import { ndcgAt as benchNdcgAt, recallAt as benchRecallAt } from '../../bench/beir.js';
import {
  mean,
  ndcgAt,
  percentile,
  ranksOf,
  recallAt,
  reciprocalRankAt,
  trecOrder,
} from '../../src/domain/retrieval-metrics.js';

const judged = (entries: Record<string, number>) => new Map(Object.entries(entries));

describe('trec_eval order', () => {
  it('sorts by score descending and breaks ties by document id descending', () => {
    expect(
      trecOrder([
        { id: 'd2', score: 0.8 },
        { id: 'd1', score: 0.9 },
        { id: 'd5', score: 0.1 },
        { id: 'd3', score: 0.8 },
        { id: 'd4', score: 0.5 },
      ]),
    ).toEqual(['d1', 'd3', 'd2', 'd4', 'd5']);
  });

  it('compares ids by code point, as strcmp compares UTF-8 bytes', () => {
    // 'b' (98) > 'a' (97) > 'B' (66); U+1F600 (an astral character) sorts above U+FF5E, though its
    // first UTF-16 unit (0xD83D) is below 0xFF5E.
    expect(
      trecOrder([
        { id: 'B', score: 1 },
        { id: 'a', score: 1 },
        { id: 'b', score: 1 },
      ]),
    ).toEqual(['b', 'a', 'B']);
    expect(
      trecOrder([
        { id: '\uFF5E', score: 1 },
        { id: '\u{1F600}', score: 1 },
      ]),
    ).toEqual(['\u{1F600}', '\uFF5E']);
  });
});

describe('graded measures', () => {
  // Query A: ranking d1, d3, d2, d4, d5; judged d2 = 2, d4 = 1, d9 = 3 (never retrieved), d5 = 0.
  const rankingA = ['d1', 'd3', 'd2', 'd4', 'd5'];
  const qrelsA = judged({ d2: 2, d4: 1, d9: 3, d5: 0 });

  it('nDCG@10 uses the grade as the gain and the ideal of every judged grade', () => {
    // DCG = 2/log2(3+1) + 1/log2(4+1) = 1 + 0.430676558…; ideal = 3/1 + 2/log2(3) + 1/log2(4)
    // = 4.761859507…; nDCG = 0.300444932…
    expect(ndcgAt(10, rankingA, qrelsA)).toBeCloseTo(0.30044493247382464, 12);
    // Linear gain, not 2^grade − 1: with exponential gains this would be (3/2 + 1/log2 5)/(7 + 3/log2 3 + 1/2).
    expect(ndcgAt(10, rankingA, qrelsA)).not.toBeCloseTo(
      (1.5 + 1 / Math.log2(5)) / (7 + 3 / Math.log2(3) + 0.5),
      3,
    );
  });

  it('cuts both DCG and the ideal at k', () => {
    // At 2 nothing relevant is retrieved.
    expect(ndcgAt(2, rankingA, qrelsA)).toBe(0);
    // At 3: DCG = 2/log2(4) = 1; ideal = 3 + 2/log2(3) + 1/log2(4) = 4.761859507…
    expect(ndcgAt(3, rankingA, qrelsA)).toBeCloseTo(1 / (3 + 2 / Math.log2(3) + 0.5), 12);
  });

  it('Recall@k counts grade > 0 documents in the first k over all relevant ones', () => {
    expect(recallAt(3, rankingA, qrelsA)).toBeCloseTo(1 / 3, 12);
    expect(recallAt(10, rankingA, qrelsA)).toBeCloseTo(2 / 3, 12);
  });

  it('MRR@10 is one over the rank of the first relevant document', () => {
    expect(reciprocalRankAt(10, rankingA, qrelsA)).toBeCloseTo(1 / 3, 12);
    expect(reciprocalRankAt(2, rankingA, qrelsA)).toBe(0);
  });

  it('gives the ranks of the relevant documents, null for those not retrieved', () => {
    expect(Object.fromEntries(ranksOf(rankingA, qrelsA))).toEqual({ d2: 3, d4: 4, d9: null });
  });

  it('scores a query whose relevant documents were not retrieved 0 on every measure', () => {
    const qrels = judged({ e9: 1 });
    expect(ndcgAt(10, ['e1', 'e2'], qrels)).toBe(0);
    expect(recallAt(10, ['e1', 'e2'], qrels)).toBe(0);
    expect(reciprocalRankAt(10, ['e1', 'e2'], qrels)).toBe(0);
  });

  it('leaves a relevant document past rank 10 out of nDCG@10 and MRR@10 but not out of Recall@20', () => {
    const ranking = Array.from({ length: 12 }, (_, i) => `x${String(i + 1).padStart(2, '0')}`);
    const qrels = judged({ x11: 1 });
    expect(ndcgAt(10, ranking, qrels)).toBe(0);
    expect(reciprocalRankAt(10, ranking, qrels)).toBe(0);
    expect(recallAt(10, ranking, qrels)).toBe(0);
    expect(recallAt(20, ranking, qrels)).toBe(1);
  });

  it('scores ties the way their trec_eval order puts them', () => {
    // 'B' is relevant; tied with 'a' and 'b', it is ranked third: DCG = 1/log2(4) = 0.5, ideal 1.
    const ranking = trecOrder([
      { id: 'a', score: 0.5 },
      { id: 'B', score: 0.5 },
      { id: 'b', score: 0.5 },
    ]);
    expect(ndcgAt(10, ranking, judged({ B: 1 }))).toBe(0.5);
    expect(reciprocalRankAt(10, ranking, judged({ B: 1 }))).toBeCloseTo(1 / 3, 12);
  });

  it('a query with no grade above 0 scores 0, as trec_eval gives it', () => {
    expect(ndcgAt(10, ['d1'], judged({ d1: 0 }))).toBe(0);
    expect(recallAt(10, ['d1'], judged({ d1: 0 }))).toBe(0);
  });
});

describe('the BEIR benchmark scores with the same arithmetic', () => {
  it('binary judgements: relevant at ranks 1 and 3 of two relevant', () => {
    // Relevant at ranks 1 and 3: DCG = 1 + 1/log2(4) = 1.5; ideal = 1 + 1/log2(3).
    expect(benchNdcgAt(10, ['r1', 'n1', 'r2'], new Set(['r1', 'r2']))).toBeCloseTo(
      1.5 / (1 + 1 / Math.log2(3)),
      12,
    );
    // Relevant at ranks 2 and 4: (1/log2 3 + 1/log2 5) / (1 + 1/log2 3) = 0.650920929…
    expect(benchNdcgAt(10, ['n1', 'r1', 'n2', 'r2'], new Set(['r1', 'r2']))).toBeCloseTo(
      0.6509209298071326,
      12,
    );
    expect(benchRecallAt(1, ['r1', 'n1', 'r2'], new Set(['r1', 'r2']))).toBe(0.5);
  });
});

describe('summaries', () => {
  it('percentiles by nearest rank', () => {
    expect(percentile([5, 1, 3, 2, 4], 50)).toBe(3);
    expect(percentile([5, 1, 3, 2, 4], 95)).toBe(5);
    expect(percentile([7], 95)).toBe(7);
    expect(percentile([], 50)).toBeNull();
    expect(percentile([1, 2, 3, 4], 50)).toBe(2);
  });

  it('means over the queries', () => {
    expect(mean([0.30044493247382464, 0, 0.5])).toBeCloseTo((0.30044493247382464 + 0.5) / 3, 12);
    expect(mean([])).toBe(0);
  });
});
