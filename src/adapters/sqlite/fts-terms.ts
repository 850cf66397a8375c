// How text becomes FTS5 terms. Every term is prefixed with its org's key ("<key>_<word>"), so each
// org has its own doclists: a query touches only that org's postings, BM25 document frequencies
// are counted within the org (nothing about other tenants' text leaks into scores, and no query
// pays for another org's volume), and a query simply cannot name another org's terms.
// Words are found here, in JS, not by the FTS tokenizer: the table's tokenizer only splits on
// spaces, so the prefix can never be cut off a word.

/** Longer runs of letters (base64 blobs, hashes) are cut: they would only bloat the term index. */
const MAX_WORD_LENGTH = 64;
/** Distinct query words beyond this are ignored: each one is another doclist to merge. */
export const MAX_QUERY_TERMS = 64;

const WORD = /[\p{L}\p{N}\p{Co}]+/gu;
const MARKS = /\p{M}+/gu;

/**
 * Lower-cased, compatibility-decomposed words without diacritics ("Café" → "cafe", "ﬁ" → "fi").
 * Normalising the whole text before extracting words means a decomposition can never put a
 * space or a mark inside a word.
 */
export function* wordsOf(text: string): Generator<string> {
  const normal = text.toLowerCase().normalize('NFKD').replace(MARKS, '');
  for (const match of normal.matchAll(WORD)) {
    const word = match[0];
    yield word.length <= MAX_WORD_LENGTH ? word : Array.from(word).slice(0, MAX_WORD_LENGTH).join('');
  }
}

/** The key of an org inside terms: its fts_orgs row id in base 36. */
export function termPrefix(orgKey: number): string {
  return `${orgKey.toString(36)}_`;
}

/** The value written to the FTS table for one chunk. */
export function indexTerms(orgKey: number, text: string): string {
  const prefix = termPrefix(orgKey);
  const terms: string[] = [];
  for (const word of wordsOf(text)) terms.push(prefix + word);
  return terms.join(' ');
}

/**
 * The distinct terms of a free-text query, each double-quoted so FTS5 reads it as a plain string,
 * never as syntax (AND, NEAR, *, column filters…): OR-ing them can never be a malformed MATCH.
 */
export function queryTerms(orgKey: number, query: string): string[] {
  const prefix = termPrefix(orgKey);
  const terms = new Set<string>();
  for (const word of wordsOf(query)) {
    terms.add(`"${prefix}${word}"`);
    if (terms.size >= MAX_QUERY_TERMS) break;
  }
  return [...terms];
}

/** A MATCH expression for free text: its terms OR-ed; null when the text holds no words. */
export function matchExpression(orgKey: number, query: string): string | null {
  const terms = queryTerms(orgKey, query);
  return terms.length === 0 ? null : terms.join(' OR ');
}
