// The words a chunk is found by: one analysis shared by whoever builds the index (the chunking
// threads, which do it off the API's event loop) and whoever reads it (the indexes, for queries),
// so a query word and an indexed word can only meet in the same form. Both backends index these
// words as they are, so SQLite and PostgreSQL match exactly the same words.
//
// An analysis is per language (an ISO 639-1 code): every language gets Unicode case and accent
// folding, words of scripts written without spaces (Chinese, Japanese, Thai, Lao, Khmer, Burmese)
// segmented with the platform's dictionaries (Intl.Segmenter), Korean words cut of their
// particles (korean.ts); a language with a stemmer (English: Porter; languages.ts lists the
// Snowball ones) gets its words stemmed too. `none` is the analysis without stemming.
import { stemmer as porterStemmer } from 'stemmer';
import { AsciiWordTable } from './ascii-words.js';
import { withoutParticle } from './korean.js';
import { guardedStemmer, SNOWBALL_STEMMERS } from './languages.js';

/**
 * A deployment's SEARCH_LANGUAGE: `auto` (each document's own language, given or detected),
 * `none` (no stemming) or an ISO 639-1 code (documents of unknown language are taken as that
 * language). Its `english` of earlier releases is `en`.
 */
export type SearchLanguage = string;

/**
 * What an index's words were written with, as kept in the index: this release's per-language
 * analysis (ANALYSIS), an earlier release's `english` or `none` (one analysis for every
 * document, without segmentation), or PostgreSQL's 'legacy' (words of its own `simple` parser).
 */
export type WrittenAnalysis = string;

/**
 * This release's analysis: each document's words in the analysis of its own language. The
 * deployment's SEARCH_LANGUAGE decides only the language of documents that neither name one nor
 * have one detected, so changing it needs no rewrite of what is indexed.
 */
export const ANALYSIS: WrittenAnalysis = 'languages';

/** Longer runs of letters (base64 blobs, hashes) are cut: they would only bloat the term index. */
const MAX_WORD_LENGTH = 64;
/** Segmenting costs more than linear time on long runs: a run without breaks is cut into these. */
const MAX_SEGMENTED_RUN = 512;

const NON_ASCII = /[\u0080-\uffff]/;
const ASCII_WORD = /[a-z0-9]+/g;
const CANDIDATE_RUN = /[a-z0-9\u0080-\uffff]+/g;
const MARKS = /\p{M}+/gu;
const WORD = /[\p{L}\p{N}\p{Co}]+/gu;
/** Letters with the marks that belong to them: a stemmer reads "ó", not "o" and a mark. */
const MARKED_WORD = /[\p{L}\p{M}\p{N}\p{Co}]+/gu;
const SEGMENTED_SCRIPT =
  /[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Thai}\p{sc=Lao}\p{sc=Khmer}\p{sc=Myanmar}]/u;
/**
 * Scripts whose marks are accents, folded away ("é" → "e"). In others (Devanagari, Thai, Korean
 * jamo, Japanese voicing marks) a mark is part of the letter and stays.
 */
const ACCENTED_SCRIPT = /[\p{sc=Latin}\p{sc=Greek}\p{sc=Cyrillic}\p{sc=Arabic}\p{sc=Hebrew}]/u;
const HANGUL = /[\uac00-\ud7a3]/;
const DIGIT = /\p{N}/u;
/** Porter stems only words of ASCII letters: numbers, codes and other scripts stay as written. */
const PORTER_STEMMABLE = /^[a-z]{3,}$/;

const segmenter = new Intl.Segmenter(undefined, { granularity: 'word' });

const cutAscii = (word: string) => (word.length > MAX_WORD_LENGTH ? word.slice(0, MAX_WORD_LENGTH) : word);
const cut = (word: string) =>
  word.length > MAX_WORD_LENGTH ? Array.from(word).slice(0, MAX_WORD_LENGTH).join('') : word;

/** How one analysis stems: before folding (Snowball, which reads accents) or after (Porter). */
interface Stemming {
  beforeFolding: (word: string) => string;
  afterFolding: (word: string) => string;
}

const NO_STEMMING: Stemming = { beforeFolding: (w) => w, afterFolding: (w) => w };

/**
 * A text's words in order, separated by single spaces ('' when it has none): lower-cased,
 * compatibility-normalised ("ﬁ" → "fi"), accents folded in the scripts that have them
 * ("Café" → "cafe"), runs of Chinese, Japanese or Thai segmented into words, Korean particles
 * cut. A word is a run of letters, digits and private-use characters. ASCII text (most chunks)
 * skips the Unicode steps, which change nothing there.
 */
function analysedWords(text: string, stemming: Stemming, ascii: AsciiWordTable): string {
  if (!NON_ASCII.test(text)) return ascii.words(text.toLowerCase());
  // Runs of ASCII letters and digits mixed with any non-ASCII characters; only runs holding
  // non-ASCII characters are split again by Unicode category.
  return ascii.words(text.normalize('NFKC').toLowerCase(), (run, words) => {
    for (const [word] of run.matchAll(MARKED_WORD)) {
      if (SEGMENTED_SCRIPT.test(word)) segmentedWords(word, stemming, words);
      else unsegmentedWord(word, stemming, words);
    }
  });
}

function unsegmentedWord(word: string, stemming: Stemming, out: string[]): void {
  if (HANGUL.test(word)) {
    out.push(cut(withoutParticle(word)));
    return;
  }
  const stemmed = DIGIT.test(word) ? word : stemming.beforeFolding(word);
  if (!ACCENTED_SCRIPT.test(stemmed)) {
    for (const [piece] of stemmed.matchAll(MARKED_WORD)) out.push(cut(piece));
    return;
  }
  // Folding may leave a mark that stood alone, or split a word at a character it removes.
  for (const [piece] of stemmed.normalize('NFKD').replace(MARKS, '').matchAll(WORD))
    out.push(stemming.afterFolding(cut(piece)));
}

function segmentedWords(run: string, stemming: Stemming, out: string[]): void {
  for (let start = 0; start < run.length; start += MAX_SEGMENTED_RUN) {
    const part = run.length <= MAX_SEGMENTED_RUN ? run : run.slice(start, start + MAX_SEGMENTED_RUN);
    for (const { segment, isWordLike } of segmenter.segment(part)) {
      if (!isWordLike) continue;
      // A run may mix scripts ("iPhone手机"): the segments of other scripts are words as usual.
      if (SEGMENTED_SCRIPT.test(segment)) out.push(cut(segment));
      else unsegmentedWord(segment, stemming, out);
    }
  }
}

/** How a deployment turns text into the words it indexes and queries with, for one language. */
export interface Analyzer {
  /** An ISO 639-1 code, or `none`. */
  readonly language: string;
  /** The text's words in order, separated by single spaces ('' when it has none). */
  words(text: string): string;
  /** The distinct words of a query, in query order. */
  queryWords(text: string): string[];
}

/**
 * Stems remembered per thread and language: text repeats its words (Zipf), so most words are
 * looked up rather than stemmed again. Cleared when full, which bounds it without bookkeeping.
 */
const STEM_CACHE_SIZE = 50_000;

function cached(stem: (word: string) => string, stemmable: (word: string) => boolean) {
  const stems = new Map<string, string>();
  return (word: string): string => {
    if (!stemmable(word)) return word;
    let stemmed = stems.get(word);
    if (stemmed === undefined) {
      stemmed = stem(word);
      if (stems.size >= STEM_CACHE_SIZE) stems.clear();
      stems.set(word, stemmed);
    }
    return stemmed;
  };
}

function stemmingOf(language: string): Stemming {
  if (language === 'en') {
    return { beforeFolding: (w) => w, afterFolding: cached(porterStemmer, (w) => PORTER_STEMMABLE.test(w)) };
  }
  const snowball = SNOWBALL_STEMMERS[language];
  if (snowball === undefined) return NO_STEMMING;
  return {
    beforeFolding: cached(guardedStemmer(snowball), (w) => w.length >= 3 && !DIGIT.test(w)),
    afterFolding: (w) => w,
  };
}

function makeAnalyzer(language: string, words: (text: string) => string): Analyzer {
  return {
    language,
    words,
    queryWords: (text) => {
      const all = words(text);
      return all === '' ? [] : [...new Set(all.split(' '))];
    },
  };
}

const analyzers = new Map<string, Analyzer>();

/**
 * The analysis of one language (an ISO 639-1 code; `english` is `en`), or `none`. A language
 * without a stemmer is analysed as `none` is, under its own name.
 */
export function analyzer(language: string): Analyzer {
  const code = language === 'english' ? 'en' : language;
  let found = analyzers.get(code);
  if (!found) {
    const stemming = code === 'none' ? NO_STEMMING : stemmingOf(code);
    const { beforeFolding, afterFolding } = stemming;
    const ascii = new AsciiWordTable((word) => afterFolding(beforeFolding(cutAscii(word))));
    found = makeAnalyzer(code, (text) => analysedWords(text, stemming, ascii));
    analyzers.set(code, found);
  }
  return found;
}

/**
 * The language a document is analysed in, as its status shows it: the one given, else under
 * `auto` the one detected (English when the detector is unsure), else the deployment's
 * SEARCH_LANGUAGE; null under `none` (analysed without stemming).
 */
export function documentLanguage(
  given: string | null,
  detect: () => string | null,
  configured: SearchLanguage,
): string | null {
  if (given !== null) return given;
  if (configured === 'auto') return detect() ?? 'en';
  return fallbackLanguage(configured);
}

/** The language of a document that names none and whose text is not read: SEARCH_LANGUAGE's. */
export function fallbackLanguage(configured: SearchLanguage): string | null {
  if (configured === 'none') return null;
  if (configured === 'english' || configured === 'auto') return 'en';
  return configured;
}

/** The analysis of a document of this language (null: `none`). */
export function documentAnalyzer(language: string | null): Analyzer {
  return analyzer(language ?? 'none');
}

// The analyses of earlier releases, kept so queries find chunks an index has not yet rewritten.

/** Folding without segmentation: an earlier release's `none`, PostgreSQL's 'legacy' closest. */
function formerWords(text: string, stem: (word: string) => string): string {
  const words: string[] = [];
  if (!NON_ASCII.test(text)) {
    for (const word of text.toLowerCase().match(ASCII_WORD) ?? []) words.push(stem(cutAscii(word)));
    return words.join(' ');
  }
  const runs = text.normalize('NFKD').toLowerCase().match(CANDIDATE_RUN) ?? [];
  for (const run of runs) {
    if (!NON_ASCII.test(run)) words.push(stem(cutAscii(run)));
    else for (const [word] of run.replace(MARKS, '').matchAll(WORD)) words.push(stem(cut(word)));
  }
  return words.join(' ');
}

const porterAfterFolding = cached(porterStemmer, (w) => PORTER_STEMMABLE.test(w));
const FORMER: Record<string, Analyzer> = {
  none: makeAnalyzer('none', (text) => formerWords(text, (w) => w)),
  english: makeAnalyzer('en', (text) => formerWords(text, porterAfterFolding)),
};

/** The analysis an index written by an earlier release used, or null for this release's. */
export function formerAnalyzer(written: WrittenAnalysis): Analyzer | null {
  if (written === 'legacy') return FORMER.none!;
  return FORMER[written] ?? null;
}

/**
 * A query's words under several analyses at once, distinct, in query order: a query finds each
 * document in that document's own analysis, and, while an index is being rewritten from one
 * analysis to another, its chunks hold either form.
 */
export function queryWordsOf(text: string, analyzers: readonly Analyzer[]): string[] {
  const words = new Set<string>();
  for (const a of analyzers) for (const word of a.queryWords(text)) words.add(word);
  return [...words];
}

/**
 * The analyses a query is read with: those of the languages of the org's documents (and the one
 * the query names), and, until `docindex reindex` has rewritten every chunk of an index that an
 * earlier release wrote, that release's analysis too.
 */
export function queryAnalyzers(
  languages: readonly (string | null)[],
  written: WrittenAnalysis | null,
  configured: SearchLanguage,
): Analyzer[] {
  const chosen = new Set<Analyzer>();
  for (const language of languages) chosen.add(documentAnalyzer(language));
  if (chosen.size === 0) chosen.add(documentAnalyzer(fallbackLanguage(configured)));
  const former = written === null || written === ANALYSIS ? null : formerAnalyzer(written);
  if (former) chosen.add(former);
  return [...chosen];
}
