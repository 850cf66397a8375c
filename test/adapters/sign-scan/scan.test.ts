// The sign index's Hamming scan: the nearest slots by sign bits, the same whether it runs inline
// or on the scan thread, over bits that keep changing in shared memory between scans.
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../../bench/lib.js';
import { nearestSlots, scanNearest } from '../../../src/adapters/sign-scan/scan.js';

const STRIDE = 12;

function sharedBits(slots: number, random: () => number) {
  const words = new Uint32Array(new SharedArrayBuffer(slots * STRIDE * 4));
  for (let i = 0; i < words.length; i++) words[i] = Math.floor(random() * 2 ** 32);
  const dead = new Uint8Array(new SharedArrayBuffer(slots));
  return { words, dead };
}

function hamming(words: Uint32Array, slot: number, query: Uint32Array): number {
  let d = 0;
  for (let w = 0; w < STRIDE; w++) {
    let x = words[slot * STRIDE + w]! ^ query[w]!;
    while (x !== 0) {
      d += x & 1;
      x >>>= 1;
    }
  }
  return d;
}

/** By sorting: live slots by distance, ties by slot, the first `count`, back in slot order. */
function expected(words: Uint32Array, dead: Uint8Array, size: number, query: Uint32Array, count: number) {
  return Array.from({ length: size }, (_, slot) => slot)
    .filter((slot) => dead[slot] === 0)
    .map((slot) => ({ slot, d: hamming(words, slot, query) }))
    .sort((a, b) => a.d - b.d || a.slot - b.slot)
    .slice(0, count)
    .map((x) => x.slot)
    .sort((a, b) => a - b);
}

describe('sign scan', () => {
  it('picks the nearest live slots, ties broken by slot order', () => {
    const random = seededRandom(3);
    const { words, dead } = sharedBits(500, random);
    for (let slot = 0; slot < 500; slot += 7) dead[slot] = 1;
    const query = Uint32Array.from({ length: STRIDE }, () => Math.floor(random() * 2 ** 32));
    // A query equal to a dead slot's bits must not find that slot.
    query.set(words.subarray(14 * STRIDE, 15 * STRIDE));
    const slots = Array.from(nearestSlots(words, dead, 500, STRIDE, query, 25));
    expect(slots).toEqual(expected(words, dead, 500, query, 25));
    expect(slots).not.toContain(14);
    expect(nearestSlots(words, dead, 10, STRIDE, query, 25)).toHaveLength(8); // slots 0 and 7 are dead
  });

  it('answers the same on the scan thread, and sees bits and deletions changed since the last scan', async () => {
    const size = 30_000;
    const random = seededRandom(5);
    const { words, dead } = sharedBits(size, random);
    const query = Uint32Array.from({ length: STRIDE }, () => Math.floor(random() * 2 ** 32));
    const scan = () => scanNearest({ words, dead, size, stride: STRIDE, query, count: 100 }, 0);
    const first = Array.from(await scan());
    expect(first).toEqual(expected(words, dead, size, query, 100));
    // The nearest slot dies; a far one takes the query's own bits.
    dead[first[0]!] = 1;
    words.set(query, 29_999 * STRIDE);
    const second = Array.from(await scan());
    expect(second).toContain(29_999);
    expect(second).not.toContain(first[0]);
    expect(second).toEqual(expected(words, dead, size, query, 100));
    // Concurrent scans each get their own answer.
    const queries = Array.from({ length: 4 }, () =>
      Uint32Array.from({ length: STRIDE }, () => Math.floor(random() * 2 ** 32)),
    );
    const answers = await Promise.all(
      queries.map((q) => scanNearest({ words, dead, size, stride: STRIDE, query: q, count: 10 }, 0)),
    );
    answers.forEach((a, i) => {
      expect(Array.from(a)).toEqual(expected(words, dead, size, queries[i]!, 10));
    });
  });
});
