import { describe, expect, it } from 'vitest';
import { GarbageBound } from '../../src/pipeline/extract/garbage-bound.js';

const MiB = 1024 * 1024;

/** A heap whose use the test sets, and whose collection keeps `survivors` bytes. */
function fakeHeap(survivors: number) {
  const heap = { used: survivors, collections: 0 };
  return {
    heap,
    heapUsed: () => heap.used,
    collect: () => {
      heap.collections++;
      heap.used = survivors;
    },
  };
}

describe('GarbageBound', () => {
  it('collects only once the heap has grown its budget past the last collection', () => {
    const { heap, heapUsed, collect } = fakeHeap(20 * MiB);
    const bound = new GarbageBound({ heapUsed, collect, budgetBytes: 32 * MiB });
    heap.used = 51 * MiB;
    bound.check();
    expect(heap.collections).toBe(0);
    heap.used = 53 * MiB;
    bound.check();
    expect(heap.collections).toBe(1);
    expect(bound.collections).toBe(1);
    // Measured from what the collection kept, not from where the heap started.
    heap.used = 40 * MiB;
    bound.check();
    expect(heap.collections).toBe(1);
  });

  it('counts from what survived when survivors grow', () => {
    const heap = { used: 10 * MiB, kept: 10 * MiB, collections: 0 };
    const bound = new GarbageBound({
      heapUsed: () => heap.used,
      collect: () => {
        heap.collections++;
        heap.used = heap.kept;
      },
      budgetBytes: 8 * MiB,
    });
    heap.kept = 30 * MiB;
    heap.used = 40 * MiB;
    bound.check();
    expect(heap.collections).toBe(1);
    heap.used = 37 * MiB;
    bound.check();
    expect(heap.collections).toBe(1);
    heap.used = 39 * MiB;
    bound.check();
    expect(heap.collections).toBe(2);
  });

  it('does nothing where no collector is exposed (a thread)', () => {
    let reads = 0;
    const bound = new GarbageBound({ heapUsed: () => ++reads * 100 * MiB, collect: undefined });
    bound.check();
    bound.check();
    expect(bound.collections).toBe(0);
  });
});
