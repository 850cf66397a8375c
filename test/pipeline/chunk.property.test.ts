// Property tests for the chunker: over random text (words, punctuation, line breaks, emoji, lone
// surrogates, special-token strings, long unbroken runs) and over real README prose, every plan
// must honour the promises in src/pipeline/chunk/chunker.ts. The checks below restate those
// promises from the module comment rather than reuse the chunker's code, so a drift in either
// shows up here.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { chunkText } from '../../src/pipeline/chunk/chunker.js';
import type { ChunkPlan, PageSpan } from '../../src/pipeline/chunk/options.js';

const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };
const count = (s: string): number => encode(s, PLAIN_TEXT).length;

// --- The documented cut points, restated ---------------------------------------------------

type Kind = 'heading' | 'paragraph' | 'tableRow' | 'sentence' | 'word' | 'punctuation';
const RANK: Record<Kind, number> = {
  heading: 0,
  paragraph: 1,
  tableRow: 2,
  sentence: 3,
  word: 4,
  punctuation: 5,
};

function codePointBefore(text: string, p: number): string {
  const low = text.charCodeAt(p - 1);
  const high = text.charCodeAt(p - 2);
  const pair = low >= 0xdc00 && low <= 0xdfff && high >= 0xd800 && high <= 0xdbff;
  return text.slice(pair ? p - 2 : p - 1, p);
}

function codePointAt(text: string, p: number): string {
  return String.fromCodePoint(text.codePointAt(p)!).length === 2
    ? text.slice(p, p + 2)
    : text.slice(p, p + 1);
}

function isBoundary(text: string, p: number): boolean {
  if (p <= 0 || p >= text.length) return false;
  const before = text[p - 1]!;
  const here = text[p]!;
  if (/[\r\n]/.test(before)) {
    if (/[\r\n/]/.test(here)) return false;
    const run = /\s*/y;
    run.lastIndex = p;
    return !/[\r\n]/.test(run.exec(text)![0]);
  }
  if (/\s/.test(here)) return !/[\r\n]/.test(here) && p + 1 < text.length && /\S/.test(text[p + 1]!);
  return /^\p{L}$/u.test(codePointBefore(text, p)) && /^[^\p{L}\p{M}\p{N}\s']$/u.test(codePointAt(text, p));
}

function kindOf(text: string, p: number, markdown: boolean): Kind | null {
  if (!isBoundary(text, p)) return null;
  if (/[\r\n]/.test(text[p - 1]!)) {
    if (markdown && /^ {0,3}#{1,6}(?:[ \t\r\n]|$)/.test(text.slice(p, p + 12))) return 'heading';
    let breaks = 0;
    for (let j = p - 1; j >= 0 && /\s/.test(text[j]!); j--) {
      if (text[j] === '\n' || (text[j] === '\r' && text[j + 1] !== '\n')) breaks++;
    }
    if (breaks >= 2) return 'paragraph';
    // A line that starts (after its indent) with "|": a Markdown table row.
    return /^[ \t]*\|/.test(text.slice(p, p + 64)) ? 'tableRow' : 'sentence';
  }
  if (/\s/.test(text[p]!)) {
    return /[.!?…。]["')\]*_’”»]{0,3}$/.test(text.slice(Math.max(0, p - 4), p)) ? 'sentence' : 'word';
  }
  return 'punctuation';
}

function boundariesOf(text: string): number[] {
  const out: number[] = [];
  for (let p = 1; p < text.length; p++) if (isBoundary(text, p)) out.push(p);
  return out;
}

/** First index in sorted `xs` whose value is > x. */
function upperBound(xs: number[], x: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (xs[mid]! <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const splitsSurrogatePair = (text: string, p: number): boolean =>
  /[\ud800-\udbff]/.test(text[p - 1] ?? '') && /[\udc00-\udfff]/.test(text[p] ?? '');

interface Case {
  text: string;
  chunkSize: number;
  chunkOverlap: number;
  markdown: boolean;
}

/** Every promise of the chunker, checked on one plan. */
function checkPlan({ text, chunkSize, chunkOverlap, markdown }: Case, plan: ChunkPlan): void {
  const { chunks } = plan;
  expect(plan.tokenCount).toBe(count(text));
  if (!/\S/.test(text)) {
    expect(chunks).toEqual([]);
    return;
  }
  expect(chunks.length).toBeGreaterThan(0);
  expect(chunks[0]!.charStart).toBe(0);
  expect(/^\s*$/.test(text.slice(chunks.at(-1)!.charEnd))).toBe(true);

  // Tokens before each boundary, summed segment by segment: valid because a boundary never falls
  // inside an o200k pre-token (the direct per-chunk counts below check that claim).
  const bounds = boundariesOf(text);
  const before: number[] = [];
  let sum = 0;
  let last = 0;
  for (const p of bounds) {
    sum += count(text.slice(last, p));
    before.push(sum);
    last = p;
  }
  expect(sum + count(text.slice(last))).toBe(plan.tokenCount);
  const tokensBefore = (p: number): number => (p === 0 ? 0 : before[upperBound(bounds, p) - 1]!);
  const exact = (p: number): boolean => p === 0 || p === text.length || isBoundary(text, p);
  const preferredFrom = Math.floor(chunkSize * 0.7);

  chunks.forEach((chunk, i) => {
    const { charStart: start, charEnd: end } = chunk;
    expect(chunk.index).toBe(i);
    expect(chunk.text).toBe(text.slice(start, end));
    expect(start).toBeLessThan(end);
    expect(chunk.tokenCount).toBe(count(chunk.text));
    expect(chunk.tokenCount).toBeLessThanOrEqual(chunkSize);
    expect(splitsSurrogatePair(text, start)).toBe(false);
    expect(splitsSurrogatePair(text, end)).toBe(false);

    const prev = chunks[i - 1];
    if (prev) {
      // In order, no gaps.
      expect(start).toBeGreaterThan(prev.charStart);
      expect(end).toBeGreaterThan(prev.charEnd);
      expect(start).toBeLessThanOrEqual(prev.charEnd);
      // Overlap: the shared text starts on a boundary and holds at most chunkOverlap tokens.
      if (start < prev.charEnd) {
        expect(isBoundary(text, start)).toBe(true);
        if (exact(prev.charEnd))
          expect(count(text.slice(start, prev.charEnd))).toBeLessThanOrEqual(chunkOverlap);
      }
      if (exact(prev.charStart) && exact(prev.charEnd)) {
        // It starts at the first boundary after the previous start that is at most chunkOverlap
        // tokens before the previous end, else at the previous end.
        const endTokens = tokensBefore(prev.charEnd);
        let snapped = prev.charEnd;
        for (
          let b = upperBound(bounds, prev.charStart);
          b < bounds.length && bounds[b]! < prev.charEnd;
          b++
        ) {
          if (endTokens - before[b]! <= chunkOverlap) {
            snapped = bounds[b]!;
            break;
          }
        }
        if (start !== snapped) {
          // The one exception: from the snapped start no boundary past the previous end lies in
          // the preferred window, and the cut inside the word there did not fit.
          expect(start).toBe(prev.charEnd);
          const from = tokensBefore(snapped);
          for (let b = upperBound(bounds, prev.charEnd); b < bounds.length; b++) {
            const tokens = before[b]! - from;
            if (tokens > chunkSize) break;
            expect(tokens).toBeLessThan(preferredFrom);
          }
        }
      }
    }

    // End: the latest boundary of the best kind among those 70%..100% of the window in, and
    // after the previous end; a cut elsewhere only when the window holds no boundary at all.
    if (end === text.length || !exact(start)) return;
    const first = tokensBefore(start);
    const candidates: { p: number; kind: Kind }[] = [];
    for (let b = upperBound(bounds, Math.max(start, prev?.charEnd ?? 0)); b < bounds.length; b++) {
      const tokens = before[b]! - first;
      if (tokens > chunkSize) break;
      if (tokens >= preferredFrom)
        candidates.push({ p: bounds[b]!, kind: kindOf(text, bounds[b]!, markdown)! });
    }
    const endKind = kindOf(text, end, markdown);
    if (endKind === null) {
      expect(candidates).toEqual([]);
      return;
    }
    const bestRank = Math.min(...candidates.map((c) => RANK[c.kind]));
    expect(RANK[endKind]).toBe(bestRank);
    const latestOfKind = Math.max(...candidates.filter((c) => RANK[c.kind] === bestRank).map((c) => c.p));
    expect(end).toBe(latestOfKind);
  });
}

// --- Generators -------------------------------------------------------------------------------

const fragment = fc.oneof(
  {
    weight: 12,
    arbitrary: fc.constantFrom('the', 'Chunk', 'token', "don't", "it's", 'naïve', 'straße', 'e\u0301t\u00e9'),
  },
  { weight: 10, arbitrary: fc.constantFrom(' ', ' ', ' ', '  ', '\t', '\u00a0', '\u3000', '\u2028', '\v') },
  {
    weight: 3,
    arbitrary: fc.constantFrom('\n', '\n\n', '\r\n', '\r', '\r\n\r\n', ' \n', '\n  ', '\n/', '.\n/'),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom('\n\n# Heading\n\n', '\n## Sub heading\n', '\n#hashtag ', '\n    # code\n'),
  },
  {
    weight: 5,
    arbitrary: fc.constantFrom('.', '. ', ', ', '!', '? ', '…', '."', "'", '(', ')', '/', '-', '—', '*'),
  },
  { weight: 2, arbitrary: fc.constantFrom('<|endoftext|>', '<|im_start|>', '<|fim_prefix|>') },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '😀',
      '👍🏽',
      '👨‍👩‍👧',
      '🫠',
      '中文字。',
      '日本語の文',
      'مرحبا',
      'नमस्ते',
      '𝐀𝐁𝐂',
      '\ud800',
      '\udc00',
    ),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom('123', '4567', '3.14', 'https://example.com/a/b?c=1', 'snake_case_name'),
  },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 8 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 8 }) },
);

// Runs with no cut point in them. BPE is quadratic in a pre-token's length, so they are kept few
// and short enough for the suite to stay quick, yet several windows long at small chunk sizes.
const unbrokenRun = fc.oneof(
  fc.integer({ min: 100, max: 3000 }).map((n) => 'a'.repeat(n)),
  fc.integer({ min: 50, max: 800 }).map((n) => '😀'.repeat(n)),
  fc.integer({ min: 50, max: 1200 }).map((n) => '中'.repeat(n)),
  fc.integer({ min: 50, max: 2000 }).map((n) => '='.repeat(n)),
  fc.string({
    unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'),
    minLength: 500,
    maxLength: 4000,
  }),
);

const randomText = fc
  .tuple(
    fc.array(fragment, { maxLength: 2000, size: 'max' }),
    fc.array(fc.tuple(unbrokenRun, fc.nat()), { maxLength: 2 }),
  )
  .map(([parts, runs]) => {
    const all = [...parts];
    for (const [run, at] of runs) all.splice(at % (all.length + 1), 0, run);
    return all.join('');
  });

const sizes = fc
  .oneof(fc.integer({ min: 128, max: 400 }), fc.integer({ min: 128, max: 4096 }))
  .chain((chunkSize) =>
    fc.record({
      chunkSize: fc.constant(chunkSize),
      chunkOverlap: fc.integer({ min: 0, max: Math.min(512, chunkSize - 1) }),
      markdown: fc.boolean(),
    }),
  );

function readmes(): string[] {
  const root = 'node_modules';
  const dirs: string[] = [];
  for (const name of readdirSync(root).sort()) {
    if (name.startsWith('.')) continue;
    if (name.startsWith('@')) {
      for (const sub of readdirSync(join(root, name)).sort()) dirs.push(join(root, name, sub));
    } else {
      dirs.push(join(root, name));
    }
  }
  const texts: string[] = [];
  for (const dir of dirs) {
    let file: string | undefined;
    try {
      file = readdirSync(dir).find((f) => f.toLowerCase() === 'readme.md');
    } catch {
      continue;
    }
    if (!file) continue;
    const text = readFileSync(join(dir, file), 'utf8');
    if (text.length > 2000) texts.push(text.slice(0, 40_000));
  }
  return texts;
}

const REAL = readmes();

// CHUNK_PROPERTY_SCALE=10 for a deeper local run; CI keeps the default.
const SCALE = Number(process.env['CHUNK_PROPERTY_SCALE'] ?? '1');
// The time limit keeps a failure's shrinking (each step re-checks a large text) inside the test
// timeout; a failure found before it is still reported.
const TEST_TIMEOUT = 60_000 * Math.max(1, SCALE);
const budget = (numRuns: number) => ({
  numRuns: Math.max(1, Math.round(numRuns * SCALE)),
  interruptAfterTimeLimit: TEST_TIMEOUT * 0.75,
});

// --- Properties -----------------------------------------------------------------------------

describe('chunkText properties', () => {
  it('found real prose to test on', () => {
    expect(REAL.length).toBeGreaterThan(20);
  });

  it(
    'cuts only where encoding the two sides apart gives the same tokens as the whole',
    () => {
      // The claim every exact token count rests on, tested at each boundary of short texts.
      const short = fc.array(fragment, { maxLength: 120, size: 'max' }).map((parts) => parts.join(''));
      fc.assert(
        fc.property(short, (text) => {
          const whole = encode(text, PLAIN_TEXT);
          for (const p of boundariesOf(text)) {
            const apart = [...encode(text.slice(0, p), PLAIN_TEXT), ...encode(text.slice(p), PLAIN_TEXT)];
            expect(apart).toEqual(whole);
          }
        }),
        budget(300),
      );
    },
    TEST_TIMEOUT,
  );

  it(
    'holds every promise on random text',
    () => {
      fc.assert(
        fc.property(randomText, sizes, (text, opts) => {
          checkPlan({ text, ...opts }, chunkText(text, opts));
        }),
        budget(150),
      );
    },
    TEST_TIMEOUT,
  );

  it(
    'holds every promise on small chunks of random text',
    () => {
      // Many chunks per text: exercises overlap and window rules more than large chunks do.
      const small = fc.integer({ min: 128, max: 200 }).chain((chunkSize) =>
        fc.record({
          chunkSize: fc.constant(chunkSize),
          chunkOverlap: fc.integer({ min: 0, max: chunkSize - 1 }),
          markdown: fc.boolean(),
        }),
      );
      fc.assert(
        fc.property(randomText, small, (text, opts) => {
          checkPlan({ text, ...opts }, chunkText(text, opts));
        }),
        budget(100),
      );
    },
    TEST_TIMEOUT,
  );

  it(
    'holds every promise on real README prose and markdown',
    () => {
      const slice = fc.record({
        doc: fc.constantFrom(...REAL),
        from: fc.nat({ max: 20_000 }),
        length: fc.integer({ min: 1000, max: 40_000 }),
      });
      fc.assert(
        fc.property(slice, sizes, ({ doc, from, length }, opts) => {
          const text = doc.slice(Math.min(from, doc.length - 500), from + length);
          checkPlan({ text, ...opts }, chunkText(text, opts));
        }),
        budget(150),
      );
    },
    TEST_TIMEOUT,
  );

  it(
    'gives each chunk the pages its text lies on',
    () => {
      const withPages = randomText
        .filter((text) => text.length > 0)
        .chain((text) =>
          fc.record({
            text: fc.constant(text),
            cuts: fc.uniqueArray(fc.integer({ min: 0, max: text.length }), { maxLength: 30 }),
            gaps: fc.array(fc.boolean(), { maxLength: 31 }),
            opts: fc.record({
              chunkSize: fc.integer({ min: 128, max: 600 }),
              chunkOverlap: fc.integer({ min: 0, max: 127 }),
            }),
          }),
        );
      fc.assert(
        fc.property(withPages, ({ text, cuts, gaps, opts }) => {
          const edges = [0, ...cuts.sort((a, b) => a - b), text.length];
          const pages: PageSpan[] = [];
          for (let k = 0; k + 1 < edges.length; k++) {
            // Some pages are left out, leaving gaps the way a page without text would.
            if (gaps[k]) continue;
            pages.push({ page: k + 1, charStart: edges[k]!, charEnd: edges[k + 1]! });
          }
          const plan = chunkText(text, { ...opts, pages });
          for (const chunk of plan.chunks) {
            const hit = pages.filter((s) => s.charStart < chunk.charEnd && s.charEnd > chunk.charStart);
            expect([chunk.pageStart, chunk.pageEnd]).toEqual(
              hit.length === 0 ? [null, null] : [hit[0]!.page, hit.at(-1)!.page],
            );
          }
          for (const chunk of chunkText(text, opts).chunks)
            expect([chunk.pageStart, chunk.pageEnd]).toEqual([null, null]);
        }),
        budget(200),
      );
    },
    TEST_TIMEOUT,
  );
});
