// The chunk writes' parameters (binary-array.ts, tsvector.ts): the tsvector literals are exactly
// those of the plain string-building definition below, whatever the words, and PostgreSQL reads
// the binary arrays back as the values written.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BinaryArray, int4Array, TEXT } from '../../../src/adapters/postgres/binary-array.js';
import { quoteLexeme, writeTsvectorLiterals } from '../../../src/adapters/postgres/tsvector.js';
import { checkServices, describeScaleOut } from '../../scale-out/services.js';

const services = await checkServices(['DATABASE_URL']);

/** The literal by definition: each word's positions (from 1, at most 16383), 256 at most per word. */
function expectedLiteral(words: string, prefix: string): string {
  if (words === '') return '';
  const positions = new Map<string, number[]>();
  words.split(' ').forEach((word, i) => {
    const position = Math.min(i + 1, 16_383);
    const list = positions.get(word) ?? [];
    if (list.length < 256 && list.at(-1) !== position) list.push(position);
    positions.set(word, list);
  });
  return [...positions].map(([word, list]) => `${quoteLexeme(prefix + word)}:${list.join(',')}`).join(' ');
}

/** The elements of a one-dimensional binary text[]. */
function decodeTextArray(bytes: Buffer): string[] {
  if (bytes.readInt32BE(0) === 0) return [];
  const out: string[] = [];
  let at = 20;
  for (let i = 0; i < bytes.readInt32BE(12); i++) {
    const length = bytes.readInt32BE(at);
    out.push(bytes.toString('utf8', at + 4, at + 4 + length));
    at += 4 + length;
  }
  return out;
}

function literalsOf(list: string[], prefix: string): { plain: string[]; prefixed: string[] } {
  // A small first buffer, so that writing grows it too.
  const plain = new BinaryArray(TEXT, 8);
  const prefixed = new BinaryArray(TEXT, 8);
  for (const words of list) writeTsvectorLiterals(words, prefix, plain, prefixed);
  return { plain: decodeTextArray(plain.finish()), prefixed: decodeTextArray(prefixed.finish()) };
}

const many = (n: number, word: (i: number) => string) =>
  Array.from({ length: n }, (_, i) => word(i)).join(' ');

const CASES = [
  '',
  'a',
  'the cat sat on the mat the end',
  "it's a back\\slash it's",
  'café naïve 東京 café 😀',
  // Empty words, as split(' ') makes them.
  ' a  b ',
  // More than 256 of one word, and positions past 16383 (kept once, at 16383).
  many(20_000, (i) => (i % 3 === 0 ? 'x' : `w${i % 500}`)),
  // Many distinct words (the scratch space grows).
  many(5_000, (i) => `word${i}`),
];

describe('writeTsvectorLiterals', () => {
  it('writes the literal of the words, and with the prefix before each word', () => {
    for (const prefix of ['1z_', "q'\\é_"]) {
      const { plain, prefixed } = literalsOf(CASES, prefix);
      expect(plain).toEqual(CASES.map((words) => expectedLiteral(words, '')));
      expect(prefixed).toEqual(CASES.map((words) => expectedLiteral(words, prefix)));
    }
  });

  it('matches the definition on random words', () => {
    const alphabet = ['a', 'b', 'ab', "'", '\\', 'é', '😀', '中', '1', ' ', ' ', ' '];
    let seed = 1;
    const random = (n: number) => {
      seed = (seed * 1_103_515_245 + 12_345) & 0x7fffffff;
      return seed % n;
    };
    const list = Array.from({ length: 300 }, () =>
      Array.from({ length: random(400) }, () => alphabet[random(alphabet.length)]).join(''),
    );
    const { plain, prefixed } = literalsOf(list, '7_');
    expect(plain).toEqual(list.map((words) => expectedLiteral(words, '')));
    expect(prefixed).toEqual(list.map((words) => expectedLiteral(words, '7_')));
  });
});

describeScaleOut('binary arrays, read by PostgreSQL', services, () => {
  let client: pg.Client;

  beforeAll(async () => {
    client = new pg.Client({ connectionString: services.urls.DATABASE_URL });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
  });

  it('reads int4[] and text[] back as written, nulls and empty arrays included', async () => {
    const texts = ['plain', '', 'quote " and \\ and , { }', 'NULL', 'café 東京 😀', 'x'.repeat(100_000)];
    const text = new BinaryArray(TEXT, 8);
    for (const value of texts) text.text(value);
    const ints = [1, null, -5, 2_147_483_647, -2_147_483_648, 0];
    const { rows } = await client.query(
      'SELECT $1::int[] AS ints, $2::text[] AS texts, $3::int[] AS no_ints, $4::text[] AS no_texts',
      [int4Array(ints), text.finish(), int4Array([]), new BinaryArray(TEXT).finish()],
    );
    expect(rows[0]).toEqual({ ints, texts, no_ints: [], no_texts: [] });
  });

  it('writes tsvector literals PostgreSQL reads as the words and their positions', async () => {
    const plain = new BinaryArray(TEXT);
    const prefixed = new BinaryArray(TEXT);
    writeTsvectorLiterals("b a it's b", '3_', plain, prefixed);
    const { rows } = await client.query(
      'SELECT v::tsvector::text AS tsv, w::tsvector::text AS terms FROM unnest($1::text[], $2::text[]) AS u(v, w)',
      [plain.finish(), prefixed.finish()],
    );
    expect(rows).toEqual([{ tsv: "'a':2 'b':1,4 'it''s':3", terms: "'3_a':2 '3_b':1,4 '3_it''s':3" }]);
  });

  it('refuses an array whose element type is not the one cast to', async () => {
    const text = new BinaryArray(TEXT);
    text.text('1');
    await expect(client.query('SELECT $1::int[]', [text.finish()])).rejects.toThrow(/element type/);
    await expect(client.query('SELECT $1::text[]', [int4Array([1])])).rejects.toThrow(/element type/);
  });
});
