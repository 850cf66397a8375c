// o200k_base encoding for the chunker: the same tokens as gpt-tokenizer's `encode`, found faster.
//
// `encode` splits the text into pieces with o200k's pre-tokenizer regex, then looks each piece up
// in the vocabulary (or byte-pair merges it). A piece's tokens depend only on the piece, and real
// text repeats a few tens of thousands of distinct pieces, so this module keeps each piece's
// tokens once found and asks the library only for pieces it has not seen. The split regex is
// Unicode-aware and costs as much as the rest of `encode`; for runs of ASCII text an ASCII-only
// twin of it, without the u flag, finds the same pieces faster (see
// `nextPiece`). A piece longer than 64 units, ASCII or not, is merged here in O(n log n) (see
// `mergeLong`): the library's merge, like any plain one, is quadratic in a piece's length, and a
// run of letters without spaces is one piece however long. A shorter piece not in the cache is
// encoded by the library, unless it is all ASCII: those
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
      found = encodePiece(piece);
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

/**
 * Pieces longer than this are merged with a priority queue (`mergeLong`): the plain merge loops
 * below rescan every pair after each merge, which is quadratic in the piece's length, and the
 * pre-tokenizer makes one piece of any run of letters (a line of 'x', CJK text without spaces) or
 * of punctuation, however long. Short pieces, nearly all of real text, keep the plain loops,
 * which are faster at that size.
 */
const LONG_PIECE = 64;

function encodePiece(piece: string): number | readonly number[] {
  const ascii = isAscii(piece, 0, piece.length);
  if (piece.length <= LONG_PIECE) return ascii ? mergeAscii(piece) : fromLibrary(piece);
  // ASCII is its own UTF-8: its units are already bytes.
  const bytes = ascii ? piece : Buffer.from(piece, 'utf8').toString('latin1');
  const whole = byteRank(vocabulary(), bytes, 0, bytes.length);
  return whole >= 0 ? whole : mergeLong(bytes);
}

function fromLibrary(piece: string): number | readonly number[] {
  const tokens = encode(piece, PLAIN_TEXT);
  return tokens.length === 1 ? tokens[0]! : tokens;
}

/**
 * The vocabulary keyed by UTF-8 bytes (as latin1 strings, a byte a unit), for both merges: an
 * ASCII string is its own key. Entries of up to SHORT_ENTRY bytes, the ones nearly every lookup
 * of a merge asks for, sit in an open-addressing table keyed by their bytes as one number, so no
 * string is built or hashed for them.
 */
interface ByteVocabulary {
  long: Map<string, number>;
  shortKeys: Float64Array;
  shortRanks: Int32Array;
  mask: number;
}

const SHORT_ENTRY = 6;
let byteRanks: ByteVocabulary | null = null;

/** The bytes from..to (at most SHORT_ENTRY of them) as one number, a leading 1 giving the length. */
function shortKey(bytes: string, from: number, to: number): number {
  let key = 1;
  for (let i = from; i < to; i++) key = key * 256 + bytes.charCodeAt(i);
  return key;
}

function slot(key: number, mask: number): number {
  const low = key % 0x1000000;
  const high = (key - low) / 0x1000000;
  return (Math.imul(low ^ Math.imul(high, 0x27d4eb2d), 0x9e3779b1) >>> 8) & mask;
}

/** Room for the UTF-8 of any vocabulary entry (at most 3 bytes per UTF-16 unit). */
const entryBuffer = Buffer.allocUnsafe(1024);

/** A vocabulary entry's UTF-8 as a latin1 string; most entries are ASCII and already are. */
function entryBytes(piece: string | readonly number[]): string {
  if (typeof piece !== 'string') return Buffer.from(piece).toString('latin1');
  if (isAscii(piece, 0, piece.length)) return piece;
  if (piece.length * 3 > entryBuffer.length) return Buffer.from(piece, 'utf8').toString('latin1');
  const length = entryBuffer.write(piece, 0, 'utf8');
  return entryBuffer.toString('latin1', 0, length);
}

function vocabulary(): ByteVocabulary {
  if (byteRanks) return byteRanks;
  const long = new Map<string, number>();
  const size = 1 << 19;
  const built = {
    long,
    shortKeys: new Float64Array(size),
    shortRanks: new Int32Array(size).fill(-1),
    mask: size - 1,
  };
  for (let rank = 0; rank < o200kPieces.length; rank++) {
    const piece = o200kPieces[rank];
    if (piece === undefined) continue;
    const bytes = entryBytes(piece);
    if (bytes.length > SHORT_ENTRY) {
      long.set(bytes, rank);
      continue;
    }
    const key = shortKey(bytes, 0, bytes.length);
    let at = slot(key, built.mask);
    while (built.shortRanks[at] !== -1) at = (at + 1) & built.mask;
    built.shortKeys[at] = key;
    built.shortRanks[at] = rank;
  }
  byteRanks = built;
  return built;
}

/** Rank of the bytes from..to of `bytes` as one token, -1 when the vocabulary has none. */
function byteRank(vocabulary: ByteVocabulary, bytes: string, from: number, to: number): number {
  if (to - from > SHORT_ENTRY) return vocabulary.long.get(bytes.slice(from, to)) ?? -1;
  const key = shortKey(bytes, from, to);
  const { shortKeys, shortRanks, mask } = vocabulary;
  for (let at = slot(key, mask); shortRanks[at] !== -1; at = (at + 1) & mask) {
    if (shortKeys[at] === key) return shortRanks[at]!;
  }
  return -1;
}

/**
 * The same byte-pair merge as `mergeAscii` (lowest rank first, leftmost on a tie), in
 * O(n log n): parts are a linked list of start offsets and candidate pairs wait in a min-heap
 * keyed by (rank, left part's start). A popped pair is merged only if the two parts now at
 * that start still join to a token of that rank; a merge pushes the two pairs it creates, so
 * every current pair is in the heap and the first valid pop is the loop's choice. `piece` holds
 * one unit per byte (ASCII text as it is, anything else as latin1 of its UTF-8 bytes), as the
 * keys of `vocabulary()` are.
 */
function mergeLong(piece: string): number[] {
  const ranks = vocabulary();
  const n = piece.length;
  // next[i]: start of the part after the part starting at i (n for the last); prev likewise,
  // -2 once the part at i has been merged into the one before it. pairRank[i]: rank of the
  // current pair at i (-1: not a token), which a heap entry must still show to be valid.
  const next = new Int32Array(n + 1);
  const prev = new Int32Array(n + 1);
  const pairRank = new Int32Array(n + 1).fill(-1);
  for (let i = 0; i <= n; i++) {
    next[i] = i + 1;
    prev[i] = i - 1;
  }
  const stride = n + 1;
  const heap = new MinHeap();
  const offer = (left: number) => {
    const right = next[left]!;
    const rank = right >= n ? -1 : byteRank(ranks, piece, left, next[right]!);
    pairRank[left] = rank;
    if (rank >= 0) heap.push(rank * stride + left);
  };
  for (let i = 0; i + 1 < n; i++) offer(i);
  for (;;) {
    const key = heap.pop();
    if (key === undefined) break;
    const left = key % stride;
    // A stale entry: the part at `left` was merged away or its pair has changed since.
    if (prev[left] === -2 || pairRank[left] !== (key - left) / stride) continue;
    const right = next[left]!;
    const after = next[right]!;
    next[left] = after;
    if (after <= n) prev[after] = left;
    prev[right] = -2;
    offer(left);
    if (left > 0) offer(prev[left]!);
  }
  const tokens: number[] = [];
  for (let i = 0; i < n; i = next[i]!) {
    const rank = byteRank(ranks, piece, i, next[i]!);
    if (rank < 0) throw new Error(`o200k has no token for part ${i} of a ${n}-unit piece`);
    tokens.push(rank);
  }
  return tokens;
}

/** A binary min-heap of non-negative integers (exact in a double: rank × length + offset). */
class MinHeap {
  private readonly items: number[] = [];

  push(value: number): void {
    const items = this.items;
    let i = items.length;
    items.push(value);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (items[parent]! <= value) break;
      items[i] = items[parent]!;
      i = parent;
    }
    items[i] = value;
  }

  pop(): number | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (top === undefined || last === undefined || items.length === 0) return top;
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= items.length) break;
      if (child + 1 < items.length && items[child + 1]! < items[child]!) child++;
      if (items[child]! >= last) break;
      items[i] = items[child]!;
      i = child;
    }
    items[i] = last;
    return top;
  }
}

/**
 * Byte-pair encoding of an all-ASCII pre-token, as gpt-tokenizer's `bytePairMerge` does it: the
 * piece is one token if the vocabulary holds it; otherwise, starting from single characters,
 * the adjacent pair whose joined string has the lowest rank is merged (the leftmost on a tie)
 * until no joined pair is in the vocabulary.
 */
function mergeAscii(piece: string): number | readonly number[] {
  const ranks = vocabulary();
  const whole = byteRank(ranks, piece, 0, piece.length);
  if (whole >= 0) return whole;
  // starts[i]: where part i begins (the last entry is the piece's end); pairs[i]: rank of parts
  // i and i + 1 joined, Infinity when not a token or when part i is the last part.
  const starts: number[] = [];
  for (let i = 0; i <= piece.length; i++) starts.push(i);
  const pairRank = (i: number) => {
    if (i + 2 >= starts.length) return Infinity;
    const rank = byteRank(ranks, piece, starts[i]!, starts[i + 2]!);
    return rank >= 0 ? rank : Infinity;
  };
  const pairs: number[] = [];
  for (let i = 0; i < piece.length; i++) pairs.push(pairRank(i));
  for (;;) {
    let lowest = Infinity;
    let at = -1;
    for (let i = 0; i < pairs.length; i++) {
      if (pairs[i]! < lowest) {
        lowest = pairs[i]!;
        at = i;
      }
    }
    if (at === -1) break;
    starts.splice(at + 1, 1);
    pairs.splice(at + 1, 1);
    pairs[at] = pairRank(at);
    if (at > 0) pairs[at - 1] = pairRank(at - 1);
  }
  // Several parts: one part would be the whole piece, found above. Every part is a single
  // character or a merged pair, so the vocabulary holds it.
  const tokens: number[] = [];
  for (let i = 0; i + 1 < starts.length; i++) {
    const rank = byteRank(ranks, piece, starts[i]!, starts[i + 1]!);
    if (rank < 0) throw new Error(`o200k has no token for ${JSON.stringify(piece)}'s part ${i}`);
    tokens.push(rank);
  }
  return tokens;
}

function isAscii(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
}
