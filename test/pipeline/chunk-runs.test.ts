// Long unbroken runs: BPE cost grows with the square of a pre-token's length, so the chunker
// encodes runs longer than 10,000 characters in pieces. A megabyte of one letter must chunk
// within the test timeout (before the fix it took minutes), with every chunk's count still exact;
// how fast it is belongs in bench/, not here.
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { chunkText } from '../../src/pipeline/chunk/chunker.js';

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
});
