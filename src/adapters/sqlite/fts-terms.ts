// How words become FTS5 terms. Every term is prefixed with its org's key ("<key>_<word>"), so each
// org has its own doclists: a query touches only that org's postings, BM25 document frequencies
// are counted within the org (nothing about other tenants' text leaks into scores, and no query
// pays for another org's volume), and a query simply cannot name another org's terms.
// Words are found in JS (domain/search-words.ts), not by the FTS tokenizer: the table's tokenizer
// only splits on spaces, so the prefix can never be cut off a word.

/** The key of an org inside terms: its fts_orgs row id in base 36. */
export function termPrefix(orgKey: number): string {
  return `${orgKey.toString(36)}_`;
}

/**
 * The value written to the FTS table for one chunk, from its words (an analyzer's `words` of its
 * text, space-separated): each word gets the org's prefix.
 */
export function indexTerms(orgKey: number, words: string): string {
  if (words === '') return '';
  const prefix = termPrefix(orgKey);
  return prefix + words.replaceAll(' ', ` ${prefix}`);
}

/**
 * A query's distinct words as terms, each double-quoted so FTS5 reads it as a plain string, never
 * as syntax (AND, NEAR, *, column filters…): OR-ing them can never be a malformed MATCH. All of
 * them: which ones a search ranks with is the index's choice.
 */
export function queryTerms(orgKey: number, words: readonly string[]): string[] {
  const prefix = termPrefix(orgKey);
  return words.map((word) => `"${prefix}${word}"`);
}
