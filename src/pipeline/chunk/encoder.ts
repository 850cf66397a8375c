// o200k_base encoding for the chunker: the same tokens as gpt-tokenizer's `encode`, found faster.
//
// `encode` splits the text into pieces with o200k's pre-tokenizer regex, then looks each piece up
// in the vocabulary (or byte-pair merges it). A piece's tokens depend only on the piece, and real
// text repeats a few tens of thousands of distinct pieces, so this module keeps each piece's
// tokens once found and asks the library only for pieces it has not seen. The split regex is
// Unicode-aware and costs as much as the rest of `encode`; for runs of ASCII text an ASCII-only
// twin of it, without the u flag, finds the same pieces faster (see
// `nextPiece`). A piece not in the cache is encoded by the library, unless it is all ASCII: those
// (nearly all the distinct pieces of English text and Markdown) are byte-pair merged here,
// on the string, against the library's own vocabulary (see `mergeAscii`). For ASCII a character is
// a byte, so this is the library's algorithm without its UTF-8 encoding and decoding of every
// pair. What it saves, cold and warm, is measured against the library in bench/RESULTS.md
// (section 10, "Mechanisms"); test/pipeline/encoder.test.ts checks both give the same tokens.
import o200kPieces from 'gpt-tokenizer/bpeRanks/o200k_base';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { O200K_TOKEN_SPLIT_REGEX } from 'gpt-tokenizer/esm/encodingParams/constants';

/** Documents are data: special-token strings in them are plain text. */
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

/** Pieces kept at most; the cache starts over when full (real text needs a few tens of thousands). */
const CACHE_LIMIT = 200_000;
/** Longer pieces (rare: long numbers are cut at 3 digits, words are short) are not kept. */
const CACHE_MAX_PIECE = 32;

// o200k's split pattern, sticky: a piece is matched exactly where the previous one ended.
const UNICODE_PIECE = new RegExp(O200K_TOKEN_SPLIT_REGEX.source, 'uy');

// The same pattern for ASCII text: \p{L} becomes [A-Za-z], \p{N} [0-9]; upper-case-like classes
// (Lu Lt Lm Lo M) become [A-Z] and lower-case-like ones (Ll Lm Lo M) [a-z]: Lt, Lm, Lo and M have
// no ASCII members. Negated classes still match non-ASCII characters, which is why a match is only
// trusted when it and the character after it are ASCII.
const CONTRACTION = "(?:'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE]))?";
const ASCII_PIECE = new RegExp(
  [
    `[^\\r\\nA-Za-z0-9]?[A-Z]*[a-z]+${CONTRACTION}`,
    `[^\\r\\nA-Za-z0-9]?[A-Z]+[a-z]*${CONTRACTION}`,
    '[0-9]{1,3}',
    ' ?[^\\sA-Za-z0-9]+[\\r\\n/]*',
    '\\s*[\\r\\n]+',
    '\\s+(?!\\S)',
    '\\s+',
  ].join('|'),
  'y',
);

const cache = new Map<string, number | readonly number[]>();

/** The o200k_base tokens of `text`, special-token strings included as plain text. */
export function encodeText(text: string): number[] {
  const tokens: number[] = [];
  let position = 0;
  while (position < text.length) {
    const piece = nextPiece(text, position);
    position += piece.length;
    let found = cache.get(piece);
    if (found === undefined) {
      found = isAscii(piece, 0, piece.length) ? mergeAscii(piece) : fromLibrary(piece);
      if (piece.length <= CACHE_MAX_PIECE) {
        if (cache.size >= CACHE_LIMIT) cache.clear();
        cache.set(piece, found);
      }
    }
    if (typeof found === 'number') tokens.push(found);
    else for (const token of found) tokens.push(token);
  }
  return tokens;
}

/**
 * The pre-token starting at `position`. The ASCII pattern's match is the Unicode pattern's match
 * when every character it read is ASCII: both patterns classify ASCII characters alike, and each
 * alternative decides from the characters up to the one after the match (where a greedy run
 * stopped, or what the whitespace look-ahead saw). Otherwise the Unicode pattern decides.
 */
function nextPiece(text: string, position: number): string {
  ASCII_PIECE.lastIndex = position;
  const ascii = ASCII_PIECE.exec(text);
  if (ascii !== null) {
    const end = position + ascii[0].length;
    if (isAscii(text, position, Math.min(end + 1, text.length))) return ascii[0];
  }
  UNICODE_PIECE.lastIndex = position;
  const unicode = UNICODE_PIECE.exec(text);
  // The pattern matches at every position (its last alternatives take any other character).
  if (unicode === null) throw new Error(`o200k split pattern found no piece at offset ${position}`);
  return unicode[0];
}

function fromLibrary(piece: string): number | readonly number[] {
  const tokens = encode(piece, PLAIN_TEXT);
  return tokens.length === 1 ? tokens[0]! : tokens;
}

let asciiRanks: Map<string, number> | null = null;

/** Rank of every all-ASCII vocabulary entry (every ASCII character is one). */
function asciiVocabulary(): Map<string, number> {
  if (asciiRanks) return asciiRanks;
  const ranks = new Map<string, number>();
  for (let rank = 0; rank < o200kPieces.length; rank++) {
    const piece = o200kPieces[rank];
    if (typeof piece === 'string' && isAscii(piece, 0, piece.length)) ranks.set(piece, rank);
  }
  asciiRanks = ranks;
  return ranks;
}

/**
 * Byte-pair encoding of an all-ASCII pre-token, as gpt-tokenizer's `bytePairMerge` does it: the
 * piece is one token if the vocabulary holds it; otherwise, starting from single characters,
 * the adjacent pair whose joined string has the lowest rank is merged (the leftmost on a tie)
 * until no joined pair is in the vocabulary.
 */
function mergeAscii(piece: string): number | readonly number[] {
  const vocabulary = asciiVocabulary();
  const whole = vocabulary.get(piece);
  if (whole !== undefined) return whole;
  // starts[i]: where part i begins (the last entry is the piece's end); ranks[i]: rank of parts
  // i and i + 1 joined, Infinity when not a token or when part i is the last part.
  const starts: number[] = [];
  for (let i = 0; i <= piece.length; i++) starts.push(i);
  const pairRank = (i: number) =>
    i + 2 < starts.length ? (vocabulary.get(piece.slice(starts[i], starts[i + 2])) ?? Infinity) : Infinity;
  const ranks: number[] = [];
  for (let i = 0; i < piece.length; i++) ranks.push(pairRank(i));
  for (;;) {
    let lowest = Infinity;
    let at = -1;
    for (let i = 0; i < ranks.length; i++) {
      if (ranks[i]! < lowest) {
        lowest = ranks[i]!;
        at = i;
      }
    }
    if (at === -1) break;
    starts.splice(at + 1, 1);
    ranks.splice(at + 1, 1);
    ranks[at] = pairRank(at);
    if (at > 0) ranks[at - 1] = pairRank(at - 1);
  }
  // Several parts: one part would be the whole piece, found above. Every part is a single
  // character or a merged pair, so the vocabulary holds it.
  const tokens: number[] = [];
  for (let i = 0; i + 1 < starts.length; i++) {
    const rank = vocabulary.get(piece.slice(starts[i], starts[i + 1]));
    if (rank === undefined) throw new Error(`o200k has no token for ${JSON.stringify(piece)}'s part ${i}`);
    tokens.push(rank);
  }
  return tokens;
}

function isAscii(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
}
