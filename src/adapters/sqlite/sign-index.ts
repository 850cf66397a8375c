// The embedded vector index's prefilter: each (org, profile)'s sign bits held in this process's
// memory (48 bytes a 384-d vector), compared by Hamming distance in a tight loop, to pick the
// candidates the exact cosine then ranks in SQL. Scanning the same bits inside SQLite costs a
// function call and a row decode per vector, and sqlite-vec's vec0 KNN over a bit column was
// slower still; the loop (sign-scan/scan.ts, on a thread of its own for big partitions) does
// neither. Memory: 56 bytes a 384-d vector.
//
// The table stays the truth. Rows only ever get a larger id (AUTOINCREMENT), so a query first reads
// the rows added since this process last looked, and the deletions logged since (chunk_vectors_gone,
// written by a trigger): a vector written or deleted by any process is seen by the next query here.
// A candidate whose row has gone meanwhile simply finds nothing when it is re-read. The log keeps
// the newest 100,000 deletions (database.ts, migration 90); a partition that has not looked since
// older ones were dropped is rebuilt from the table.

import { ByteBudgetLru, DEFAULT_PREFILTER_MAX_BYTES } from '../sign-scan/byte-budget-lru.js';
import { THREAD_MIN_SLOTS } from '../sign-scan/scan.js';
import { fitted, SignSlots } from '../sign-scan/slots.js';
import type { Database } from './database.js';
import { StatementCache } from './statements.js';

/** One bit per dimension, set where the value is positive; bit j is bit (j mod 8) of byte ⌊j/8⌋. */
export function signBytes(vector: Float32Array): Buffer {
  const bytes = Buffer.alloc(Math.ceil(vector.length / 8));
  for (let j = 0; j < vector.length; j++) {
    if (vector[j]! > 0) bytes[j >> 3]! |= 1 << (j & 7);
  }
  return bytes;
}

class Partition {
  readonly slots: SignSlots;
  /** Row id of each slot, ascending (rows are appended in id order). */
  private ids = new Float64Array(0);
  /** Largest row id and deletion-log seq read so far. */
  lastId = 0;
  lastGone = 0;

  constructor(stride: number) {
    this.slots = new SignSlots(stride);
  }

  get bytes(): number {
    return this.slots.bytes + this.ids.byteLength;
  }

  append(id: number, signs: Uint8Array): void {
    const slot = this.slots.append(signs);
    this.ids = fitted(this.ids, this.slots.capacity, (n) => new Float64Array(n));
    this.ids[slot] = id;
    this.lastId = id;
  }

  remove(id: number): void {
    let lo = 0;
    let hi = this.slots.size - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const at = this.ids[mid]!;
      if (at === id) {
        this.slots.kill(mid);
        return;
      }
      if (at < id) lo = mid + 1;
      else hi = mid - 1;
    }
  }

  /** Row ids of the `count` live slots nearest to `query` (ties broken by slot order). */
  async nearest(query: Uint8Array, count: number, threadMinSlots: number): Promise<number[]> {
    const slots = await this.slots.nearest(query, count, threadMinSlots);
    // Slots only ever get appended (a rebuild makes a new partition), so each still holds its row.
    return Array.from(slots, (slot) => this.ids[slot]!);
  }
}

export class SignIndex {
  private readonly partitions: ByteBudgetLru<Partition>;
  private readonly sql: StatementCache;

  constructor(
    private readonly db: Database,
    private readonly threadMinSlots = THREAD_MIN_SLOTS,
    maxBytes = DEFAULT_PREFILTER_MAX_BYTES,
  ) {
    this.sql = new StatementCache(db);
    this.partitions = new ByteBudgetLru(maxBytes);
  }

  /** The partitions held and their bytes (sign-scan/byte-budget-lru.ts). */
  held(): { keys: string[]; bytes: number } {
    return this.partitions.summary();
  }

  /**
   * Row ids of chunk_vectors of the org and profile whose sign bits are nearest to the query's,
   * `count` of them; null when the partition holds no more rows than that (rank them all exactly).
   */
  async candidates(
    orgId: string,
    profileId: number,
    vector: Float32Array,
    count: number,
  ): Promise<number[] | null> {
    const stride = Math.ceil(vector.length / 32);
    const key = `${orgId}\u0000${profileId}`;
    let partition = this.partitions.get(key);
    if (partition && partition.slots.stride !== stride) partition = undefined;
    // One read transaction: the added rows and the deletion log come from the same snapshot.
    partition = this.db.transaction(() => this.refresh(orgId, profileId, partition ?? null, stride))();
    this.partitions.use(key, partition);
    if (partition.slots.live <= count) return null;
    return partition.nearest(signBytes(vector), count, this.threadMinSlots);
  }

  private refresh(orgId: string, profileId: number, known: Partition | null, stride: number): Partition {
    const log = this.sql
      .get<[], { first: number | null; last: number | null }>(
        'SELECT min(seq) AS first, max(seq) AS last FROM chunk_vectors_gone',
      )
      .get();
    let partition = known;
    // Too much of it is dead weight (rebuilding is cheaper than skipping dead slots on every
    // query), or deletions it has not seen have left the log.
    if (
      partition !== null &&
      (partition.slots.wasteful || (log?.first != null && log.first > partition.lastGone + 1))
    ) {
      partition = null;
    }
    if (partition === null) {
      partition = new Partition(stride);
      partition.lastGone = log?.last ?? 0;
    } else {
      // Every org's deletions: an id that is not this partition's is simply not found in it.
      const gone = this.sql
        .get<[number], { seq: number; vector_id: number }>(
          'SELECT seq, vector_id FROM chunk_vectors_gone WHERE seq > ? ORDER BY seq',
        )
        .all(partition.lastGone);
      for (const g of gone) {
        partition.remove(g.vector_id);
        partition.lastGone = g.seq;
      }
    }
    const added = this.sql
      .get<[string, number, number], { id: number; signs: Buffer | null }>(
        `SELECT id, signs FROM chunk_vectors
         WHERE org_id = ? AND profile_id = ? AND id > ? ORDER BY id`,
      )
      .iterate(orgId, profileId, partition.lastId);
    for (const row of added) {
      // Unsigned rows predate migration 90 and are signed when the index opens; skip, never guess.
      if (row.signs !== null) partition.append(row.id, row.signs);
    }
    return partition;
  }
}
