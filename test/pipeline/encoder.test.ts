// The chunker's encoder (src/pipeline/chunk/encoder.ts) must give exactly gpt-tokenizer's tokens:
// chunk token counts, chunk limits and overlaps all rest on them. Checked on real text (other
// people's PDFs as poppler reads them, Markdown from node_modules) and on random text built from
// the characters where an ASCII shortcut could go wrong: letters next to accented letters and
// marks, non-ASCII spaces and punctuation, digits of other scripts, contractions, line breaks
// before '/', emoji, lone surrogates and special-token strings.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { encodeText } from '../../src/pipeline/chunk/encoder.js';
import { itWithCorpus } from '../helpers/shared.js';
import { PDF_DIR, ROOT } from './extract-support.js';

const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };
const library = (text: string) => encode(text, PLAIN_TEXT);

const ATOMS = [
  ...'abcxyzABCXYZ0123456789',
  ...' \t\r\n\v\f',
  ...'.,;:!?\'"()[]{}<>/\\|-_=+*&^%$#@~`',
  "'s",
  "'LL",
  "'ve",
  "don't",
  '\r\n',
  '\n/',
  '   ',
  ...'éÉüßøÆǅʰ中文日本語ﬁ™',
  '\u0301', // combining acute
  '\u00a0', // no-break space
  '\u2003', // em space
  '\u3000', // ideographic space
  '—',
  '…',
  '’',
  '٣', // Arabic-Indic digit
  '²',
  '😀',
  '👍🏽',
  '\ud800', // lone high surrogate
  '\udc00', // lone low surrogate
  '<|endoftext|>',
  '<|endofprompt|>',
];

function realTexts(): { name: string; text: string }[] {
  const texts: { name: string; text: string }[] = [];
  const popplerDir = path.join(PDF_DIR, 'pdftotext');
  for (const file of readdirSync(popplerDir)) {
    texts.push({ name: `corpus ${file}`, text: readFileSync(path.join(popplerDir, file), 'utf8') });
  }
  for (const pkg of ['fastify', 'zod', 'undici', 'pino', 'vitest']) {
    const readme = path.join(ROOT, 'node_modules', pkg, 'README.md');
    try {
      texts.push({ name: `${pkg} README`, text: readFileSync(readme, 'utf8') });
    } catch {
      // Not every package ships a README; the others are enough.
    }
  }
  return texts;
}

describe('encodeText', () => {
  itWithCorpus('gives gpt-tokenizer’s tokens on real text', () => {
    const texts = realTexts();
    expect(texts.length).toBeGreaterThan(8);
    for (const { name, text } of texts) {
      expect(encodeText(text), name).toEqual(library(text));
      // Again, now from the cache.
      expect(encodeText(text), name).toEqual(library(text));
    }
  });

  it('gives gpt-tokenizer’s tokens on random text where ASCII meets everything else', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...ATOMS), { maxLength: 80 }), (atoms) => {
        const text = atoms.join('');
        expect(encodeText(text)).toEqual(library(text));
      }),
      { numRuns: 5_000 },
    );
  });

  // Pieces of ASCII are merged by the encoder itself, not the library: every path of the merge
  // (whole-piece hits, long pieces, runs of one letter where equal pairs tie) against the library.
  it('merges ASCII pieces as gpt-tokenizer does', () => {
    const ascii = Array.from({ length: 128 }, (_, i) => String.fromCharCode(i));
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...ascii), { maxLength: 60 }),
        fc.array(fc.constantFrom(...'aaabqxz01_.-'), { minLength: 1, maxLength: 40 }),
        (anyAscii, fewLetters) => {
          for (const text of [anyAscii.join(''), fewLetters.join('')]) {
            expect(encodeText(text), JSON.stringify(text)).toEqual(library(text));
          }
        },
      ),
      { numRuns: 5_000 },
    );
    for (const text of [
      'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
      'pneumonoultramicroscopicsilicovolcanoconiosis',
      'XMLHttpRequestEventTargetPrototypeFactory',
      '0x7fffffffffffffff',
      '__proto__constructor$$$$###',
      'https://example.invalid/a/b?c=d&e=f#g',
    ]) {
      expect(encodeText(text), text).toEqual(library(text));
    }
  });

  // A piece over 64 units is merged through a priority queue: the same merges, in the same order.
  it('merges long pieces as gpt-tokenizer does, ASCII or not', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...'aaabqxz.-'), { minLength: 65, maxLength: 400 }),
        fc.array(fc.constantFrom(...'中文日本語éaü'), { minLength: 65, maxLength: 300 }),
        (ascii, other) => {
          for (const text of [ascii.join(''), other.join('')]) {
            expect(encodeText(text), JSON.stringify(text)).toEqual(library(text));
          }
        },
      ),
      { numRuns: 300 },
    );
    for (const text of [
      'x'.repeat(3_000),
      'X'.repeat(2_000),
      '.'.repeat(2_000),
      '中文'.repeat(1_000),
      '😀'.repeat(500),
    ]) {
      expect(encodeText(text), text.slice(0, 8)).toEqual(library(text));
    }
  });

  it('handles the empty text and a text of one long run', () => {
    expect(encodeText('')).toEqual([]);
    const run = `${'9'.repeat(5_000)}${'x'.repeat(5_000)}`;
    expect(encodeText(run)).toEqual(library(run));
  });
});
