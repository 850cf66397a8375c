// The words a chunk is found by: one analysis shared by whoever builds the index (the chunking
// threads, which do it off the API's event loop) and whoever reads it (the indexes, for queries),
// so a query word and an indexed word can only meet in the same form. Both backends index these
// words as they are, so SQLite and PostgreSQL match exactly the same words.
import { stemmer } from 'stemmer';

/** `english`: Porter stemming after folding ("running" and "runs" → "run"); `none`: folding only. */
export type SearchLanguage = 'english' | 'none';

export const SEARCH_LANGUAGES: readonly SearchLanguage[] = ['english', 'none'];

/** Longer runs of letters (base64 blobs, hashes) are cut: they would only bloat the term index. */
const MAX_WORD_LENGTH = 64;

const NON_ASCII = /[\u0080-\uffff]/;
const ASCII_WORD = /[a-z0-9]+/g;
const CANDIDATE_RUN = /[a-z0-9\u0080-\uffff]+/g;
const MARKS = /\p{M}+/gu;
const WORD = /[\p{L}\p{N}\p{Co}]+/gu;
/** Only words of ASCII letters are stemmed: numbers, codes and other scripts stay exactly as written. */
const STEMMABLE = /^[a-z]{3,}$/;

const cutAscii = (word: string) => (word.length > MAX_WORD_LENGTH ? word.slice(0, MAX_WORD_LENGTH) : word);
const cut = (word: string) =>
  word.length > MAX_WORD_LENGTH ? Array.from(word).slice(0, MAX_WORD_LENGTH).join('') : word;

/**
 * A text's words in order, separated by single spaces ('' when it has none): lower-cased,
 * compatibility-decomposed, without diacritics ("Café" → "cafe", "ﬁ" → "fi"). A word is a run of
 * letters, digits and private-use characters; everything between words becomes one space.
 * Normalising the whole text before splitting means a decomposition can never put a space or a
 * mark inside a word. ASCII text (most chunks) skips the Unicode steps, which change nothing there.
 * This is the analysis of SEARCH_LANGUAGE=none; `analyzer` adds stemming to it.
 */
export function searchWords(text: string): string {
  return foldedWords(text, (word) => word);
}

function foldedWords(text: string, stem: (word: string) => string): string {
  const words: string[] = [];
  if (!NON_ASCII.test(text)) {
    for (const word of text.toLowerCase().match(ASCII_WORD) ?? []) words.push(stem(cutAscii(word)));
    return words.join(' ');
  }
  // Runs of ASCII letters and digits mixed with any non-ASCII characters (a fast regex, without
  // the u flag); only runs holding non-ASCII characters are split again by Unicode category.
  // Lower-casing after decomposing catches capitals that decomposition makes ("™" → "TM").
  const runs = text.normalize('NFKD').toLowerCase().match(CANDIDATE_RUN) ?? [];
  for (const run of runs) {
    if (!NON_ASCII.test(run)) words.push(stem(cutAscii(run)));
    else for (const [word] of run.replace(MARKS, '').matchAll(WORD)) words.push(stem(cut(word)));
  }
  return words.join(' ');
}

/** How a deployment turns text into the words it indexes and queries with. */
export interface Analyzer {
  readonly language: SearchLanguage;
  /** The text's words in order, separated by single spaces ('' when it has none). */
  words(text: string): string;
  /** The distinct words of a query, in query order. */
  queryWords(text: string): string[];
}

/**
 * Stems remembered per thread: text repeats its words (Zipf), so most words are looked up rather
 * than stemmed again; stemming is several times slower than the lookup (bench/RESULTS.md).
 * Cleared when full, which bounds it without bookkeeping.
 */
const STEM_CACHE_SIZE = 50_000;
const stems = new Map<string, string>();

function porter(word: string): string {
  if (!STEMMABLE.test(word)) return word;
  let stem = stems.get(word);
  if (stem === undefined) {
    stem = stemmer(word);
    if (stems.size >= STEM_CACHE_SIZE) stems.clear();
    stems.set(word, stem);
  }
  return stem;
}

const ANALYZERS: Record<SearchLanguage, Analyzer> = {
  none: makeAnalyzer('none', searchWords),
  english: makeAnalyzer('english', (text) => foldedWords(text, porter)),
};

function makeAnalyzer(language: SearchLanguage, words: (text: string) => string): Analyzer {
  return {
    language,
    words,
    queryWords: (text) => {
      const all = words(text);
      return all === '' ? [] : [...new Set(all.split(' '))];
    },
  };
}

export function analyzer(language: SearchLanguage): Analyzer {
  return ANALYZERS[language];
}

/**
 * A query's words under several analyses at once, distinct, in query order: while an index is
 * being rewritten from one analysis to another, its chunks hold either form, and a query must find
 * both.
 */
export function queryWordsOf(text: string, analyzers: readonly Analyzer[]): string[] {
  const words = new Set<string>();
  for (const a of analyzers) for (const word of a.queryWords(text)) words.add(word);
  return [...words];
}

/**
 * The analyses a query is read with, given the configured one and the one the index's words were
 * written with: both while they differ (until `docindex reindex` has rewritten every chunk).
 * Chunks of PostgreSQL's former analysis ('legacy': its own 'simple' parser) are closest to
 * folding alone.
 */
export function queryAnalyzers(
  configured: SearchLanguage,
  written: SearchLanguage | 'legacy' | null,
): Analyzer[] {
  const previous = written === 'legacy' ? 'none' : written;
  if (previous === null || previous === configured) return [analyzer(configured)];
  return [analyzer(configured), analyzer(previous)];
}
