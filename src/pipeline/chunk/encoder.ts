// o200k_base encoding for the chunker: the same tokens as gpt-tokenizer's `encode`, found faster.
//
// `encode` splits the text into pieces with o200k's pre-tokenizer regex, then looks each piece up
// in the vocabulary (or byte-pair merges it). A piece's tokens depend only on the piece, and real
// text repeats a few tens of thousands of distinct pieces, so this module keeps each piece's
// tokens once found and asks the library only for pieces it has not seen. The split regex is
// Unicode-aware and costs as much as the rest of `encode`; for runs of ASCII text an ASCII-only
// twin of it, without the u flag, finds the same pieces about three times faster (see
// `nextPiece`). The library stays the authority: every piece not in the cache is encoded by it.
// bench/chunk.bench.ts measures this against the library; test/pipeline/encoder.test.ts checks
// both give the same tokens.
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
      const pieceTokens = encode(piece, PLAIN_TEXT);
      found = pieceTokens.length === 1 ? pieceTokens[0]! : pieceTokens;
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

function isAscii(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
}
