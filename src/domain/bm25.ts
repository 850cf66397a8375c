// Okapi BM25 as SQLite's FTS5 computes it (its bm25() function), for an index that must rank the
// same way without FTS5: PostgreSQL has no BM25 of its own, so its keyword index computes this
// formula over the term frequencies its tsvectors hold.

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
