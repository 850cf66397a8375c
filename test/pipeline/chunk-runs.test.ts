// Long unbroken runs: o200k's pre-tokenizer makes one piece of any run of letters or symbols, and
// a plain byte-pair merge costs the square of a piece's length. The chunker encodes runs longer
// than 10,000 characters in pieces and the encoder merges long pieces through a priority queue,
// so text without whitespace chunks in time linear in its length, with every chunk's count still
// exact. How fast it is belongs in bench/; here, only that it is not orders of magnitude slower
// than prose.
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { chunkText } from '../../src/pipeline/chunk/chunker.js';
import { encodeText } from '../../src/pipeline/chunk/encoder.js';

const count = (text: string) => encode(text, { disallowedSpecial: new Set<string>() }).length;

describe('chunkText on long unbroken runs', () => {
  const cases: [string, string][] = [
    ['1 MB of one letter', 'a'.repeat(1024 * 1024)],
    [
      'a 60,000-character run between prose',
      `${'prose words here. '.repeat(500)}${'Q'.repeat(60_000)}${' more prose.'.repeat(500)}`,
    ],
    ['a long run of symbols', `start ${'='.repeat(45_000)} end`],
    ['a long run of emoji (surrogate pairs)', '🙂'.repeat(30_000)],
  ];
  for (const [label, text] of cases) {
    it(`${label}: exact counts, within size, covering the text`, () => {
      const plan = chunkText(text, { chunkSize: 512, chunkOverlap: 64 });
      expect(plan.chunks.length).toBeGreaterThan(1);
      plan.chunks.forEach((chunk, i) => {
        expect(chunk.tokenCount).toBeLessThanOrEqual(512);
        expect(count(chunk.text)).toBe(chunk.tokenCount);
        expect(chunk.text).toBe(text.slice(chunk.charStart, chunk.charEnd));
        if (i > 0) expect(chunk.charStart).toBeLessThanOrEqual(plan.chunks[i - 1]!.charEnd);
      });
      expect(plan.chunks[0]!.charStart).toBe(0);
      expect(plan.chunks.at(-1)!.charEnd).toBe(text.length);
    });
  }

  it('4 MB of one letter: contiguous chunks of exact counts', () => {
    const text = 'x'.repeat(4 * 1024 * 1024);
    const plan = chunkText(text, { chunkSize: 512, chunkOverlap: 64 });
    // One giant word has no boundary to overlap at: each chunk starts where the last one ended.
    expect(plan.chunks.map((chunk) => chunk.text).join('')).toBe(text);
    plan.chunks.forEach((chunk, i) => {
      expect(chunk.charStart).toBe(i === 0 ? 0 : plan.chunks[i - 1]!.charEnd);
    });
    // o200k merges a run of 'x' into tokens of eight: every chunk holds exactly 512 of them.
    expect(plan.tokenCount).toBe(text.length / 8);
    expect(plan.chunks).toHaveLength(text.length / 8 / 512);
    for (const chunk of plan.chunks) expect(chunk.tokenCount).toBe(512);
    // The library's own merge is quadratic: check its count on a spread of chunks.
    for (let i = 0; i < plan.chunks.length; i += Math.ceil(plan.chunks.length / 12)) {
      expect(count(plan.chunks[i]!.text), `chunk ${i}`).toBe(plan.chunks[i]!.tokenCount);
    }
  });

  // Relative to prose chunked in the same process, in CPU time, each the quickest of three runs,
  // so other work on the machine cancels out: a plain merge of 10,000-character pieces made one
  // letter several hundred times slower than prose; linear merging leaves it within a small
  // factor (about ten; bench/RESULTS.md has the figures), far under the bound.
  it('text without whitespace chunks within a small factor of prose’s time', () => {
    const size = 1024 * 1024;
    const sentence = 'The quick brown fox jumps over the lazy dog, and then it rests. ';
    const prose = sentence.repeat(Math.ceil(size / sentence.length)).slice(0, size);
    const run = 'x'.repeat(size);
    encodeText(`${'y'.repeat(200)} warm`);
    const cpuMs = (text: string) => {
      const before = process.cpuUsage();
      chunkText(text, { chunkSize: 512, chunkOverlap: 64 });
      const used = process.cpuUsage(before);
      return (used.user + used.system) / 1000;
    };
    cpuMs(prose);
    const proseMs = Math.min(cpuMs(prose), cpuMs(prose), cpuMs(prose));
    const runMs = Math.min(cpuMs(run), cpuMs(run), cpuMs(run));
    expect(runMs).toBeLessThan(proseMs * 60);
  }, 120_000);
});
