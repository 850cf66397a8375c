// The words a chunk is found by: one normal form shared by whoever builds the index (the chunking
// threads, which do it off the API's event loop) and whoever reads it (the stores, for queries),
// so a query word and an indexed word can only meet in the same form.

/** Longer runs of letters (base64 blobs, hashes) are cut: they would only bloat the term index. */
const MAX_WORD_LENGTH = 64;

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

/** A text's words in order, separated by single spaces ('' when it has none). */
export function searchWords(text: string): string {
  return Array.from(wordsOf(text)).join(' ');
}
