// The words a chunk is found by: one normal form shared by whoever builds the index (the chunking
// threads, which do it off the API's event loop) and whoever reads it (the stores, for queries),
// so a query word and an indexed word can only meet in the same form.

/** Longer runs of letters (base64 blobs, hashes) are cut: they would only bloat the term index. */
const MAX_WORD_LENGTH = 64;

const NON_ASCII = /[\u0080-\uffff]/;
const ASCII_WORD = /[a-z0-9]+/g;
const CANDIDATE_RUN = /[a-z0-9\u0080-\uffff]+/g;
const MARKS = /\p{M}+/gu;
const WORD = /[\p{L}\p{N}\p{Co}]+/gu;

const cutAscii = (word: string) => (word.length > MAX_WORD_LENGTH ? word.slice(0, MAX_WORD_LENGTH) : word);
const cut = (word: string) =>
  word.length > MAX_WORD_LENGTH ? Array.from(word).slice(0, MAX_WORD_LENGTH).join('') : word;

/**
 * A text's words in order, separated by single spaces ('' when it has none): lower-cased,
 * compatibility-decomposed, without diacritics ("Café" → "cafe", "ﬁ" → "fi"). A word is a run of
 * letters, digits and private-use characters; everything between words becomes one space.
 * Normalising the whole text before splitting means a decomposition can never put a space or a
 * mark inside a word. ASCII text (most chunks) skips the Unicode steps, which change nothing there.
 */
export function searchWords(text: string): string {
  const words: string[] = [];
  if (!NON_ASCII.test(text)) {
    for (const word of text.toLowerCase().match(ASCII_WORD) ?? []) words.push(cutAscii(word));
    return words.join(' ');
  }
  // Runs of ASCII letters and digits mixed with any non-ASCII characters (a fast regex, without
  // the u flag); only runs holding non-ASCII characters are split again by Unicode category.
  // Lower-casing after decomposing catches capitals that decomposition makes ("™" → "TM").
  const runs = text.normalize('NFKD').toLowerCase().match(CANDIDATE_RUN) ?? [];
  for (const run of runs) {
    if (!NON_ASCII.test(run)) words.push(cutAscii(run));
    else for (const [word] of run.replace(MARKS, '').matchAll(WORD)) words.push(cut(word));
  }
  return words.join(' ');
}

/** The same words as a list (for queries). */
export function wordsOf(text: string): string[] {
  const words = searchWords(text);
  return words === '' ? [] : words.split(' ');
}
