// The sign-bit partitions one process holds, for both vector indexes: every partition a search
// used is kept for the next, until their bytes together pass the budget
// (VECTOR_PREFILTER_MAX_MB); then the least recently searched are let go. One let go is read again
// from the table at its org's next semantic search, which waits for that read (every row of the
// org and profile: a big org's first search after it takes longer, as after a restart).

/** What a partition reports of itself: its bytes, estimated from its arrays' lengths. */
export interface Sized {
  readonly bytes: number;
}

export class ByteBudgetLru<P extends Sized> {
  /** In order of last use, the least recent first (a Map keeps insertion order). */
  private readonly held = new Map<string, P>();

  constructor(private readonly maxBytes: number) {}

  get(key: string): P | undefined {
    return this.held.get(key);
  }

  /**
   * `partition` was just searched (or read) under `key`: it becomes the most recent, and the least
   * recent others go while the total is over the budget. It is kept even when alone over budget:
   * the search needs it, and holding it costs nothing a search would not.
   */
  use(key: string, partition: P): void {
    this.held.delete(key);
    this.held.set(key, partition);
    let total = 0;
    for (const held of this.held.values()) total += held.bytes;
    for (const [other, held] of this.held) {
      if (total <= this.maxBytes) break;
      if (other === key) continue;
      this.held.delete(other);
      total -= held.bytes;
    }
  }

  /** The keys held, the least recently used first, and their bytes: for tests and operators. */
  summary(): { keys: string[]; bytes: number } {
    let bytes = 0;
    for (const held of this.held.values()) bytes += held.bytes;
    return { keys: [...this.held.keys()], bytes };
  }
}

/** Default budget: ~15–19M 384-d vectors' sign bits in one process. */
export const DEFAULT_PREFILTER_MAX_BYTES = 1024 * 1024 * 1024;
