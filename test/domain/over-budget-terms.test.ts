// The memo of terms found over the search row budget (domain/search-plan.ts): what it remembers,
// for how long, and what it never remembers.
import { describe, expect, it } from 'vitest';
import { OverBudgetTerms } from '../../src/domain/search-plan.js';

describe('OverBudgetTerms', () => {
  it('remembers a term until its time is up, then counts it again', () => {
    const memo = new OverBudgetTerms(60_000);
    memo.add('o1 the', 1_000);
    expect(memo.has('o1 the', 1_000)).toBe(true);
    expect(memo.has('o1 the', 60_999)).toBe(true);
    expect(memo.has('o1 the', 61_000)).toBe(false);
    // Forgotten for good once seen expired.
    expect(memo.has('o1 the', 2_000)).toBe(false);
  });

  it('keeps each org’s terms apart (the key names the org)', () => {
    const memo = new OverBudgetTerms(60_000);
    memo.add('o1 the', 0);
    expect(memo.has('o2 the', 0)).toBe(false);
  });

  it('remembers nothing with a time of 0', () => {
    const memo = new OverBudgetTerms(0);
    memo.add('o1 the', 0);
    expect(memo.has('o1 the', 0)).toBe(false);
  });

  it('starts afresh when full instead of growing without bound', () => {
    const memo = new OverBudgetTerms(60_000, 3);
    for (const term of ['a', 'b', 'c']) memo.add(term, 0);
    expect(['a', 'b', 'c'].every((t) => memo.has(t, 0))).toBe(true);
    memo.add('d', 0);
    expect(memo.has('d', 0)).toBe(true);
    expect(['a', 'b', 'c'].some((t) => memo.has(t, 0))).toBe(false);
  });
});
