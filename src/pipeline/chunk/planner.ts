// Planning chunk ends and starts over a tokenized text: the window rules of chunker.ts.
import {
  boundaryKind,
  CR,
  HEADING,
  isSpace,
  LF,
  NOT_A_BOUNDARY,
  PARAGRAPH,
  PUNCTUATION,
  WORD,
} from './boundaries.js';
import { encodeText } from './encoder.js';
import type { PageSpan } from './options.js';
import type { TokenOffsets } from './token-map.js';

/** Share of the token window, from its start, before which a chunk end is not looked for. */
const PREFERRED_WINDOW_START = 0.7;

export interface Span {
  charStart: number;
  charEnd: number;
  tokenCount: number;
}

/** A position in the text, as a token index and a UTF-16 offset. */
export interface Cursor {
  tok: number;
  char: number;
  /** On a boundary (or the text's start or end), so token arithmetic counts a slice exactly. */
  exact: boolean;
}

export interface Plan {
  text: string;
  map: TokenOffsets;
  chunkSize: number;
  chunkOverlap: number;
  markdown: boolean;
}

export function planSpans(plan: Plan): Span[] {
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
export interface PlanState {
  start: Cursor;
  previousEnd: Cursor | null;
}

/**
 * The chunk at `state.start`, and the state for the one after it (null after the last). `final`:
 * `plan.text` ends where the document does; otherwise more text follows it (see StreamChunker),
 * and the caller guarantees the window reaches far enough past `start` for every look here.
 */
export function planOne(
  plan: Plan,
  state: PlanState,
  final: boolean,
): { span: Span; next: PlanState | null } {
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

/** First and last page whose span intersects [charStart, charEnd), or null when none does. */
export function pageRange(pages: PageSpan[], charStart: number, charEnd: number): [number, number] | null {
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
