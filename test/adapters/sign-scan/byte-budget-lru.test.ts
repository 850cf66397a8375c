// The prefilter's memory budget: partitions searched least recently are let go first, and the one
// a search is using never is.
import { describe, expect, it } from 'vitest';
import { ByteBudgetLru } from '../../../src/adapters/sign-scan/byte-budget-lru.js';

const sized = (bytes: number) => ({ bytes });

describe('ByteBudgetLru', () => {
  it('lets the least recently used go once the total passes the budget', () => {
    const held = new ByteBudgetLru(300);
    held.use('a', sized(100));
    held.use('b', sized(100));
    held.use('c', sized(100));
    expect(held.summary()).toEqual({ keys: ['a', 'b', 'c'], bytes: 300 });
    held.use('a', held.get('a')!); // a searched again: b is now the least recent
    held.use('d', sized(100));
    expect(held.summary()).toEqual({ keys: ['c', 'a', 'd'], bytes: 300 });
    expect(held.get('b')).toBeUndefined();
  });

  it('keeps the partition in use even alone over the budget, and lets go as many as needed for it', () => {
    const held = new ByteBudgetLru(250);
    held.use('a', sized(100));
    held.use('b', sized(100));
    held.use('big', sized(1_000));
    expect(held.summary()).toEqual({ keys: ['big'], bytes: 1_000 });
    // A partition that grew is counted at its new size when next used.
    const grown = { bytes: 100 };
    held.use('x', grown);
    expect(held.summary().keys).toEqual(['x']);
    held.use('y', sized(100));
    grown.bytes = 200;
    held.use('y', held.get('y')!);
    expect(held.summary()).toEqual({ keys: ['y'], bytes: 100 });
  });
});
