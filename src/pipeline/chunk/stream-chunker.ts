// The chunker for a text that arrives in pieces: chunkText's chunks, holding only a window.
import type { ChunkRow } from '../../domain/types.js';
import { isSpace, LF, SLASH, SPACE } from './boundaries.js';
import { type ChunkOptions, checkChunkOptions, type PageSpan } from './options.js';
import { type Cursor, type Plan, type PlanState, pageRange, planOne } from './planner.js';
import { encodeInRuns, mapTokenOffsets, type TokenOffsets } from './token-map.js';

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
