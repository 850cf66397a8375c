// The filter language's parser and reference evaluator (domain/filter.ts): what a filter means,
// independent of any store. The stores are held to the evaluator in test/contract/filter.contract.ts.
import { describe, expect, it } from 'vitest';
import { compareCodePoints, evaluate, parseFilter } from '../../src/domain/filter.js';

const parse = (json: unknown) => parseFilter(json, '/filter');

describe('parseFilter', () => {
  it('reads {} as no filter, and today’s forms as $eq and $in', () => {
    expect(parse({})).toBeNull();
    expect(parse({ lang: 'en' })).toEqual({ kind: 'compare', op: '$eq', key: 'lang', value: 'en' });
    expect(parse({ lang: ['en', 'de'] })).toEqual({
      kind: 'list',
      op: '$in',
      key: 'lang',
      values: ['en', 'de'],
    });
  });

  it('joins several entries, and several operators of one key, with AND', () => {
    expect(parse({ year: { $gte: '2020', $lt: '2022' }, lang: 'en' })).toEqual({
      kind: 'and',
      filters: [
        { kind: 'compare', op: '$gte', key: 'year', value: '2020' },
        { kind: 'compare', op: '$lt', key: 'year', value: '2022' },
        { kind: 'compare', op: '$eq', key: 'lang', value: 'en' },
      ],
    });
  });

  it('reads a key starting with $ other than $and, $or, $not as a metadata key', () => {
    expect(parse({ $root: 'x' })).toEqual({ kind: 'compare', op: '$eq', key: '$root', value: 'x' });
  });

  it('takes keys and values in the stores’ canonical form', () => {
    expect(parse({ k: 'a\u0000b\uD800' })).toEqual({
      kind: 'compare',
      op: '$eq',
      key: 'k',
      value: 'ab\uFFFD',
    });
  });

  it('accepts 5 levels and 100 conditions, and refuses one more of either', () => {
    const nest = (levels: number): unknown => (levels === 1 ? { k: 'v' } : { $not: nest(levels - 1) });
    expect(() => parse(nest(5))).not.toThrow();
    expect(() => parse(nest(6))).toThrow(/at \/filter\/\$not\/\$not\/\$not\/\$not\/\$not: /);
    const conditions = (n: number) => ({ $and: Array.from({ length: n }, (_, i) => ({ [`k${i}`]: 'v' })) });
    expect(() => parse(conditions(100))).not.toThrow();
    expect(() => parse(conditions(101))).toThrow(/at \/filter\/\$and\/100\/k100: .*100 conditions/);
  });
});

describe('evaluate', () => {
  const doc = { year: '2021-06-01', lang: 'en' };
  const passes = (json: unknown, metadata: Record<string, string> = doc) => evaluate(parse(json), metadata);

  it('is false for a comparison or $in on a missing key, so $ne, $nin and $not pass it', () => {
    for (const op of ['$eq', '$gt', '$gte', '$lt', '$lte'])
      expect(passes({ tag: { [op]: 'a' } }), op).toBe(false);
    expect(passes({ tag: { $in: ['a'] } })).toBe(false);
    expect(passes({ tag: { $ne: 'a' } })).toBe(true);
    expect(passes({ tag: { $nin: ['a'] } })).toBe(true);
    expect(passes({ $not: { tag: { $gt: 'a' } } })).toBe(true);
    expect(passes({ tag: { $exists: false } })).toBe(true);
  });

  it('orders ISO-8601 dates, and strings by code point rather than UTF-16 unit', () => {
    expect(passes({ year: { $gt: '2021-05-31T23:59:59Z', $lt: '2021-06-02' } })).toBe(true);
    expect(compareCodePoints('\uFF21', '😀')).toBe(-1);
    expect('\uFF21' < '😀').toBe(false);
    expect(compareCodePoints('😀', '😀a')).toBe(-1);
    expect(compareCodePoints('a', 'a')).toBe(0);
    expect(passes({ name: { $gt: '\uFF21' } }, { name: '😀' })).toBe(true);
  });
});
