// A chunk's words (domain/search-words.ts) as a tsvector literal, so PostgreSQL indexes exactly
// the words the embedded index does: PostgreSQL's own parser never sees the text, and
// to_tsvector's dictionaries play no part.
import type { BinaryArray } from './binary-array.js';

/** tsvector positions run from 1 to 16383; PostgreSQL keeps at most 256 of each lexeme. */
const MAX_POSITION = 16_383;
const MAX_POSITIONS_PER_LEXEME = 256;

/** Quoted as tsvector input wants a lexeme: a quote doubled, a backslash escaped. */
export function quoteLexeme(word: string): string {
  return `'${word.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
}

/** The word of a literal quoteLexeme made. */
export function unquoteLexeme(literal: string): string {
  return literal.slice(1, -1).replaceAll("''", "'").replace(/\\(.)/g, '$1');
}

// The lexemes of the words being written, in scratch space that every call reuses (each runs to
// its end synchronously): an open-addressing table of lexeme numbers + 1 by hash; per lexeme (in
// order of first occurrence) where it first occurs in the words, its hash, its table slot, its
// first and last position record and how many positions it keeps; per position record the
// position and the lexeme's next record. So a chunk's words allocate nothing (beyond the odd
// growth of this space), where a string per word and an array, a map entry and strings per lexeme
// were most of the write path's garbage (see binary-array.ts).
let table = new Int32Array(1024);
let lexemeStart = new Int32Array(256);
let lexemeEnd = new Int32Array(256);
let lexemeHash = new Int32Array(256);
let lexemeSlot = new Int32Array(256);
let firstRecord = new Int32Array(256);
let lastRecord = new Int32Array(256);
let kept = new Int32Array(256);
let positions = new Int32Array(1024);
let nextRecord = new Int32Array(1024);
let lexemes = 0;

/**
 * Appends the tsvector literal of space-separated words (`'word':1,4 'other':2 …`, empty for no
 * words) to `plain` (unless null: only the terms are wanted), and the same with `prefix` before
 * each word to `prefixed`, as an element of each, from one pass over the words.
 */
export function writeTsvectorLiterals(
  words: string,
  prefix: string,
  plain: BinaryArray | null,
  prefixed: BinaryArray,
): void {
  countLexemes(words);
  if (plain) writeLiteral(words, '', plain);
  writeLiteral(words, prefix, prefixed);
}

function countLexemes(words: string): void {
  for (let lexeme = 0; lexeme < lexemes; lexeme++) table[lexemeSlot[lexeme]!] = 0;
  lexemes = 0;
  if (words === '') return;
  let records = 0;
  let position = 0;
  for (let start = 0; start <= words.length; ) {
    let end = words.indexOf(' ', start);
    if (end === -1) end = words.length;
    position = Math.min(position + 1, MAX_POSITION);
    const lexeme = lexemeOf(words, start, end);
    start = end + 1;
    if (kept[lexeme] === 0) {
      firstRecord[lexeme] = records;
    } else if (kept[lexeme] === MAX_POSITIONS_PER_LEXEME || positions[lastRecord[lexeme]!] === position) {
      continue;
    } else {
      nextRecord[lastRecord[lexeme]!] = records;
    }
    if (records === positions.length) {
      positions = grown(positions);
      nextRecord = grown(nextRecord);
    }
    positions[records] = position;
    nextRecord[records] = -1;
    lastRecord[lexeme] = records;
    kept[lexeme]!++;
    records++;
  }
}

/** The number of the lexeme words[start, end), a new one (keeping no positions yet) when first seen. */
function lexemeOf(words: string, start: number, end: number): number {
  let hash = 0x811c9dc5 | 0; // FNV-1a, as an int32 (lexemeHash holds them)
  for (let i = start; i < end; i++) hash = Math.imul(hash ^ words.charCodeAt(i), 0x01000193);
  const mask = table.length - 1;
  for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
    const found = table[slot]! - 1;
    if (found === -1) return addLexeme(start, end, hash, slot);
    if (lexemeHash[found] === hash && sameWord(words, lexemeStart[found]!, lexemeEnd[found]!, start, end)) {
      return found;
    }
  }
}

function sameWord(words: string, aStart: number, aEnd: number, bStart: number, bEnd: number): boolean {
  if (aEnd - aStart !== bEnd - bStart) return false;
  for (let i = 0; i < aEnd - aStart; i++) {
    if (words.charCodeAt(aStart + i) !== words.charCodeAt(bStart + i)) return false;
  }
  return true;
}

function addLexeme(start: number, end: number, hash: number, slot: number): number {
  const lexeme = lexemes++;
  if (lexeme === lexemeStart.length) {
    lexemeStart = grown(lexemeStart);
    lexemeEnd = grown(lexemeEnd);
    lexemeHash = grown(lexemeHash);
    lexemeSlot = grown(lexemeSlot);
    firstRecord = grown(firstRecord);
    lastRecord = grown(lastRecord);
    kept = grown(kept);
  }
  lexemeStart[lexeme] = start;
  lexemeEnd[lexeme] = end;
  lexemeHash[lexeme] = hash;
  lexemeSlot[lexeme] = slot;
  kept[lexeme] = 0;
  table[slot] = lexeme + 1;
  // At most half full, so that probes stay short.
  if (lexemes * 2 > table.length) rehash();
  return lexeme;
}

function rehash(): void {
  table = new Int32Array(table.length * 2);
  const mask = table.length - 1;
  for (let lexeme = 0; lexeme < lexemes; lexeme++) {
    let slot = lexemeHash[lexeme]! & mask;
    while (table[slot] !== 0) slot = (slot + 1) & mask;
    table[slot] = lexeme + 1;
    lexemeSlot[lexeme] = slot;
  }
}

function grown(array: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> {
  const larger = new Int32Array(array.length * 2);
  larger.set(array);
  return larger;
}

/** The counted lexemes of `words`, each with `prefix` before it, as an element of `out`. */
function writeLiteral(words: string, prefix: string, out: BinaryArray): void {
  out.begin();
  for (let lexeme = 0; lexeme < lexemes; lexeme++) {
    const start = lexemeStart[lexeme]!;
    const end = lexemeEnd[lexeme]!;
    // Quoted, a character takes at most 3 bytes of UTF-8; a position, at most 5 digits and a comma.
    out.reserve(4 + 3 * (prefix.length + end - start) + 6 * kept[lexeme]!);
    const bytes = out.bytes;
    let at = out.length;
    if (lexeme > 0) bytes[at++] = 0x20; // ' '
    bytes[at++] = 0x27; // "'"
    at = writeQuoted(prefix, 0, prefix.length, bytes, at);
    at = writeQuoted(words, start, end, bytes, at);
    bytes[at++] = 0x27;
    bytes[at++] = 0x3a; // ':'
    for (let record = firstRecord[lexeme]!; record !== -1; record = nextRecord[record]!) {
      if (record !== firstRecord[lexeme]) bytes[at++] = 0x2c; // ','
      at = writePosition(positions[record]!, bytes, at);
    }
    out.length = at;
  }
  out.end();
}

/** s[start, end) as quoteLexeme quotes it (without the quotes), in UTF-8 at `at`; where it ends. */
function writeQuoted(s: string, start: number, end: number, bytes: Buffer, at: number): number {
  let next = at;
  for (let i = start; i < end; i++) {
    const c = s.charCodeAt(i);
    // Words are ASCII but for the odd one, which Buffer#write encodes.
    if (c > 0x7f) {
      const word = s.slice(start, end).replaceAll('\\', '\\\\').replaceAll("'", "''");
      return at + bytes.write(word, at, 'utf8');
    }
    if (c === 0x27 || c === 0x5c) bytes[next++] = c; // a quote doubled, a backslash escaped
    bytes[next++] = c;
  }
  return next;
}

function writePosition(position: number, bytes: Buffer, at: number): number {
  let last = at;
  for (let rest = position; rest >= 10; rest = Math.floor(rest / 10)) last++;
  for (let i = last, rest = position; i >= at; i--, rest = Math.floor(rest / 10))
    bytes[i] = 0x30 + (rest % 10);
  return last + 1;
}
