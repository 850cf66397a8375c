// A term-proximity bonus on top of BM25, after Rasolofo and Savoy's BM25TP ("Term proximity
// scoring for keyword-based retrieval systems", ECIR 2003): BM25 scores each query word alone, so a
// chunk that holds the words side by side ranks no higher than one that scatters them. The bonus
// is computed from the texts of the chunks an index already returned, so both backends rank the
// same way without either storing positions for it. Its form and constants are the paper's, not
// fitted to a test collection (its effect on each collection: bench/RESULTS.md, section 11).
import { keywordScore } from './bm25.js';
import type { Analyzer } from './search-words.js';
import type { KeywordHit } from './types.js';

/**
 * How many of BM25's best chunks are reordered with the bonus: enough for a first page whatever
 * top_k asks, and bounded, since reading a chunk's words costs the event loop about as much as
 * the rest of the query (on SciFact reordering 30 or 100 gave the same nDCG@10).
 */
export const PROXIMITY_DEPTH = 30;

/** Two query words further apart than this many words earn nothing. */
const WINDOW = 5;

/** The paper's saturation, BM25's k1 with no length normalisation: a chunk's bonus is its own. */
const K1 = 1.2;

/**
 * Lucene's English stop words. BM25TP weighs a word's pairs by min(1, idf); an index's document
 * frequencies are not at hand here, and the words whose idf is under 1 in a collection (held by
 * over a quarter of its chunks) are these function words, whose adjacency says nothing
 * ("of the"). They still count in BM25 and lend their nearness to other words; they earn no
 * bonus of their own.
 */
const FUNCTION_WORDS =
  'a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with';

const functionWordsOf = new Map<Analyzer, Set<string>>();

function functionWords(analyzer: Analyzer): Set<string> {
  let words = functionWordsOf.get(analyzer);
  if (!words) {
    words = new Set(analyzer.words(FUNCTION_WORDS).split(' '));
    functionWordsOf.set(analyzer, words);
  }
  return words;
}

/**
 * The bonus of one chunk's words for a query's distinct words: each pair of different query words
 * at most WINDOW apart adds 1 / distance² to both words' tallies, and each word's tally is
 * saturated as a term frequency is in BM25 (tally · (k1 + 1) / (tally + k1)). Words in
 * `unweighted` still lend their nearness to others but earn no bonus of their own.
 */
export function proximityBonus(
  chunkWords: readonly string[],
  queryWords: ReadonlySet<string>,
  unweighted: ReadonlySet<string> = new Set(),
): number {
  const positions: number[] = [];
  for (const [i, word] of chunkWords.entries()) if (queryWords.has(word)) positions.push(i);
  if (positions.length < 2) return 0;
  const tally = new Map<string, number>();
  for (const [a, from] of positions.entries()) {
    for (const to of positions.slice(a + 1)) {
      const distance = to - from;
      if (distance > WINDOW) break;
      const x = chunkWords[from]!;
      const y = chunkWords[to]!;
      if (x === y) continue;
      const weight = 1 / (distance * distance);
      tally.set(x, (tally.get(x) ?? 0) + weight);
      tally.set(y, (tally.get(y) ?? 0) + weight);
    }
  }
  let bonus = 0;
  for (const [word, t] of tally) if (!unweighted.has(word)) bonus += (t * (K1 + 1)) / (t + K1);
  return bonus;
}

/**
 * The most proximityBonus can give a chunk for these query words: each weighted word's tally is
 * saturated under k1 + 1 (nothing for a query of fewer than two words, which earns no bonus).
 */
export function proximityCeiling(queryWords: ReadonlySet<string>, unweighted: ReadonlySet<string>): number {
  if (queryWords.size < 2) return 0;
  let weighted = 0;
  for (const word of queryWords) if (!unweighted.has(word)) weighted += 1;
  return weighted * (K1 + 1);
}

/**
 * Hits ranked by BM25, the first PROXIMITY_DEPTH reranked by BM25 + the proximity bonus of their
 * text (each one's `bm25` becomes that sum), the rest after them as they were: the bonus is never
 * negative, so the sums still fall down the list. Ties keep the index's order. Every hit's
 * ceiling grows by the bonus's (proximityCeiling) and its `score` is the sum as a fraction of
 * that: one divisor for the list, so the scores fall as the sums do and stay within (0, 1].
 */
export function rerankByProximity<H extends Pick<KeywordHit, 'text' | 'score' | 'bm25' | 'bm25Max'>>(
  hits: readonly H[],
  query: string,
  analyzer: Analyzer,
): H[] {
  const queryWords = new Set(analyzer.queryWords(query));
  if (queryWords.size < 2) return [...hits];
  const unweighted = functionWords(analyzer);
  const extra = proximityCeiling(queryWords, unweighted);
  const rescored = (hit: H, bonus: number): H => {
    const bm25 = hit.bm25 + bonus;
    const bm25Max = hit.bm25Max + extra;
    return { ...hit, bm25, bm25Max, score: keywordScore(bm25, bm25Max) };
  };
  const head = hits
    .slice(0, PROXIMITY_DEPTH)
    .map((hit, order) => ({
      hit: rescored(hit, proximityBonus(analyzer.words(hit.text).split(' '), queryWords, unweighted)),
      order,
    }))
    .sort((a, b) => b.hit.bm25 - a.hit.bm25 || a.order - b.order)
    .map((r) => r.hit);
  return [...head, ...hits.slice(PROXIMITY_DEPTH).map((hit) => rescored(hit, 0))];
}
