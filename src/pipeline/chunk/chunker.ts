// The chunk stage: splits a document's extracted text into token-bounded, overlapping chunks for
// indexing, with each chunk's exact o200k_base token count, UTF-16 offsets and page range.
//
// Why it is built this way:
// - The text is tokenized once, by encoder.ts (gpt-tokenizer's tokens, each distinct pre-token
//   encoded once per thread). Per-token UTF-16 lengths come from the encoder's own piece table,
//   so mapping tokens to offsets costs a table lookup per token instead of a second tokenizer
//   pass; chunking runs faster than a bare `encode` of the text.
// - Chunks are cut only where o200k's pre-tokenizer splits anyway (its regex never lets a piece
//   run across these points). Encoding a slice cut there yields exactly the document's tokens
//   for that range, so a chunk's token count is a subtraction, and it is the count a user gets by
//   encoding `chunk.text` on its own. The cut points ("boundaries") are:
//     - after the last line break of a whitespace run (unless a '/' follows: o200k glues "\n/"
//       onto preceding punctuation);
//     - before the last whitespace character of a run that is followed by a non-space (the space
//       belongs to the next word's token: "end. Next" is cut as "end." | " Next");
//     - between a letter and a following punctuation mark or symbol other than an apostrophe
//       (o200k keeps "don't" whole), which is what gives CJK text and long identifiers cut points.
// - Each chunk's end is the latest boundary of the best kind within the last 30% of its token
//   window: a markdown heading (when `markdown`), then a paragraph break (blank line), then the
//   start of a Markdown table row (a line starting with "|": every format writes its tables so,
//   and a row cut in two loses what its cells mean), then a sentence end or line end, then a word
//   boundary, then a letter/punctuation boundary. Only
//   when the window holds none is the chunk cut at the last token boundary that is also a
//   character boundary; such a slice is re-encoded to count it, and shortened if it came out
//   over chunkSize tokens (a cut inside a pre-token can change its BPE merges).
// - Overlap rule (snapped, not exact): the next chunk starts at the first boundary at or after
//   the token `chunkOverlap` tokens before the previous chunk's end. The shared text is
//   therefore at most `chunkOverlap` tokens and never starts mid-word. The next chunk starts
//   where the previous one ended when no boundary lies in that range (one giant "word"), or when
//   the previous chunk was cut inside such a word and no end past it would fit from the snapped
//   start.
// - Every chunk ends after the previous one and starts after the previous one's start, so the
//   chunks cover the text in order without gaps. The first starts at 0; the last ends at the end
//   of the text, or before trailing whitespace that a chunk of its own would hold alone.
// - Special-token strings such as `<|endoftext|>` are ordinary text here: documents are data,
//   never control sequences.
// - Offsets are UTF-16 code units (JS string indexes); a cut never falls inside a surrogate pair.
import o200kPieces from 'gpt-tokenizer/bpeRanks/o200k_base';
import type { ChunkRow } from '../../domain/types.js';
import { encodeText } from './encoder.js';

/** 1-based page number; UTF-16 offsets into the text; spans in order and non-overlapping. */
export interface PageSpan {
  page: number;
  charStart: number;
  charEnd: number;
}

export interface ChunkOptions {
  chunkSize: number;
  chunkOverlap: number;
  markdown?: boolean;
  pages?: PageSpan[] | null;
  /** The document's language as given at ingest (the analysis of its words; null: detect it). */
  language?: string | null;
}

export interface ChunkPlan {
  chunks: ChunkRow[];
  /** Tokens in the whole text. */
  tokenCount: number;
}

/** The largest number of tokens one character can take (a surrogate pair is four UTF-8 bytes). */
const MIN_CHUNK_SIZE = 4;

/** Share of the token window, from its start, before which a chunk end is not looked for. */
const PREFERRED_WINDOW_START = 0.7;

// Kinds of boundary, best first.
const HEADING = 0;
const PARAGRAPH = 1;
const TABLE_ROW = 2;
const SENTENCE = 3;
const WORD = 4;
const PUNCTUATION = 5;
const NOT_A_BOUNDARY = 6;

const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const TAB = 0x09;
const HASH = 0x23;
const SLASH = 0x2f;
const PIPE = 0x7c;
const APOSTROPHE = 0x27;

/** Throws RangeError unless chunkSize and chunkOverlap are usable (both chunkers check alike). */
function checkChunkOptions({ chunkSize, chunkOverlap }: ChunkOptions): void {
  if (!Number.isInteger(chunkSize) || chunkSize < MIN_CHUNK_SIZE) {
    throw new RangeError(`chunkSize must be an integer ≥ ${MIN_CHUNK_SIZE}, got ${chunkSize}`);
  }
  if (!Number.isInteger(chunkOverlap) || chunkOverlap < 0 || chunkOverlap >= chunkSize) {
    throw new RangeError(`chunkOverlap must be an integer in [0, chunkSize), got ${chunkOverlap}`);
  }
}

export function chunkText(text: string, opts: ChunkOptions): ChunkPlan {
  checkChunkOptions(opts);
  const { chunkSize, chunkOverlap } = opts;

  const { tokens, forced } = encodeInRuns(text);
  if (!/\S/.test(text)) return { chunks: [], tokenCount: tokens.length };

  const map = mapTokenOffsets(tokens, text.length, forced);
  const spans = planSpans({ text, map, chunkSize, chunkOverlap, markdown: opts.markdown === true });
  const pages = opts.pages ?? null;
  const chunks: ChunkRow[] = spans.map((span, index) => {
    const range = pages ? pageRange(pages, span.charStart, span.charEnd) : null;
    return {
      index,
      text: text.slice(span.charStart, span.charEnd),
      tokenCount: span.tokenCount,
      charStart: span.charStart,
      charEnd: span.charEnd,
      pageStart: range ? range[0] : null,
      pageEnd: range ? range[1] : null,
    };
  });
  return { chunks, tokenCount: tokens.length };
}

/**
 * Longest run of non-space characters encoded in one piece. The encoder merges a long pre-token
 * in O(n log n), but its working arrays and heap grow with the piece, so a hostile or odd
 * document (a megabyte of one letter, a huge minified line) is encoded in pieces of this size;
 * ordinary text has no such run and is encoded whole.
 */
const MAX_ENCODE_RUN = 10_000;

// A run longer than MAX_ENCODE_RUN covers a whole aligned block of half that length, so it is
// enough to look for a break in each block: ordinary text shows one within a few characters,
// and the common case then skips the per-character walk and the copy of the token array.
function mayHaveLongRun(text: string): boolean {
  const block = MAX_ENCODE_RUN / 2;
  for (let from = 0; from + block <= text.length; from += block) {
    let i = from;
    while (i < from + block && !isRunBreak(text.charCodeAt(i))) i++;
    if (i === from + block) return true;
  }
  return false;
}

function isRunBreak(code: number): boolean {
  return code === SPACE || code === LF || code === CR || code === TAB || code === 0x0b || code === 0x0c;
}

/** Token indices where a long run was split for encoding are returned in `forced`. */
function encodeInRuns(text: string): { tokens: number[]; forced: number[] } {
  if (!mayHaveLongRun(text)) return { tokens: encodeText(text), forced: [] };
  const tokens: number[] = [];
  const forced: number[] = [];
  let segmentStart = 0;
  let runStart = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === SPACE || code === LF || code === CR || code === TAB || code === 0x0b || code === 0x0c) {
      runStart = i + 1;
      continue;
    }
    // Split a long run, never between the two halves of a surrogate pair.
    if (i - runStart >= MAX_ENCODE_RUN && !(code >= 0xdc00 && code <= 0xdfff)) {
      for (const token of encodeText(text.slice(segmentStart, i))) tokens.push(token);
      forced.push(tokens.length);
      segmentStart = i;
      runStart = i;
    }
  }
  for (const token of encodeText(text.slice(segmentStart))) tokens.push(token);
  return { tokens, forced };
}

interface TokenOffsets {
  count: number;
  /** Token indices where a long run was split for encoding: token arithmetic across them is not exact. */
  forced: number[];
  /** offset[t]: UTF-16 offset where token t starts (of the character it starts in, if mid-character). */
  offset: Int32Array;
  /** aligned[t] = 1 when token t starts on a character boundary. */
  aligned: Uint8Array;
}

interface Span {
  charStart: number;
  charEnd: number;
  tokenCount: number;
}

/** Marks a piece stored as bytes in the table below. */
const BYTE_PIECE = 255;
let pieceUnits: Uint8Array | null = null;

// UTF-16 length of every vocabulary piece stored as a string (o200k's longest is 128); pieces
// stored as bytes (parts of a multi-byte character) are walked byte by byte. One byte per entry
// keeps the 200k-entry table small enough to stay in cache while mapping.
function pieceUnitTable(): Uint8Array {
  if (pieceUnits) return pieceUnits;
  const table = new Uint8Array(o200kPieces.length).fill(BYTE_PIECE);
  for (let rank = 0; rank < o200kPieces.length; rank++) {
    const piece = o200kPieces[rank];
    if (typeof piece !== 'string') continue;
    if (piece.length >= BYTE_PIECE) throw new Error(`o200k piece ${rank} is ${piece.length} code units long`);
    table[rank] = piece.length;
  }
  pieceUnits = table;
  return table;
}

function mapTokenOffsets(tokens: number[], textLength: number, forced: number[]): TokenOffsets {
  const units = pieceUnitTable();
  const count = tokens.length;
  const offset = new Int32Array(count + 1);
  // Most tokens end on a character boundary; only the byte-piece path below clears the flag.
  const aligned = new Uint8Array(count + 1).fill(1);
  let position = 0;
  // Continuation bytes still owed by the character in progress, and its UTF-16 length.
  let pending = 0;
  let pendingUnits = 0;
  for (let t = 0; t < count; t++) {
    const rank = tokens[t]!;
    const length = units[rank]!;
    if (length !== BYTE_PIECE && pending === 0) {
      position += length;
      offset[t + 1] = position;
      continue;
    }
    const bytes = o200kPieces[rank];
    if (typeof bytes === 'string' || bytes === undefined) {
      throw new Error(`token ${rank} continues a split character but is not a byte piece`);
    }
    for (const byte of bytes) {
      if (pending > 0) {
        pending--;
        if (pending === 0) position += pendingUnits;
      } else if (byte < 0x80) {
        position += 1;
      } else if (byte >= 0xf0) {
        pending = 3;
        pendingUnits = 2;
      } else if (byte >= 0xe0) {
        pending = 2;
        pendingUnits = 1;
      } else {
        pending = 1;
        pendingUnits = 1;
      }
    }
    offset[t + 1] = position;
    if (pending !== 0) aligned[t + 1] = 0;
  }
  if (position !== textLength || pending !== 0) {
    throw new Error(`token offsets end at ${position}, text has ${textLength} code units`);
  }
  return { count, forced, offset, aligned };
}

/** A position in the text, as a token index and a UTF-16 offset. */
interface Cursor {
  tok: number;
  char: number;
  /** On a boundary (or the text's start or end), so token arithmetic counts a slice exactly. */
  exact: boolean;
}

interface Plan {
  text: string;
  map: TokenOffsets;
  chunkSize: number;
  chunkOverlap: number;
  markdown: boolean;
}

function planSpans(plan: Plan): Span[] {
  const spans: Span[] = [];
  let state: PlanState = { start: { tok: 0, char: 0, exact: true }, previousEnd: null };
  for (;;) {
    const step = planOne(plan, state, true);
    spans.push(step.span);
    if (!step.next) break;
    state = step.next;
  }
  return spans;
}

/** Where the next chunk starts, and where the one before it ended (null before the first). */
interface PlanState {
  start: Cursor;
  previousEnd: Cursor | null;
}

/**
 * The chunk at `state.start`, and the state for the one after it (null after the last). `final`:
 * `plan.text` ends where the document does; otherwise more text follows it (see StreamChunker),
 * and the caller guarantees the window reaches far enough past `start` for every look here.
 */
function planOne(plan: Plan, state: PlanState, final: boolean): { span: Span; next: PlanState | null } {
  const { text, map, chunkOverlap, markdown } = plan;
  let { start } = state;
  const { previousEnd } = state;
  let fit = fitChunk(plan, start, previousEnd);
  if (!fit && previousEnd) {
    // After a cut inside a giant word, the overlap can leave no room to get past the previous
    // end: give up the overlap for this chunk.
    start = previousEnd;
    fit = fitChunk(plan, start, previousEnd);
  }
  if (!fit) throw new Error(`no chunk fits at offset ${start.char}`);
  const span = { charStart: start.char, charEnd: fit.end.char, tokenCount: fit.tokenCount };
  const end = fit.end;
  if (final && (end.char >= text.length || onlyWhitespaceFrom(text, end.char))) return { span, next: null };

  let next = end;
  for (let t = Math.max(end.tok - chunkOverlap, start.tok + 1); t < end.tok; t++) {
    if (map.aligned[t] === 0 || map.offset[t]! <= start.char) continue;
    if (boundaryKind(text, map.offset[t]!, markdown) <= PUNCTUATION) {
      next = { tok: t, char: map.offset[t]!, exact: true };
      break;
    }
  }
  return { span, next: { start: next, previousEnd: end } };
}

/**
 * The end of the chunk that starts at `start`, and its token count; null when no end after
 * `floor` (the previous chunk's end) fits in chunkSize tokens.
 */
function fitChunk(
  plan: Plan,
  start: Cursor,
  floor: Cursor | null,
): { end: Cursor; tokenCount: number } | null {
  const { text, map, chunkSize, markdown } = plan;
  const { count, offset, aligned } = map;
  const minTok = Math.max(start.tok, floor?.tok ?? 0);
  const minChar = Math.max(start.char, floor?.char ?? 0);
  const overlapsFloor = floor !== null && floor.char > start.char;
  const limit = start.tok + chunkSize;

  let end: Cursor;
  if (limit >= count) {
    end = { tok: count, char: text.length, exact: true };
  } else {
    const lowest = Math.max(start.tok + Math.floor(chunkSize * PREFERRED_WINDOW_START), minTok + 1);
    const best = markdown ? HEADING : PARAGRAPH;
    let cut = -1;
    let cutKind = NOT_A_BOUNDARY;
    // Walking down from the limit, the first boundary of each kind is the latest of that kind.
    for (let t = limit; t >= lowest; t--) {
      const at = offset[t]!;
      if (aligned[t] === 0 || at <= minChar) continue;
      // Once a sentence end is in hand only a line start can do better, and once a word
      // boundary is, only a line start or a space: skip the rest without classifying them.
      if (cutKind <= WORD) {
        const before = text.charCodeAt(at - 1);
        const lineStart = before === LF || before === CR;
        if (!lineStart && (cutKind < WORD || !isSpace(text.charCodeAt(at)))) continue;
      }
      const kind = boundaryKind(text, at, markdown);
      if (kind < cutKind) {
        cut = t;
        cutKind = kind;
        if (kind === best) break;
      }
    }
    if (cut >= 0) {
      end = { tok: cut, char: offset[cut]!, exact: true };
    } else {
      const t = characterBoundaryAtOrBefore(map, limit, minTok, minChar);
      if (t > minTok) end = { tok: t, char: offset[t]!, exact: false };
      else if (overlapsFloor) return null;
      else end = characterCut(plan, start);
    }
  }

  const exact = start.exact && end.exact && !map.forced.some((f) => f > start.tok && f < end.tok);
  let tokenCount = exact ? end.tok - start.tok : countTokens(text, start.char, end.char);
  while (tokenCount > chunkSize) {
    // Only reachable with a cut inside a pre-token, whose re-encoding took more tokens.
    const t = characterBoundaryAtOrBefore(map, end.tok - 1, minTok, minChar);
    if (t > minTok) {
      end = { tok: t, char: offset[t]!, exact: false };
      tokenCount = countTokens(text, start.char, end.char);
    } else if (overlapsFloor) {
      return null;
    } else {
      end = characterCut(plan, start);
      tokenCount = countTokens(text, start.char, end.char);
      break;
    }
  }
  return { end, tokenCount };
}

function countTokens(text: string, from: number, to: number): number {
  return encodeText(text.slice(from, to)).length;
}

// Latest token boundary t in (floor, from] that starts on a character boundary after
// `afterChar`, or `floor` when there is none.
function characterBoundaryAtOrBefore(
  map: TokenOffsets,
  from: number,
  floor: number,
  afterChar: number,
): number {
  for (let t = from; t > floor; t--) {
    if (map.aligned[t] === 1 && map.offset[t]! > afterChar) return t;
  }
  return floor;
}

// Last resort when no token boundary fits: a slice of chunkSize/3 UTF-16 units always fits, as
// a unit encodes to at most three UTF-8 bytes and a token holds at least one byte (a surrogate
// pair is four bytes for two units, hence the minimum chunk size of 4).
function characterCut(plan: Plan, start: Cursor): Cursor {
  const { text, map, chunkSize } = plan;
  let end = Math.min(text.length, start.char + Math.floor(chunkSize / 3));
  const last = text.charCodeAt(end - 1);
  if (end < text.length && last >= 0xd800 && last <= 0xdbff) end += end - 1 > start.char ? -1 : 1;
  return { tok: tokenAtOrBefore(map.offset, end, start.tok), char: end, exact: false };
}

function tokenAtOrBefore(offset: Int32Array, char: number, floor: number): number {
  let t = floor;
  while (t + 1 < offset.length && offset[t + 1]! <= char) t++;
  return t;
}

function onlyWhitespaceFrom(text: string, from: number): boolean {
  for (let i = from; i < text.length; i++) {
    if (!isSpace(text.charCodeAt(i))) return false;
  }
  return true;
}

/** What kind of boundary offset `at` (0 < at < text.length) is, or NOT_A_BOUNDARY. */
function boundaryKind(text: string, at: number, markdown: boolean): number {
  const before = text.charCodeAt(at - 1);
  const here = text.charCodeAt(at);
  if (before === LF || before === CR) {
    if (here === LF || here === CR || here === SLASH) return NOT_A_BOUNDARY;
    let i = at;
    for (; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === LF || c === CR) return NOT_A_BOUNDARY;
      if (!isSpace(c)) break;
    }
    if (markdown && isAtxHeading(text, at)) return HEADING;
    let breaks = 0;
    for (let j = at - 1; j >= 0 && breaks < 2; j--) {
      const c = text.charCodeAt(j);
      if (c === LF || (c === CR && text.charCodeAt(j + 1) !== LF)) breaks++;
      else if (!isSpace(c) && c !== CR) break;
    }
    if (breaks >= 2) return PARAGRAPH;
    return text.charCodeAt(i) === PIPE ? TABLE_ROW : SENTENCE;
  }
  if (isSpace(here)) {
    if (here === LF || here === CR || at + 1 >= text.length || isSpace(text.charCodeAt(at + 1))) {
      return NOT_A_BOUNDARY;
    }
    return endsSentence(text, at) ? SENTENCE : WORD;
  }
  if (here === APOSTROPHE || isLetterMarkOrNumber(text, at)) return NOT_A_BOUNDARY;
  return isLetterBefore(text, at) ? PUNCTUATION : NOT_A_BOUNDARY;
}

// A sentence ends with . ! ? or … possibly followed by closing quotes, brackets or emphasis.
function endsSentence(text: string, at: number): boolean {
  let j = at - 1;
  while (j > at - 4 && j > 0 && isCloser(text.charCodeAt(j))) j--;
  const c = text.charCodeAt(j);
  return c === 0x2e || c === 0x21 || c === 0x3f || c === 0x2026 || c === 0x3002;
}

function isCloser(c: number): boolean {
  return (
    c === 0x22 ||
    c === 0x27 ||
    c === 0x29 ||
    c === 0x5d ||
    c === 0x2a ||
    c === 0x5f ||
    c === 0x2019 ||
    c === 0x201d ||
    c === 0xbb
  );
}

// ATX heading: up to three spaces, 1–6 '#', then a space, a tab or the end of the line.
function isAtxHeading(text: string, lineStart: number): boolean {
  let i = lineStart;
  while (i < lineStart + 3 && text.charCodeAt(i) === SPACE) i++;
  let hashes = 0;
  while (text.charCodeAt(i) === HASH) {
    hashes++;
    i++;
  }
  if (hashes < 1 || hashes > 6) return false;
  const c = text.charCodeAt(i);
  return i >= text.length || c === SPACE || c === TAB || c === LF || c === CR;
}

/** Same set as JavaScript's `\s`, which is what o200k's pre-tokenizer regex uses. */
function isSpace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  if (c < 0xa0) return false;
  return (
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

const LETTER_MARK_OR_NUMBER = /[\p{L}\p{M}\p{N}]/uy;
const LETTER = /\p{L}/uy;

function isLetterMarkOrNumber(text: string, at: number): boolean {
  const c = text.charCodeAt(at);
  if (c < 0x80) return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39);
  LETTER_MARK_OR_NUMBER.lastIndex = at;
  return LETTER_MARK_OR_NUMBER.test(text);
}

function isLetterBefore(text: string, at: number): boolean {
  const c = text.charCodeAt(at - 1);
  if (c < 0x80) return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a);
  // A letter outside the BMP ends in a low surrogate; test the whole code point.
  const start = c >= 0xdc00 && c <= 0xdfff && at >= 2 ? at - 2 : at - 1;
  LETTER.lastIndex = start;
  return LETTER.test(text) && LETTER.lastIndex === at;
}

/** First and last page whose span intersects [charStart, charEnd), or null when none does. */
function pageRange(pages: PageSpan[], charStart: number, charEnd: number): [number, number] | null {
  // First span ending after charStart.
  let lo = 0;
  let hi = pages.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (pages[mid]!.charEnd > charStart) hi = mid;
    else lo = mid + 1;
  }
  let first = lo;
  while (first < pages.length && pages[first]!.charStart === pages[first]!.charEnd) first++;
  const firstPage = pages[first];
  if (!firstPage || firstPage.charStart >= charEnd) return null;
  // Last span starting before charEnd.
  lo = first;
  hi = pages.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (pages[mid]!.charStart < charEnd) lo = mid + 1;
    else hi = mid;
  }
  let last = lo - 1;
  while (last > first && pages[last]!.charStart === pages[last]!.charEnd) last--;
  return [firstPage.page, pages[last]!.page];
}

/** One chunk as the streaming chunker gives it: chunkText's row, without its index. */
export type ChunkPiece = Omit<ChunkRow, 'index' | 'words'>;

/** Characters of new text a window takes at a time (a few MB of working memory per window). */
const WINDOW_CHARS = 1 << 20;

/**
 * chunkText over a text that arrives in pieces (a file decoded as it is read), holding only a
 * window of it: about WINDOW_CHARS characters of text and their token offsets, never the whole
 * text, its token array or all its chunks. The chunks are exactly chunkText's on the joined text
 * (test/pipeline/chunk-stream.test.ts compares them).
 *
 * Why the result is the same: text enters a window only up to a cut where o200k's pre-tokenizer
 * splits whatever surrounds it (after a line break followed by a non-space other than '/', or
 * before a lone space between two non-spaces), so encoding the text a segment at a time gives
 * the document's tokens. A chunk is only planned while the window holds 2 × chunkSize + 64 more
 * tokens past its start (or the whole rest of the text), which covers every token and character
 * planOne looks at ahead; behind, the window keeps the text from a few characters before the last
 * non-space ahead of the chunk's start, where every backward look stops.
 */
export class StreamChunker {
  private readonly chunkSize: number;
  private readonly chunkOverlap: number;
  private readonly markdown: boolean;
  private readonly pages: PageSpan[] | null;
  private readonly windowChars: number;
  private readonly lookahead: number;
  /** Text not yet in the window, in arrival order, and its length. */
  private pending: string[] = [];
  private pendingLength = 0;
  /** No cut before this length of pending text (doubling, so a text without any stays linear). */
  private nextCutAttempt: number;
  private ended = false;
  /** The window: text from global offset `base`; its tokens' offsets from global token `tokBase`. */
  private text = '';
  private base = 0;
  private tokBase = 0;
  private map: TokenOffsets = {
    count: 0,
    forced: [],
    offset: new Int32Array(1),
    aligned: new Uint8Array(1).fill(1),
  };
  /** The window reaches the end of the text. */
  private complete = false;
  private state: PlanState = { start: { tok: 0, char: 0, exact: true }, previousEnd: null };
  private done = false;
  private sawText = false;
  private tokens = 0;

  constructor(opts: ChunkOptions, internal: { windowChars?: number } = {}) {
    checkChunkOptions(opts);
    const { chunkSize, chunkOverlap } = opts;
    this.chunkSize = chunkSize;
    this.chunkOverlap = chunkOverlap;
    this.markdown = opts.markdown === true;
    this.pages = opts.pages ?? null;
    this.windowChars = internal.windowChars ?? WINDOW_CHARS;
    this.nextCutAttempt = this.windowChars;
    this.lookahead = 2 * chunkSize + 64;
  }

  /** Tokens in the whole text; known once `end()`'s chunks have all been read. */
  get tokenCount(): number {
    return this.tokens;
  }

  /**
   * Adds the next piece of text; yields the chunks it completes. `onSegment` sees the text in
   * order, once, in pieces that never split a surrogate pair (what a hash of the text needs).
   */
  *push(piece: string, onSegment?: (segment: string) => void): Generator<ChunkPiece> {
    if (this.ended) throw new Error('the text has ended');
    if (piece === '') return;
    if (!this.sawText && /\S/.test(piece)) this.sawText = true;
    this.pending.push(piece);
    this.pendingLength += piece.length;
    yield* this.drain(onSegment);
  }

  /** The text is complete: yields the remaining chunks. */
  *end(onSegment?: (segment: string) => void): Generator<ChunkPiece> {
    if (this.ended) return;
    this.ended = true;
    yield* this.drain(onSegment);
  }

  private *drain(onSegment?: (segment: string) => void): Generator<ChunkPiece> {
    while (!this.done) {
      while (!this.complete && this.map.count - this.state.start.tok < this.lookahead) {
        const segment = this.nextSegment();
        if (segment === null) return;
        onSegment?.(segment.text);
        this.append(segment.text, segment.last);
      }
      if (this.complete && !this.sawText) {
        // chunkText: a text of nothing but whitespace has no chunks.
        this.done = true;
        return;
      }
      const plan: Plan = {
        text: this.text,
        map: this.map,
        chunkSize: this.chunkSize,
        chunkOverlap: this.chunkOverlap,
        markdown: this.markdown,
      };
      const step = planOne(plan, this.state, this.complete);
      const charStart = step.span.charStart + this.base;
      const charEnd = step.span.charEnd + this.base;
      const range = this.pages ? pageRange(this.pages, charStart, charEnd) : null;
      yield {
        text: this.text.slice(step.span.charStart, step.span.charEnd),
        tokenCount: step.span.tokenCount,
        charStart,
        charEnd,
        pageStart: range ? range[0] : null,
        pageEnd: range ? range[1] : null,
      };
      if (step.next) this.state = step.next;
      else this.done = true;
    }
  }

  /**
   * The next segment of pending text, cut where the pre-tokenizer splits anyway; the rest of the
   * text once it has ended; null while more must arrive first.
   */
  private nextSegment(): { text: string; last: boolean } | null {
    if (this.pendingLength < this.nextCutAttempt && !this.ended) return null;
    const joined = this.pending.length === 1 ? this.pending[0]! : this.pending.join('');
    this.pending = joined === '' ? [] : [joined];
    const cut = joined.length > this.windowChars || !this.ended ? findCut(joined, this.windowChars) : -1;
    if (cut === -1) {
      if (!this.ended) {
        // No cut anywhere yet (one giant "word"): wait for twice as much before looking again.
        this.nextCutAttempt = Math.max(this.windowChars, joined.length * 2);
        return null;
      }
      this.pending = [];
      this.pendingLength = 0;
      return { text: joined, last: true };
    }
    const rest = joined.slice(cut);
    this.pending = [rest];
    this.pendingLength = rest.length;
    this.nextCutAttempt = this.windowChars;
    return { text: joined.slice(0, cut), last: false };
  }

  /**
   * Moves the window: drops what lies before the next chunk's reach, then appends `segment`'s
   * text and token offsets.
   */
  private append(segment: string, last: boolean): void {
    const { start, previousEnd } = this.state;
    const old = this.map;
    // Keep from a few characters before the last non-space ahead of the start: every backward
    // look (a paragraph break's blank lines, a sentence end's closing quotes) stops there.
    let j = start.char - 1;
    while (j >= 0 && isSpace(this.text.charCodeAt(j))) j--;
    const keepChar = j < 0 ? 0 : Math.max(0, Math.min(j - 4, old.offset[start.tok]!));
    const keepTok = start.tok;

    const { tokens, forced } = encodeInRuns(segment);
    this.tokens += tokens.length;
    const added = mapTokenOffsets(tokens, segment.length, forced);
    const keptTokens = old.count - keepTok;
    const keptText = this.text.length - keepChar;
    const count = keptTokens + added.count;
    const offset = new Int32Array(count + 1);
    const aligned = new Uint8Array(count + 1);
    for (let t = 0; t <= keptTokens; t++) {
      offset[t] = old.offset[keepTok + t]! - keepChar;
      aligned[t] = old.aligned[keepTok + t]!;
    }
    for (let t = 1; t <= added.count; t++) {
      offset[keptTokens + t] = added.offset[t]! + keptText;
      aligned[keptTokens + t] = added.aligned[t]!;
    }
    this.map = {
      count,
      forced: [
        ...old.forced.filter((f) => f >= keepTok).map((f) => f - keepTok),
        ...added.forced.map((f) => f + keptTokens),
      ],
      offset,
      aligned,
    };
    this.text = this.text.slice(keepChar) + segment;
    this.base += keepChar;
    this.tokBase += keepTok;
    const shift = (c: Cursor): Cursor => ({ tok: c.tok - keepTok, char: c.char - keepChar, exact: c.exact });
    this.state = { start: shift(start), previousEnd: previousEnd ? shift(previousEnd) : null };
    if (last) this.complete = true;
  }
}

/**
 * Where to end a segment of `text`: the last cut at or before `target` (past its first half), or
 * failing that the first one after it; -1 when there is none. A cut is a position where o200k's
 * pre-tokenizer splits whatever the text around it: after a line feed followed by a non-space
 * other than '/' (no pre-token runs across it: "\n/" is glued to punctuation, whitespace runs
 * end before a non-space), or at a single space between two non-spaces (the space starts the
 * next pre-token, and nothing before it can take it). At either, the character ahead of the cut
 * is no space, so a look ahead over spaces from inside the segment stops within it.
 */
function findCut(text: string, target: number): number {
  const isCut = (p: number) => {
    const here = text.charCodeAt(p);
    const before = text.charCodeAt(p - 1);
    if (before === LF) return here !== SLASH && !isSpace(here);
    return here === SPACE && !isSpace(before) && p + 1 < text.length && !isSpace(text.charCodeAt(p + 1));
  };
  const from = Math.min(target, text.length - 1);
  const floor = Math.max(1, Math.floor(target / 2));
  // A line break first: chunk ends prefer them, and a window ending on one keeps no partial line.
  for (let p = from; p >= floor; p--) if (text.charCodeAt(p - 1) === LF && isCut(p)) return p;
  for (let p = from; p >= floor; p--) if (isCut(p)) return p;
  for (let p = Math.max(from + 1, 1); p < text.length; p++) if (isCut(p)) return p;
  return -1;
}
