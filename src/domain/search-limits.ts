// How much work one search may do, the same for every backend: the row budget itself is
// DEFAULT_SEARCH_ROW_BUDGET (ports/keyword-index.ts); these bound how queries and filters use it.
import type { SearchQuery } from './types.js';

/** A query ranks with at most this many of its distinct words, the rarest: each is another posting list. */
export const MAX_QUERY_TERMS = 64;
/** How far a long query's words are counted to pick its MAX_QUERY_TERMS rarest ones. */
export const RAREST_PRECOUNT = 100;
/** A filter passed by at most this many documents ranks all their chunks (document_ids' limit). */
export const MAX_FILTER_DOCUMENTS = 1000;
/**
 * Named documents (`document_ids`) may hold this many times the row budget and still have all
 * their chunks ranked: "search inside this document" stays exact for a document of up to 200,000
 * chunks (at the default budget), more than the largest upload makes.
 */
export const NAMED_DOCUMENTS_BUDGET_FACTOR = 10;
/** A looser filter looks for the budget's worth of passing matches among this many × budget. */
export const LOOSE_FILTER_SCAN_FACTOR = 4;

/** How many chunks of the documents that pass a query's filters it may rank all of. */
export function candidateBudget(q: SearchQuery, rowBudget: number): number {
  return q.documentIds === null ? rowBudget : rowBudget * NAMED_DOCUMENTS_BUDGET_FACTOR;
}
