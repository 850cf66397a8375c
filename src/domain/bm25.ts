// Okapi BM25 as SQLite's FTS5 computes it (its bm25() function), for an index that must rank the
// same way without FTS5: PostgreSQL has no BM25 of its own, so its keyword index computes this
// formula over the term frequencies its tsvectors hold. And the keyword score a reader sees: a
// chunk's BM25 as a fraction of the most its query's terms could give (docs/ARCHITECTURE.md,
// "Keyword scores").

/** FTS5's fixed parameters. */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

/**
 * FTS5's inverse document frequency of a term held by `matching` of `total` chunks: the
 * Robertson–Spärck Jones weight, floored at a millionth so a term in most chunks still counts a
 * little and never negatively.
 */
export function bm25Idf(total: number, matching: number): number {
  const idf = Math.log((total - matching + 0.5) / (matching + 0.5));
  return Math.max(idf, 1e-6);
}

/**
 * The most BM25 a chunk could score for terms of these IDFs, one each: a term's part is its IDF
 * times its saturated frequency tf·(k1 + 1) / (tf + k1·(1 − b + b·length/mean)), which stays under
 * k1 + 1 however often the term occurs.
 */
export function bm25Ceiling(idfs: readonly number[]): number {
  let ceiling = 0;
  for (const idf of idfs) ceiling += idf * (BM25_K1 + 1);
  return ceiling;
}

/**
 * What a keyword result's `score` says: its BM25 (with the proximity bonus when on) as a fraction
 * of the most the query could score, `ceiling` (bm25Ceiling, plus the bonus's ceiling). One
 * positive divisor per query, so the order is BM25's; 1 would be every word of the query present
 * with saturating frequency. At most 1 even where the ceiling rests on a count a little stale
 * (SqliteKeywordIndex: a word remembered over the row budget), so such a result shows 1 at most.
 */
export function keywordScore(raw: number, ceiling: number): number {
  return ceiling > 0 ? Math.min(1, raw / ceiling) : 0;
}
