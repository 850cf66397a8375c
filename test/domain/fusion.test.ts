// Weighted reciprocal rank fusion on small lists worked out by hand.
import { describe, expect, it } from 'vitest';
import { capPerGroup, fuseRanks } from '../../src/domain/fusion.js';

describe('fuseRanks', () => {
  it('adds w/(60 + rank) of each list the chunk is in, best fused score first', () => {
    // keyword: a b c; semantic: c a d. With w = 0.5:
    // a = .5/61 + .5/62, c = .5/63 + .5/61, b = .5/62, d = .5/63.
    const fused = fuseRanks(['a', 'b', 'c'], ['c', 'a', 'd'], 0.5);
    expect(fused.map((f) => f.key)).toEqual(['a', 'c', 'b', 'd']);
    expect(fused[0]!.score).toBeCloseTo(0.5 / 61 + 0.5 / 62, 12);
    expect(fused[1]!.score).toBeCloseTo(0.5 / 63 + 0.5 / 61, 12);
    expect(fused.find((f) => f.key === 'd')).toMatchObject({ keywordRank: null, semanticRank: 3 });
    expect(fused.find((f) => f.key === 'b')).toMatchObject({ keywordRank: 2, semanticRank: null });
  });

  it('the weight moves the order towards one list; 0 and 1 give that list alone', () => {
    const keyword = ['k1', 'k2', 'both'];
    const semantic = ['s1', 'both', 's2'];
    // w = 0.9: both = .1/63 + .9/62 ≈ .01610 > s1 = .9/61 ≈ .01475 > s2 = .9/63 > k1 = .1/61.
    expect(fuseRanks(keyword, semantic, 0.9).map((f) => f.key)).toEqual(['both', 's1', 's2', 'k1', 'k2']);
    // w = 0.1: both = .9/63 + .1/62 ≈ .01590 > k1 = .9/61 ≈ .01475 > k2 = .9/62 > s1 = .1/61.
    expect(fuseRanks(keyword, semantic, 0.1).map((f) => f.key)).toEqual(['both', 'k1', 'k2', 's1', 's2']);
    expect(
      fuseRanks(keyword, semantic, 1)
        .slice(0, 3)
        .map((f) => f.key),
    ).toEqual(['s1', 'both', 's2']);
    expect(
      fuseRanks(keyword, semantic, 0)
        .slice(0, 3)
        .map((f) => f.key),
    ).toEqual(['k1', 'k2', 'both']);
  });

  it('a chunk in both lists beats one first in a single list at the default weight', () => {
    expect(fuseRanks(['solo', 'x', 'shared'], ['y', 'shared'], 0.5)[0]!.key).toBe('shared');
  });

  it('breaks equal scores by the better single rank, then by key', () => {
    expect(fuseRanks(['b'], ['a'], 0.5).map((f) => f.key)).toEqual(['a', 'b']);
  });
});

describe('capPerGroup', () => {
  it('keeps the first n of each group, in order', () => {
    const items = ['a1', 'b1', 'a2', 'a3', 'b2', 'c1'];
    expect(capPerGroup(items, (x) => x[0]!, 2)).toEqual(['a1', 'b1', 'a2', 'b2', 'c1']);
    expect(capPerGroup(items, (x) => x[0]!, 1)).toEqual(['a1', 'b1', 'c1']);
  });
});
