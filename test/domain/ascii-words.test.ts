// The ASCII word table gives exactly the words a plain split-and-analyse gives, whatever it has
// seen before, including after it has filled up and started again; and it analyses a word once.
import { stemmer as porter } from 'stemmer';
import { describe, expect, it } from 'vitest';
import { AsciiWordTable } from '../../src/domain/ascii-words.js';
import { analyzer, formerAnalyzer } from '../../src/domain/search-words.js';

/** The plain way: every run of [a-z0-9], analysed one by one. */
function plainWords(lower: string, analyse: (word: string) => string): string {
  return (lower.match(/[a-z0-9]+/g) ?? []).map(analyse).join(' ');
}

/** Words made of a counter in base 36, so that every one is new: "w0", "w1", … "wzz". */
function distinctWords(count: number, from = 0): string[] {
  return Array.from({ length: count }, (_, i) => `w${(from + i).toString(36)}`);
}

describe('AsciiWordTable', () => {
  it('gives each word its analysed form, in order, separated by single spaces', () => {
    const analyse = (word: string) => `<${word}>`;
    const table = new AsciiWordTable(analyse);
    const text = '  the 3 cats, the-dogs;and 42nd\nstreet!! ';
    expect(table.words(text)).toBe('<the> <3> <cats> <the> <dogs> <and> <42nd> <street>');
    expect(table.words('')).toBe('');
    expect(table.words(' ,.; ')).toBe('');
    expect(table.words('word')).toBe('<word>');
  });

  it('hands a run holding other characters, whole, to the caller, in its place', () => {
    const table = new AsciiWordTable((word) => `<${word}>`);
    const other = (run: string, out: string[]) => out.push(`[${run}]`);
    expect(table.words('café au lait, naïve 東京 iphone手机 x', other)).toBe(
      '[café] <au> <lait> [naïve] [東京] [iphone手机] <x>',
    );
  });

  it('analyses a repeated word once', () => {
    const seen: string[] = [];
    const table = new AsciiWordTable((word) => {
      seen.push(word);
      return word.toUpperCase();
    });
    expect(table.words('to be or not to be')).toBe('TO BE OR NOT TO BE');
    expect(table.words('not to be')).toBe('NOT TO BE');
    expect(seen).toEqual(['to', 'be', 'or', 'not']);
  });

  it('tells apart words of the same length and the same hash', () => {
    // "yaczfa" and "glbppa" have the same 32-bit FNV-1a hash: the table must compare the letters.
    const table = new AsciiWordTable((word) => `<${word}>`);
    expect(table.words('yaczfa glbppa yaczfa')).toBe('<yaczfa> <glbppa> <yaczfa>');
    expect(table.words('glbppa')).toBe('<glbppa>');
  });

  it('matches the plain split through many more distinct words than it holds', () => {
    const analyse = (word: string) => (word.length >= 3 ? porter(word) : word);
    const table = new AsciiWordTable(analyse);
    // 200,000 distinct words in texts of 1,000, each text also repeating earlier words, so that
    // lookups meet both fresh tables and full ones, and words that share a hash slot.
    for (let start = 0; start < 200_000; start += 1_000) {
      const words = distinctWords(1_000, start);
      const text = `${words.join(' running ')} ${distinctWords(50, Math.max(0, start - 25_000)).join(' ')}`;
      expect(table.words(text)).toBe(plainWords(text, analyse));
    }
  });
});

describe('the analyses of ASCII text', () => {
  it('stem and cut words as the plain analysis does', () => {
    const long = 'x'.repeat(80);
    const text =
      `Running runners ran quickly; the 2024 reports' findings, ${long} and ${long}y, ` +
      'connection connected connecting connections: v8 x86_64 i18n e-mail';
    const lower = text.toLowerCase();
    // An earlier release's analyses are the plain ones on ASCII text.
    expect(analyzer('en').words(text)).toBe(formerAnalyzer('english')!.words(text));
    expect(analyzer('none').words(text)).toBe(formerAnalyzer('legacy')!.words(text));
    expect(analyzer('en').words(text)).toContain('connect connect connect connect');
    expect(analyzer('none').words(text)).toBe(plainWords(lower, (w) => w.slice(0, 64)));
  });
});
