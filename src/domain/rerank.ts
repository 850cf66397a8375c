// The second stage of a query: a cross-encoder (the Reranker port) reads the query with each of the
// first stage's best chunks and orders them by its relevance score. The first stage (keyword,
// semantic or hybrid, filters applied) hands over its best max(top_k, rerank_candidates) chunks;
// the answer's order, `score` and `scores.rerank` are the reranker's. A reranker that fails (or is
// skipped by its open circuit breaker) leaves the first stage's order, and the answer says so.
import { ERRORS } from './errors.js';
import { RerankError, type Reranker } from './ports.js';

export const DEFAULT_RERANK_CANDIDATES = 50;
export const MAX_RERANK_CANDIDATES = 200;

/** What reranking needs; absent when no reranker is configured (RERANK=none). */
export interface Reranking {
  reranker: Reranker;
  /** How long a query waits for the scores (RERANK_TIMEOUT_MS): past it the reranker counts as down. */
  deadlineMs: number;
}

/** A first-stage hit, as far as reranking is concerned. */
interface Candidate {
  text: string;
  score: number;
  scores: { rerank: number | null };
}

/**
 * The candidates in the reranker's order (best first, ties in first-stage order), each with its
 * relevance as `score` and `scores.rerank`; null when the reranker failed, for the caller to answer
 * the first stage's order. Errors other than the reranker's own are thrown.
 */
export async function rerankCandidates<T extends Candidate>(
  reranking: Reranking,
  query: string,
  candidates: readonly T[],
): Promise<T[] | null> {
  if (candidates.length === 0) return [];
  const deadline = AbortSignal.timeout(reranking.deadlineMs);
  let scores: number[];
  try {
    scores = await reranking.reranker.score(
      query,
      candidates.map((c) => c.text),
      { signal: deadline },
    );
  } catch (error) {
    if (error instanceof RerankError || deadline.aborted) return null;
    throw error;
  }
  if (scores.length !== candidates.length || !scores.every(Number.isFinite)) return null;
  return candidates
    .map((hit, position) => ({ hit, position, relevance: scores[position]! }))
    .sort((a, b) => b.relevance - a.relevance || a.position - b.position)
    .map(({ hit, relevance }) => ({
      ...hit,
      score: relevance,
      scores: { ...hit.scores, rerank: relevance },
    }));
}

/** Whether a query is reranked: as asked, else whenever a reranker is configured. */
export function wantsRerank(asked: boolean | undefined, reranking: Reranking | null): boolean {
  if (asked === true && reranking === null) throw ERRORS.rerankUnavailable();
  return asked ?? reranking !== null;
}
