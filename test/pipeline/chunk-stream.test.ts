// The streaming chunker (StreamChunker, IndexChunker) holds a window of the text instead of all of
// it; it must give exactly chunkText's / chunkForIndex's chunks on the joined text, however the
// text arrives: random text cut into random pieces and read through tiny windows (so a text of a
// few thousand characters already crosses dozens of window moves), real prose, and long runs
// without a single cut point.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { analyzer } from '../../src/domain/search-words.js';
import { chunkText } from '../../src/pipeline/chunk/chunker.js';
import { chunkForIndex, IndexChunker } from '../../src/pipeline/chunk/for-index.js';
import type { ChunkOptions, PageSpan } from '../../src/pipeline/chunk/options.js';
import { StreamChunker } from '../../src/pipeline/chunk/stream-chunker.js';

const TEST_TIMEOUT = 120_000;

function streamed(pieces: string[], options: ChunkOptions, windowChars: number) {
  const chunker = new StreamChunker(options, { windowChars });
  const chunks = [];
  for (const piece of pieces) chunks.push(...chunker.push(piece));
  chunks.push(...chunker.end());
  return { chunks, tokenCount: chunker.tokenCount };
}

function expected(text: string, options: ChunkOptions) {
  const plan = chunkText(text, options);
  return { chunks: plan.chunks.map(({ index: _index, ...chunk }) => chunk), tokenCount: plan.tokenCount };
}

/** `text` cut at the given fractions of its length (any offset: mid-word, mid-pair, mid-CRLF). */
function cutAt(text: string, cuts: number[]): string[] {
  const at = [...new Set(cuts.map((c) => Math.floor(c * text.length)))].sort((a, b) => a - b);
  const pieces: string[] = [];
  let from = 0;
  for (const p of at) {
    pieces.push(text.slice(from, p));
    from = p;
  }
  pieces.push(text.slice(from));
  return pieces;
}

const fragment = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom('the', 'Chunk', 'token', "don't", 'naïve', 'e\u0301t\u00e9') },
  { weight: 10, arbitrary: fc.constantFrom(' ', ' ', '  ', '\t', '\u00a0', '\u3000', '\u2028', '\v') },
  { weight: 4, arbitrary: fc.constantFrom('\n', '\n\n', '\r\n', '\r', ' \n', '\n  ', '\n/', '.\n/', '\n|') },
  { weight: 2, arbitrary: fc.constantFrom('\n\n# Heading\n\n', '\n## Sub\n', '\n| a | b |\n| 1 | 2 |\n') },
  { weight: 5, arbitrary: fc.constantFrom('.', '. ', ', ', '!', '? ', '…', '."', "'", '(', ')', '/', '-') },
  { weight: 3, arbitrary: fc.constantFrom('😀', '👍🏽', '中文字。', 'مرحبا', '𝐀𝐁𝐂', '\ud800', '\udc00') },
  { weight: 2, arbitrary: fc.constantFrom('123', '4567', 'https://example.com/a?b=1', '<|endoftext|>') },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 8 }) },
);

const longRun = fc.oneof(
  fc.integer({ min: 100, max: 2500 }).map((n) => 'a'.repeat(n)),
  fc.integer({ min: 50, max: 600 }).map((n) => '😀'.repeat(n)),
  fc.integer({ min: 50, max: 1500 }).map((n) => ' '.repeat(n)),
  fc.integer({ min: 20, max: 400 }).map((n) => '\n'.repeat(n)),
);

const randomText = fc
  .tuple(
    fc.array(fragment, { maxLength: 1500, size: 'max' }),
    fc.array(fc.tuple(longRun, fc.nat()), { maxLength: 2 }),
  )
  .map(([parts, runs]) => {
    const all = [...parts];
    for (const [run, at] of runs) all.splice(at % (all.length + 1), 0, run);
    return all.join('');
  });

const options = fc.integer({ min: 4, max: 300 }).chain((chunkSize) =>
  fc.record({
    chunkSize: fc.constant(chunkSize),
    chunkOverlap: fc.integer({ min: 0, max: chunkSize - 1 }),
    markdown: fc.boolean(),
  }),
);

describe('StreamChunker', () => {
  it(
    'gives chunkText’s chunks for random text, random pieces and tiny windows',
    () => {
      fc.assert(
        fc.property(
          randomText,
          options,
          fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 12 }),
          fc.integer({ min: 8, max: 2000 }),
          (text, opts, cuts, windowChars) => {
            expect(streamed(cutAt(text, cuts), opts, windowChars)).toEqual(expected(text, opts));
          },
        ),
        { numRuns: 300 },
      );
    },
    TEST_TIMEOUT,
  );

  it(
    'gives chunkText’s page ranges',
    () => {
      fc.assert(
        fc.property(
          fc.array(
            fc.array(fragment, { maxLength: 120 }).map((p) => p.join('')),
            { minLength: 1, maxLength: 30 },
          ),
          options,
          fc.integer({ min: 16, max: 600 }),
          (pageTexts, opts, windowChars) => {
            const pages: PageSpan[] = [];
            let offset = 0;
            pageTexts.forEach((page, i) => {
              pages.push({ page: i + 1, charStart: offset, charEnd: offset + page.length });
              offset += page.length;
            });
            const text = pageTexts.join('');
            expect(streamed(pageTexts, { ...opts, pages }, windowChars)).toEqual(
              expected(text, { ...opts, pages }),
            );
          },
        ),
        { numRuns: 100 },
      );
    },
    TEST_TIMEOUT,
  );

  it('splits a run longer than the encoder’s limit exactly as chunkText does', () => {
    const text = `start ${'x'.repeat(10_500)} middle\n${'y'.repeat(10_200)}\nend of it.`;
    const opts = { chunkSize: 512, chunkOverlap: 64 };
    for (const windowChars of [100, 4096, 1 << 20]) {
      expect(streamed(cutAt(text, [0.1, 0.5, 0.9]), opts, windowChars)).toEqual(expected(text, opts));
    }
  });

  it('gives no chunks for a text of nothing but whitespace, and counts its tokens', () => {
    const text = ' \n\t '.repeat(500);
    const opts = { chunkSize: 16, chunkOverlap: 4 };
    const result = streamed([text.slice(0, 700), text.slice(700)], opts, 64);
    expect(result).toEqual(expected(text, opts));
    expect(result.chunks).toEqual([]);
  });

  it(
    'gives chunkForIndex’s chunks, words, token count and hash on real prose, in 64 KB pieces',
    () => {
      const dir = join(process.cwd(), 'node_modules', 'fast-check');
      const readmes = readdirSync(dir).filter((name) => /\.md$/i.test(name));
      const prose = readmes.map((name) => readFileSync(join(dir, name), 'utf8')).join('\n\n');
      const text = prose.repeat(Math.ceil(3_000_000 / Math.max(1, prose.length))).slice(0, 3_000_000);
      const words = analyzer('english');
      const opts = { chunkSize: 512, chunkOverlap: 64, markdown: true };
      const reference = chunkForIndex(text, opts, words);
      const chunker = new IndexChunker(opts, words);
      const chunks = [];
      for (let i = 0; i < text.length; i += 65_536) chunks.push(...chunker.push(text.slice(i, i + 65_536)));
      chunks.push(...chunker.end());
      expect(chunks).toEqual(reference.chunks.map(({ index: _index, ...chunk }) => chunk));
      expect(chunker.totals()).toEqual({
        tokenCount: reference.tokenCount,
        contentSha256: reference.contentSha256,
        language: 'en',
      });
    },
    TEST_TIMEOUT,
  );
});
