// Ranking quality measures, computed as trec_eval (and so pytrec_eval and BEIR, which call it)
// computes them, from a ranking of document ids and graded judgements (document id → grade, an
// integer ≥ 0; 0 is judged not relevant):
// - nDCG@k (trec_eval's `ndcg_cut.k`): DCG = Σ over the first k ranks of grade / log2(rank + 1),
//   the grade itself as the gain (linear, not 2^grade − 1); the ideal DCG is the same sum over every
//   judged grade of the query sorted from highest, cut at k; 0 when the query has no grade above 0.
// - Recall@k (`recall_k`): relevant documents (grade > 0) in the first k ranks / all relevant ones.
// - MRR@k (BEIR's MRR@k): 1 / the rank of the first relevant document within the first k, else 0.
// A scored run is put in trec_eval's order first (`trecOrder`): score descending, a tie broken by
// document id descending, compared by code point as trec_eval's strcmp compares UTF-8 bytes.
// docs/EVALUATIONS.md explains these choices to users; bench/beir.ts scores BEIR with the same code.

/** Document id → judged grade (0 = not relevant). */
export type Judgements = ReadonlyMap<string, number>;

/** A document's place in a run: its id and the score the system gave it. */
export interface ScoredDocument {
  id: string;
  score: number;
}

/** Code-point order, as strcmp orders the UTF-8 bytes of two strings. */
function compareCodePoints(a: string, b: string): number {
  const left = [...a];
  const right = [...b];
  const n = Math.min(left.length, right.length);
  for (let i = 0; i < n; i++) {
    const x = left[i]!.codePointAt(0)!;
    const y = right[i]!.codePointAt(0)!;
    if (x !== y) return x - y;
  }
  return left.length - right.length;
}

/** The run's document ids in trec_eval's order: score descending, then id descending. */
export function trecOrder(run: readonly ScoredDocument[]): string[] {
  return [...run]
    .sort((a, b) => (a.score === b.score ? compareCodePoints(b.id, a.id) : b.score - a.score))
    .map((d) => d.id);
}

/** nDCG at cutoff k with linear gains (trec_eval `ndcg_cut.k`). */
export function ndcgAt(k: number, ranking: readonly string[], judgements: Judgements): number {
  let dcg = 0;
  for (const [i, id] of ranking.slice(0, k).entries()) {
    const grade = judgements.get(id) ?? 0;
    if (grade > 0) dcg += grade / Math.log2(i + 2);
  }
  const ideal = [...judgements.values()].filter((g) => g > 0).sort((a, b) => b - a);
  let idealDcg = 0;
  for (const [i, grade] of ideal.slice(0, k).entries()) idealDcg += grade / Math.log2(i + 2);
  return idealDcg === 0 ? 0 : dcg / idealDcg;
}

/** How many judged documents are relevant (grade > 0). */
export function relevantCount(judgements: Judgements): number {
  let n = 0;
  for (const grade of judgements.values()) if (grade > 0) n++;
  return n;
}

/** Recall at cutoff k (trec_eval `recall_k`); 0 when nothing is relevant. */
export function recallAt(k: number, ranking: readonly string[], judgements: Judgements): number {
  const relevant = relevantCount(judgements);
  if (relevant === 0) return 0;
  let found = 0;
  for (const id of ranking.slice(0, k)) if ((judgements.get(id) ?? 0) > 0) found++;
  return found / relevant;
}

/** Reciprocal rank of the first relevant document within the first k ranks, else 0. */
export function reciprocalRankAt(k: number, ranking: readonly string[], judgements: Judgements): number {
  const at = ranking.slice(0, k).findIndex((id) => (judgements.get(id) ?? 0) > 0);
  return at === -1 ? 0 : 1 / (at + 1);
}

/** The 1-based rank of each judged relevant document in the ranking, null when it is absent. */
export function ranksOf(ranking: readonly string[], judgements: Judgements): Map<string, number | null> {
  const position = new Map<string, number>();
  for (const [i, id] of ranking.entries()) if (!position.has(id)) position.set(id, i + 1);
  const ranks = new Map<string, number | null>();
  for (const [id, grade] of judgements) if (grade > 0) ranks.set(id, position.get(id) ?? null);
  return ranks;
}

/** The arithmetic mean; 0 for no values. */
export function mean(values: readonly number[]): number {
  if (values.length === 0) return 0;
  let sum = 0;
  for (const v of values) sum += v;
  return sum / values.length;
}

/**
 * The p-th percentile (0 < p ≤ 100) by the nearest-rank method: the smallest value with at least
 * p% of the values at or below it. Null for no values.
 */
export function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1]!;
}
