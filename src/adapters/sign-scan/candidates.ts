// How many candidates the sign-bit prefilter hands the exact cosine, and the prefilter's options,
// the same for both vector indexes: an org and profile with more vectors than the budget are
// searched in two steps (Hamming distance over sign bits, then the exact cosine of the nearest);
// one within it is ranked exactly.

/** At least this many candidates, or CANDIDATES_PER_HIT for each hit asked when that is more. */
export const MIN_CANDIDATES = 1_000;
export const CANDIDATES_PER_HIT = 10;

/** The prefilter's options; tests shrink the candidate budget to reach the two steps on a handful of vectors. */
export interface PrefilterOptions {
  minCandidates?: number;
  candidatesPerHit?: number;
  /** Partitions of at least this many vectors are scanned on the scan thread (scan.ts). */
  scanThreadFrom?: number;
  /** Bytes of sign bits this process holds before it lets the least recently searched go (byte-budget-lru.ts). */
  prefilterMaxBytes?: number;
}

/** The candidate budget of a search asking for `limit` hits. */
export function candidateCount(options: PrefilterOptions, limit: number): number {
  return Math.max(
    options.minCandidates ?? MIN_CANDIDATES,
    limit * (options.candidatesPerHit ?? CANDIDATES_PER_HIT),
  );
}
