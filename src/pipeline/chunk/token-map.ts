// The document's tokens and where each starts in the text: one encoding pass, then a table
// lookup per token for its UTF-16 length.
import o200kPieces from 'gpt-tokenizer/bpeRanks/o200k_base';
import { CR, LF, SPACE, TAB } from './boundaries.js';
import { encodeText } from './encoder.js';

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
export function encodeInRuns(text: string): { tokens: number[]; forced: number[] } {
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

export interface TokenOffsets {
  count: number;
  /** Token indices where a long run was split for encoding: token arithmetic across them is not exact. */
  forced: number[];
  /** offset[t]: UTF-16 offset where token t starts (of the character it starts in, if mid-character). */
  offset: Int32Array;
  /** aligned[t] = 1 when token t starts on a character boundary. */
  aligned: Uint8Array;
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

export function mapTokenOffsets(tokens: number[], textLength: number, forced: number[]): TokenOffsets {
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
