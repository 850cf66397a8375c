// Example tests for the chunker: the cases a user of the ingest API would notice first. The
// exhaustive checks are in chunk.property.test.ts.
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { TOKENIZER_NAME } from '../../src/domain/chunk-settings.js';
import type { ChunkRow } from '../../src/domain/types.js';
import { chunkText } from '../../src/pipeline/chunk/chunker.js';

const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };
const count = (s: string): number => encode(s, PLAIN_TEXT).length;

const SENTENCES = [
  'The ingest worker reads each document once and writes its chunks in a single transaction.',
  'Retrieval quality depends on chunks that end where the author paused, not in the middle of a thought.',
  'Operators can tune the chunk size per document when they know the shape of their corpus.',
  'A retried job replaces the chunks of its document instead of appending a second copy.',
  'Every chunk records where it starts and ends, so a client can highlight the passage it came from.',
];

/** Deterministic prose: `n` sentences, cycling through SENTENCES. */
function prose(n: number, offset = 0): string {
  return Array.from({ length: n }, (_, i) => SENTENCES[(i + offset) % SENTENCES.length]).join(' ');
}

function expectWellFormed(text: string, chunks: ChunkRow[], chunkSize: number): void {
  chunks.forEach((chunk, i) => {
    expect(chunk.index).toBe(i);
    expect(chunk.text).toBe(text.slice(chunk.charStart, chunk.charEnd));
    expect(chunk.tokenCount).toBe(count(chunk.text));
    expect(chunk.tokenCount).toBeLessThanOrEqual(chunkSize);
    if (i > 0) expect(chunk.charStart).toBeLessThanOrEqual(chunks[i - 1]!.charEnd);
  });
  expect(chunks[0]?.charStart).toBe(0);
  expect(text.slice(chunks.at(-1)!.charEnd).trim()).toBe('');
}

describe('chunkText', () => {
  it('names its tokenizer', () => {
    expect(TOKENIZER_NAME).toBe('o200k_base');
  });

  it('returns no chunks for empty or whitespace-only text', () => {
    expect(chunkText('', { chunkSize: 512, chunkOverlap: 64 })).toEqual({ chunks: [], tokenCount: 0 });
    expect(chunkText(' \n\t\r\n  ', { chunkSize: 512, chunkOverlap: 64 }).chunks).toEqual([]);
  });

  it('keeps a short text in one chunk with its exact token count', () => {
    const text = prose(3);
    const plan = chunkText(text, { chunkSize: 512, chunkOverlap: 64 });
    expect(plan.chunks).toEqual([
      {
        index: 0,
        text,
        tokenCount: count(text),
        charStart: 0,
        charEnd: text.length,
        pageStart: null,
        pageEnd: null,
      },
    ]);
    expect(plan.tokenCount).toBe(count(text));
  });

  it('treats special-token strings such as <|endoftext|> as plain text', () => {
    const text = `${prose(40)} <|endoftext|> ${prose(40)} <|im_start|>system<|im_end|>`;
    expect(() => encode(text)).toThrow();
    const plan = chunkText(text, { chunkSize: 128, chunkOverlap: 16 });
    expectWellFormed(text, plan.chunks, 128);
    expect(plan.tokenCount).toBe(count(text));
    // As a special token it would be one token; as text it is several.
    expect(
      chunkText('<|endoftext|>', { chunkSize: 128, chunkOverlap: 0 }).chunks[0]!.tokenCount,
    ).toBeGreaterThan(1);
  });

  it('splits a markdown document at its headings', () => {
    // Each section is about 200 tokens: its heading is the first one that lies 70–100% of the
    // way into a 256-token window.
    const sections = Array.from(
      { length: 8 },
      (_, k) => `## Section ${k + 1}\n\n${prose(4, k)}\n\n${prose(4, k + 1)}\n\n${prose(3, k + 2)}\n\n`,
    );
    const text = sections.join('');
    const plan = chunkText(text, { chunkSize: 256, chunkOverlap: 0, markdown: true });
    expectWellFormed(text, plan.chunks, 256);
    expect(plan.chunks.length).toBe(sections.length);
    for (const chunk of plan.chunks) expect(chunk.text).toMatch(/^## Section \d+\n\n/);

    // Without markdown, the latest paragraph break wins, which can leave a heading at the end
    // of the chunk before its section.
    const plain = chunkText(text, { chunkSize: 256, chunkOverlap: 0, markdown: false });
    expectWellFormed(text, plain.chunks, 256);
    expect(plain.chunks.some((chunk) => /## Section \d+\n\n$/.test(chunk.text))).toBe(true);
  });

  it('prefers paragraph breaks to sentence ends, and sentence ends to other words', () => {
    const paragraphs = Array.from({ length: 12 }, (_, k) => prose(4, k)).join('\n\n');
    for (const chunk of chunkText(paragraphs, { chunkSize: 200, chunkOverlap: 0 }).chunks.slice(0, -1)) {
      expect(chunk.text).toMatch(/\.\n\n$/);
    }
    const oneParagraph = prose(60);
    const { chunks } = chunkText(oneParagraph, { chunkSize: 150, chunkOverlap: 0 });
    expect(chunks.length).toBeGreaterThan(5);
    for (const chunk of chunks.slice(0, -1)) expect(chunk.text).toMatch(/\.$/);
  });

  it('keeps Markdown table rows whole: a row start beats a sentence end inside a row', () => {
    // Each row holds two sentences, so without the row rule a chunk would end after the first
    // sentence of a row (a sentence end is the latest good boundary in the window).
    const rows = Array.from(
      { length: 120 },
      (_, i) =>
        `| ${i} | ${SENTENCES[i % SENTENCES.length]} Then row ${i} ends. | ${SENTENCES[(i + 2) % SENTENCES.length]} |`,
    );
    const table = `Intro paragraph.\n\n| id | note | more |\n| --- | --- | --- |\n${rows.join('\n')}\n`;
    for (const overlap of [0, 24]) {
      const { chunks } = chunkText(table, { chunkSize: 180, chunkOverlap: overlap });
      expectWellFormed(table, chunks, 180);
      expect(chunks.length).toBeGreaterThan(10);
      for (const chunk of chunks.slice(0, -1)) {
        // Every chunk ends just after a row's closing pipe and its line break.
        expect(table.slice(chunk.charEnd - 2, chunk.charEnd)).toBe('|\n');
      }
      for (const chunk of chunks.slice(1)) {
        if (overlap === 0) expect(table[chunk.charStart]).toBe('|');
      }
    }
  });

  it('ends a chunk at a word boundary when the window has no sentence end', () => {
    const words = Array.from({ length: 3000 }, (_, i) => `word${i % 97}`).join(' ');
    const { chunks } = chunkText(words, { chunkSize: 128, chunkOverlap: 0 });
    expectWellFormed(words, chunks, 128);
    for (const chunk of chunks.slice(0, -1)) expect(words[chunk.charEnd]).toBe(' ');
  });

  it('overlaps consecutive chunks by at most chunkOverlap tokens, starting on a word', () => {
    const text = prose(80);
    const { chunks } = chunkText(text, { chunkSize: 128, chunkOverlap: 32 });
    expectWellFormed(text, chunks, 128);
    for (let i = 1; i < chunks.length; i++) {
      const shared = text.slice(chunks[i]!.charStart, chunks[i - 1]!.charEnd);
      expect(shared).toMatch(/^ \S/);
      // Snapping forward to a word gives up less than one word's worth of tokens.
      expect(count(shared)).toBeLessThanOrEqual(32);
      expect(count(shared)).toBeGreaterThan(28);
    }
  });

  it('splits a 10,000-character word with no spaces into chunks within the size', () => {
    // Deterministic pseudo-random base64, so BPE does not compress it into a few tokens.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    let seed = 42;
    let word = '';
    for (let i = 0; i < 10_000; i++) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      word += alphabet[seed % 64];
    }
    for (const text of [word, 'x'.repeat(10_000), `Intro sentence. ${word} Outro sentence.`]) {
      const { chunks } = chunkText(text, { chunkSize: 256, chunkOverlap: 32 });
      expect(chunks.length).toBeGreaterThan(1);
      expectWellFormed(text, chunks, 256);
    }
  });

  it('never splits a surrogate pair', () => {
    const text = `${'😀👍🏽🫠'.repeat(1500)}\n\n${'𝐀𝐁𝐂 '.repeat(500)}`;
    const { chunks } = chunkText(text, { chunkSize: 128, chunkOverlap: 16 });
    expect(chunks.length).toBeGreaterThan(10);
    expectWellFormed(text, chunks, 128);
    const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
    for (const chunk of chunks) expect(chunk.text).not.toMatch(loneSurrogate);
  });

  it('gives each chunk the first and last page its text lies on', () => {
    const pageTexts = [prose(30), prose(30, 1), prose(30, 2)];
    const text = pageTexts.join('\n\n');
    let at = 0;
    const pages = pageTexts.map((pageText, i) => {
      const span = { page: i + 1, charStart: at, charEnd: at + pageText.length + 2 };
      at = span.charEnd;
      return span;
    });
    const { chunks } = chunkText(text, { chunkSize: 256, chunkOverlap: 32, pages });
    for (const chunk of chunks) {
      const first = pages.find((p) => p.charEnd > chunk.charStart)!;
      const last = pages.findLast((p) => p.charStart < chunk.charEnd)!;
      expect([chunk.pageStart, chunk.pageEnd]).toEqual([first.page, last.page]);
    }
    expect(chunks.some((c) => c.pageStart !== c.pageEnd)).toBe(true);
    expect(chunks[0]!.pageStart).toBe(1);
    expect(chunks.at(-1)!.pageEnd).toBe(3);
  });

  it('rejects sizes it cannot honour', () => {
    expect(() => chunkText('text', { chunkSize: 128, chunkOverlap: 128 })).toThrow(RangeError);
    expect(() => chunkText('text', { chunkSize: 128, chunkOverlap: -1 })).toThrow(RangeError);
    expect(() => chunkText('text', { chunkSize: 2, chunkOverlap: 0 })).toThrow(RangeError);
    expect(() => chunkText('text', { chunkSize: 12.5, chunkOverlap: 0 })).toThrow(RangeError);
  });
});
