// How text becomes FTS5 terms. Every term is prefixed with its org's key ("<key>_<word>"), so each
// org has its own doclists: a query touches only that org's postings, BM25 document frequencies
// are counted within the org (nothing about other tenants' text leaks into scores, and no query
// pays for another org's volume), and a query simply cannot name another org's terms.
// Words are found here, in JS, not by the FTS tokenizer: the table's tokenizer only splits on
// spaces, so the prefix can never be cut off a word.
import { wordsOf } from '../../domain/search-words.js';

/** The key of an org inside terms: its fts_orgs row id in base 36. */
export function termPrefix(orgKey: number): string {
  return `${orgKey.toString(36)}_`;
}

/**
 * The value written to the FTS table for one chunk, from its search words (`searchWords` of its
 * text, space-separated): each word gets the org's prefix.
 */
export function indexTerms(orgKey: number, words: string): string {
  if (words === '') return '';
  const prefix = termPrefix(orgKey);
  return prefix + words.replaceAll(' ', ` ${prefix}`);
}

/**
 * The distinct terms of a free-text query in query order, each double-quoted so FTS5 reads it as a
 * plain string, never as syntax (AND, NEAR, *, column filters…): OR-ing them can never be a
 * malformed MATCH. All of them: which ones a search ranks with is the store's choice.
 */
export function queryTerms(orgKey: number, query: string): string[] {
  const prefix = termPrefix(orgKey);
  const terms = new Set<string>();
  for (const word of wordsOf(query)) terms.add(`"${prefix}${word}"`);
  return [...terms];
}
