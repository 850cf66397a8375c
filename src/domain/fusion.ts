// Weighted reciprocal rank fusion: a hybrid query's keyword and semantic lists, each
// already filtered and cut to its best RRF_DEPTH, merged by rank alone. BM25 scores and cosine
// similarities live on different scales, so fusing ranks needs no normalisation that one odd
// query could skew: score(chunk) = w/(k + rank_sem) + (1 − w)/(k + rank_kw), ranks from 1, a list
// the chunk is absent from adding nothing.

/** k of the formula: how quickly the weight of a rank falls off (60, as in Cormack et al. 2009). */
export const RRF_K = 60;
/** How many of each list take part. */
export const RRF_DEPTH = 100;

export interface Fused {
  key: string;
  score: number;
  /** 1-based ranks in each list; null when absent from it. */
  keywordRank: number | null;
  semanticRank: number | null;
}

/**
 * The union of both lists (keys best first, each key once per list), best fused score first; ties
 * go to the better single rank, then the key, so an answer never depends on Map order.
 */
export function fuseRanks(
  keyword: readonly string[],
  semantic: readonly string[],
  semanticWeight: number,
  k = RRF_K,
): Fused[] {
  const fused = new Map<string, Fused>();
  const entry = (key: string): Fused => {
    let f = fused.get(key);
    if (!f) {
      f = { key, score: 0, keywordRank: null, semanticRank: null };
      fused.set(key, f);
    }
    return f;
  };
  keyword.forEach((key, i) => {
    const f = entry(key);
    f.keywordRank = i + 1;
    f.score += (1 - semanticWeight) / (k + i + 1);
  });
  semantic.forEach((key, i) => {
    const f = entry(key);
    f.semanticRank = i + 1;
    f.score += semanticWeight / (k + i + 1);
  });
  const best = (f: Fused) =>
    Math.min(f.keywordRank ?? Number.POSITIVE_INFINITY, f.semanticRank ?? Number.POSITIVE_INFINITY);
  return [...fused.values()].sort(
    (a, b) => b.score - a.score || best(a) - best(b) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0),
  );
}

/** Keeps at most `max` items per group, in order (max_chunks_per_document). */
export function capPerGroup<T>(items: readonly T[], groupOf: (item: T) => string, max: number): T[] {
  const seen = new Map<string, number>();
  return items.filter((item) => {
    const group = groupOf(item);
    const n = seen.get(group) ?? 0;
    seen.set(group, n + 1);
    return n < max;
  });
}
