// The sign bits of one (org, profile)'s vectors, held in this process's memory for the Hamming
// prefilter of both vector indexes (sqlite/sign-index.ts, postgres/sign-index.ts). A vector takes
// one slot, appended; a deleted or replaced one is marked dead and stays until its owner rebuilds
// the whole set. The bits sit in SharedArrayBuffers, which the scan thread reads in place.
import { scanNearest } from './scan.js';

/** An owner rebuilds its slots once this share of them are dead. */
export const REBUILD_DEAD_SHARE = 0.25;

export class SignSlots {
  /** Sign bits, `stride` 32-bit words per slot. */
  private words = new Uint32Array(new SharedArrayBuffer(0));
  /** 1 for a dead slot. */
  private dead = new Uint8Array(new SharedArrayBuffer(0));
  size = 0;
  deadCount = 0;

  constructor(readonly stride: number) {}

  get live(): number {
    return this.size - this.deadCount;
  }

  get capacity(): number {
    return this.dead.length;
  }

  /** Bytes of the bits and the dead flags, as allocated (capacity, not size). */
  get bytes(): number {
    return this.capacity * (this.stride * 4 + 1);
  }

  /** Whether enough of the slots are dead that a rebuild pays. */
  get wasteful(): boolean {
    return this.deadCount > this.size * REBUILD_DEAD_SHARE;
  }

  /** Appends a vector's sign bits (at most `stride` × 4 bytes are read); returns its slot. */
  append(signs: Uint8Array): number {
    if (this.size === this.capacity) this.grow(Math.max(1024, this.size * 2));
    const slot = this.size++;
    const bytes = new Uint8Array(this.words.buffer, slot * this.stride * 4, this.stride * 4);
    bytes.fill(0);
    bytes.set(signs.subarray(0, this.stride * 4));
    return slot;
  }

  kill(slot: number): void {
    if (slot >= this.size || this.dead[slot] === 1) return;
    this.dead[slot] = 1;
    this.deadCount++;
  }

  /**
   * The `count` live slots nearest to `query` (packed as the appended bits were), ties broken by
   * slot order. Slots appended while the scan runs are not considered.
   */
  nearest(query: Uint8Array, count: number, threadMinSlots: number): Promise<Uint32Array> {
    const words = new Uint32Array(this.stride);
    new Uint8Array(words.buffer).set(query.subarray(0, this.stride * 4));
    const { dead, size, stride } = this;
    return scanNearest({ words: this.words, dead, size, stride, query: words, count }, threadMinSlots);
  }

  private grow(capacity: number): void {
    // New buffers: a scan still running on the thread keeps reading the old ones.
    const words = new Uint32Array(new SharedArrayBuffer(capacity * this.stride * 4));
    words.set(this.words.subarray(0, this.size * this.stride));
    const dead = new Uint8Array(new SharedArrayBuffer(capacity));
    dead.set(this.dead.subarray(0, this.size));
    this.words = words;
    this.dead = dead;
  }
}

/** A per-slot array grown alongside a SignSlots (same capacity), its values kept. */
export function fitted<T extends Float64Array | Int32Array>(
  array: T,
  capacity: number,
  make: (n: number) => T,
): T {
  if (array.length >= capacity) return array;
  const bigger = make(capacity);
  bigger.set(array);
  return bigger;
}
