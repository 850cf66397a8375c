// The scale-out vector index's prefilter, held in the API process's memory as the embedded one is
// (sqlite/sign-index.ts): each (org, profile)'s sign bits, scanned by Hamming distance on the
// scan thread, several times faster than PostgreSQL's own scan of the covering index (bit_count
// over every row, a parallel index-only scan). The exact cosine of the candidates is then computed
// in the API (vector-index.ts). Memory, by its layout (not measured): ~70 bytes a 384-d vector (48
// of bits, and the slot's document and chunk), in each API process that searches the org.
//
// The table stays the truth, shared by every node. Migration 100 stamps each written or rewritten
// row with its transaction's id and logs deleted rows with theirs. A partition remembers the
// snapshot it last read at; before each search it reads, in one statement (one snapshot), the
// rows and deletions of every transaction that snapshot did not see: those at or past its xmax
// and those then in progress. A transaction is thus read exactly once, whenever it commits, and a
// vector written or deleted through any node is seen by the next search on every node.
//
// The deletion log keeps an hour of history (its trigger drops older entries as new ones come);
// a partition that has not looked for half that long is loaded again from the table. A candidate
// whose row has gone meanwhile simply finds nothing when the cosine reads it.
import { ByteBudgetLru, DEFAULT_PREFILTER_MAX_BYTES } from '../sign-scan/byte-budget-lru.js';
import { THREAD_MIN_SLOTS } from '../sign-scan/scan.js';
import { fitted, SignSlots } from '../sign-scan/slots.js';
import type { PgDatabase } from './database.js';

/** How long deletions stay in the log (migration 100's trigger); a partition idle for half of it reloads. */
const LOG_RETENTION_MS = 60 * 60_000;
/** More changes than this since a partition's last read: it is read whole again instead. */
const MAX_CHANGES = 50_000;
/** Rows per fetch while a partition loads (one cursor, one REPEATABLE READ snapshot). */
const LOAD_PAGE = 50_000;

/** One bit per dimension, set where the value is positive, in varbit_send's order (first bit high). */
export function signBytesMsbFirst(vector: Float32Array): Uint8Array {
  const bytes = new Uint8Array(Math.ceil(vector.length / 8));
  for (let j = 0; j < vector.length; j++) {
    if (vector[j]! > 0) bytes[j >> 3]! |= 0x80 >> (j & 7);
  }
  return bytes;
}

/** What a snapshot (pg_current_snapshot()) had not seen: transactions ≥ xmax, and those in progress. */
interface Seen {
  xmax: string;
  inProgress: string[];
}

function parseSnapshot(text: string): Seen {
  const [, xmax, xip] = text.split(':');
  return { xmax: xmax!, inProgress: xip ? xip.split(',') : [] };
}

export interface ChunkKey {
  documentId: string;
  chunkIndex: number;
}

class Partition {
  readonly slots: SignSlots;
  private docOf: string[] = [];
  private chunkOf = new Int32Array(0);
  /** Live slots of each document, and one string of its id that every slot of it shares. */
  private readonly byDoc = new Map<string, { id: string; slots: number[] }>();
  seen: Seen = { xmax: '0', inProgress: [] };
  /** The database's clock at the last read, ms. */
  readAt = 0;

  constructor(stride: number) {
    this.slots = new SignSlots(stride);
  }

  /**
   * Estimated from the layout: the bits, each slot's chunk number and document reference, and
   * each document's entry (its id string is shared by its slots) with its list of slots.
   */
  get bytes(): number {
    return this.slots.bytes + this.chunkOf.byteLength + this.docOf.length * 8 + this.byDoc.size * 120;
  }

  /** A vector written or rewritten: its older slot, if any, dies (`fresh`: it has none). */
  put(documentId: string, chunkIndex: number, signs: Uint8Array, fresh = false): void {
    if (!fresh) this.drop(documentId, chunkIndex);
    let live = this.byDoc.get(documentId);
    if (live === undefined) {
      live = { id: documentId, slots: [] };
      this.byDoc.set(documentId, live);
    }
    const slot = this.slots.append(signs);
    this.chunkOf = fitted(this.chunkOf, this.slots.capacity, (n) => new Int32Array(n));
    this.docOf[slot] = live.id;
    this.chunkOf[slot] = chunkIndex;
    live.slots.push(slot);
  }

  drop(documentId: string, chunkIndex: number): void {
    const live = this.byDoc.get(documentId);
    if (live === undefined) return;
    const at = live.slots.findIndex((slot) => this.chunkOf[slot] === chunkIndex);
    if (at < 0) return;
    this.slots.kill(live.slots[at]!);
    live.slots.splice(at, 1);
    if (live.slots.length === 0) this.byDoc.delete(documentId);
  }

  async nearest(query: Uint8Array, count: number, threadMinSlots: number): Promise<ChunkKey[]> {
    const slots = await this.slots.nearest(query, count, threadMinSlots);
    return Array.from(slots, (slot) => ({ documentId: this.docOf[slot]!, chunkIndex: this.chunkOf[slot]! }));
  }
}

/** Per partition: the read under way, and the one queued behind it. */
interface Reads {
  running: Promise<Partition> | null;
  queued: Promise<Partition> | null;
}

interface SignRow {
  gone: boolean | null;
  document_id: string | null;
  chunk_index: number | null;
  signs: Buffer | null;
  snapshot: string | null;
  now_ms: string | null;
}

export class PgSignIndex {
  private readonly partitions: ByteBudgetLru<Partition>;
  private readonly reads = new Map<string, Reads>();
  private readonly vectors: string;
  private readonly gone: string;

  constructor(
    private readonly db: PgDatabase,
    private readonly threadMinSlots = THREAD_MIN_SLOTS,
    private readonly maxChanges = MAX_CHANGES,
    maxBytes = DEFAULT_PREFILTER_MAX_BYTES,
  ) {
    this.partitions = new ByteBudgetLru(maxBytes);
    this.vectors = db.table('chunk_vectors');
    this.gone = db.table('chunk_vectors_gone');
  }

  /**
   * The `count` chunks of the org and profile whose sign bits are nearest to the query's; null
   * when the org has no more vectors than that (rank them all exactly).
   */
  async candidates(
    orgId: string,
    profileId: number,
    vector: Float32Array,
    count: number,
  ): Promise<ChunkKey[] | null> {
    const partition = await this.current(orgId, profileId, Math.ceil(vector.length / 32));
    if (partition.slots.live <= count) return null;
    return partition.nearest(signBytesMsbFirst(vector), count, this.threadMinSlots);
  }

  /** The partition as of a read that started after this call: a write committed before it is in. */
  private current(orgId: string, profileId: number, stride: number): Promise<Partition> {
    const key = `${orgId}\u0000${profileId}`;
    let reads = this.reads.get(key);
    if (reads === undefined) {
      reads = { running: null, queued: null };
      this.reads.set(key, reads);
    }
    const state = reads;
    const start = (): Promise<Partition> => {
      const running: Promise<Partition> = this.read(key, orgId, profileId, stride).finally(() => {
        if (state.running === running) state.running = null;
      });
      state.running = running;
      return running;
    };
    if (state.running === null) return start();
    // The read under way may have taken its snapshot before this search's own writes: one more
    // read follows it, shared by every search that arrives meanwhile.
    state.queued ??= state.running
      .catch(() => undefined)
      .then(() => {
        state.queued = null;
        return start();
      });
    return state.queued;
  }

  private async read(key: string, orgId: string, profileId: number, stride: number): Promise<Partition> {
    let partition = this.partitions.get(key);
    if (partition && (partition.slots.stride !== stride || partition.slots.wasteful)) partition = undefined;
    if (partition) {
      const nowMs = await this.readChanges(partition, orgId, profileId);
      if (nowMs !== null && nowMs - partition.readAt <= LOG_RETENTION_MS / 2) {
        partition.readAt = nowMs;
        this.partitions.use(key, partition);
        return partition;
      }
      // Too much changed to read as changes, or idle so long that the log may have lost
      // deletions it has not seen: read it all again.
    }
    partition = await this.load(orgId, profileId, stride);
    this.partitions.use(key, partition);
    return partition;
  }

  /** The partitions held and their bytes (sign-scan/byte-budget-lru.ts). */
  held(): { keys: string[]; bytes: number } {
    return this.partitions.summary();
  }

  /**
   * Applies what changed since the partition's last read; returns the database's clock, ms, or
   * null (the partition untouched) when more changed than `maxChanges`: a bulk load since, which a
   * paged read of the whole partition takes in less memory than one answer of every change.
   */
  private async readChanges(partition: Partition, orgId: string, profileId: number): Promise<number | null> {
    const { xmax, inProgress } = partition.seen;
    const unseen = `(tx >= $3::xid8 OR tx = ANY($4::xid8[]))`;
    const { rows } = await this.db.query<SignRow>(
      `(SELECT false AS gone, document_id, chunk_index, substring(varbit_send(signs) FROM 5) AS signs,
               NULL AS snapshot, NULL AS now_ms
        FROM ${this.vectors} WHERE org_id = $1 AND profile_id = $2 AND tx IS NOT NULL AND ${unseen}
        LIMIT $5)
       UNION ALL
       (SELECT true, document_id, chunk_index, NULL, NULL, NULL
        FROM ${this.gone} WHERE org_id = $1 AND profile_id = $2 AND ${unseen}
        LIMIT $5)
       UNION ALL
       SELECT NULL, NULL, NULL, NULL, pg_current_snapshot()::text, (extract(epoch FROM now()) * 1000)::bigint::text`,
      [orgId, profileId, xmax, `{${inProgress.join(',')}}`, this.maxChanges + 1],
    );
    let added = 0;
    let gone = 0;
    for (const r of rows) {
      if (r.gone === false) added++;
      else if (r.gone === true) gone++;
    }
    if (added > this.maxChanges || gone > this.maxChanges) return null;
    let nowMs = 0;
    // Deletions first: a row deleted and written again since the last read is then live.
    for (const r of rows) if (r.gone === true) partition.drop(r.document_id!, r.chunk_index!);
    for (const r of rows) {
      if (r.gone === false) partition.put(r.document_id!, r.chunk_index!, r.signs!);
      else if (r.snapshot !== null) {
        partition.seen = parseSnapshot(r.snapshot);
        nowMs = Number(r.now_ms);
      }
    }
    return nowMs;
  }

  /** Every vector of the org and profile, read in pages within one snapshot. */
  private async load(orgId: string, profileId: number, stride: number): Promise<Partition> {
    const partition = new Partition(stride);
    await this.db.transaction(async (tx) => {
      await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
      const head = await tx.query<{ snapshot: string; now_ms: string }>(
        `SELECT pg_current_snapshot()::text AS snapshot, (extract(epoch FROM now()) * 1000)::bigint::text AS now_ms`,
      );
      partition.seen = parseSnapshot(head.rows[0]!.snapshot);
      partition.readAt = Number(head.rows[0]!.now_ms);
      await tx.query(
        `DECLARE signs NO SCROLL CURSOR FOR
           SELECT document_id, chunk_index, substring(varbit_send(signs) FROM 5) AS signs
           FROM ${this.vectors} WHERE org_id = $1 AND profile_id = $2`,
        [orgId, profileId],
      );
      for (;;) {
        const { rows } = await tx.query<SignRow>(`FETCH ${LOAD_PAGE} FROM signs`);
        for (const r of rows) partition.put(r.document_id!, r.chunk_index!, r.signs!, true);
        if (rows.length < LOAD_PAGE) break;
      }
    });
    return partition;
  }
}
