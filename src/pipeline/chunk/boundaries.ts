// The places a chunk may end, and how good each is: cut points of o200k's pre-tokenizer, ranked
// from a Markdown heading down to a letter/punctuation boundary (see chunker.ts for the rules).

// Kinds of boundary, best first.
export const HEADING = 0;
export const PARAGRAPH = 1;
export const TABLE_ROW = 2;
export const SENTENCE = 3;
export const WORD = 4;
export const PUNCTUATION = 5;
export const NOT_A_BOUNDARY = 6;

export const LF = 0x0a;
export const CR = 0x0d;
export const SPACE = 0x20;
export const TAB = 0x09;
export const HASH = 0x23;
export const SLASH = 0x2f;
export const PIPE = 0x7c;
export const APOSTROPHE = 0x27;

/** What kind of boundary offset `at` (0 < at < text.length) is, or NOT_A_BOUNDARY. */
export function boundaryKind(text: string, at: number, markdown: boolean): number {
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
export function isSpace(c: number): boolean {
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
