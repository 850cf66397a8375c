// BlobStore in PostgreSQL (BLOB_STORE=postgres, the scale-out default): files live in the same
// database as the records, so API and worker processes share nothing but PostgreSQL (and Redis).
// A blob is a `blobs` row plus `blob_chunks` rows of CHUNK_BYTES each. Bytes are written chunk by
// chunk as the upload streams in (binary parameters, the source paused while a write is pending)
// and read back a chunk per query in small pieces, so no process holds a whole file in memory,
// and neither holds a connection for longer than one statement.
import type { Readable } from 'node:stream';
import { Readable as ReadableStream } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BlobNotFoundError, type BlobStore, type BlobWrite } from '../../domain/ports.js';
import { ByteLimit } from '../blob/byte-limit.js';
import { withLocalCopy } from '../blob/local-copy.js';
import type { PgDatabase } from './database.js';

/** Size of one chunk row: large enough that a 100 MB file is 100 rows, small enough to stream. */
export const CHUNK_BYTES = 1024 * 1024;
/**
 * Chunk rows read per query: 1 MB in flight whatever the file's size.
 * test/adapters/postgres/blob-store.test.ts measures the memory it takes.
 */
const CHUNKS_PER_READ = 1;
/**
 * Bytes per row a read returns. pg hands bytea over as hex text, a string twice the bytes' size
 * that is decoded into a new Buffer: kept this small, each string is a short-lived object of V8's
 * young generation, freed at the next scavenge, rather than a multi-megabyte one in its
 * large-object space that only a full collection frees (reading a large file piled those up).
 */
const READ_PIECE_BYTES = 32 * 1024;
/** An incomplete blob this old belongs to an upload whose process died: it is removed. */
const ABANDONED_AFTER = '1 day';
const SWEEP_EVERY_MS = 60 * 60 * 1000;

export interface PgBlobStoreOptions {
  /** Bytes per chunk row (tests make it small to exercise many rows). */
  chunkBytes?: number;
}

export class PgBlobStore implements BlobStore {
  private readonly chunkBytes: number;
  private lastSweep = 0;

  constructor(
    private readonly db: PgDatabase,
    options: PgBlobStoreOptions = {},
  ) {
    this.chunkBytes = options.chunkBytes ?? CHUNK_BYTES;
  }

  async put(key: string, source: Readable, opts: { maxBytes?: number } = {}): Promise<BlobWrite> {
    const { db } = this;
    try {
      await this.sweepAbandoned();
      // Claims the key: a second put under it fails here, before touching the first one's rows.
      await db.query(`INSERT INTO ${db.table('blobs')} (key) VALUES ($1)`, [key]);
    } catch (error) {
      source.destroy();
      throw error;
    }
    const counter = new ByteLimit(opts.maxBytes);
    let chunks = 0;
    try {
      await pipeline(source, counter, async (pieces: AsyncIterable<Buffer>) => {
        // One chunk's buffer for the whole upload, filled by copying the pieces in and written
        // once full. The loop takes the next piece only after the write has answered, so a slow
        // database pauses the source (and through it the request) instead of letting pieces
        // pile up here: one chunk is all that is ever held.
        const chunk = Buffer.allocUnsafe(this.chunkBytes);
        let filled = 0;
        const write = async (data: Buffer) => {
          // A Buffer parameter goes to the server as binary (one copy into the message), never
          // as hex or escape text.
          await db.query(`INSERT INTO ${db.table('blob_chunks')} (key, seq, data) VALUES ($1, $2, $3)`, [
            key,
            chunks,
            data,
          ]);
          chunks += 1;
        };
        for await (const piece of pieces) {
          for (let offset = 0; offset < piece.length; ) {
            const copied = piece.copy(chunk, filled, offset);
            filled += copied;
            offset += copied;
            if (filled === chunk.length) {
              // Refilled once written: pg copies a parameter into its message as it sends the
              // statement, so the buffer is free again when the INSERT has answered.
              await write(chunk);
              filled = 0;
            }
          }
        }
        if (filled > 0) await write(chunk.subarray(0, filled));
      });
      const sha256 = counter.hash.digest('hex');
      const done = await db.query(
        `UPDATE ${db.table('blobs')} SET complete = true, bytes = $2, sha256 = $3, chunks = $4
         WHERE key = $1 AND NOT complete`,
        [key, counter.bytes, sha256, chunks],
      );
      // Deleted while it was being written: the upload did not happen.
      if (done.rowCount !== 1) throw new BlobNotFoundError(key);
      return { key, bytes: counter.bytes, sha256 };
    } catch (error) {
      // The chunk rows go with the blob row (ON DELETE CASCADE). Should this fail too (the
      // database went away), the sweep removes the incomplete row later.
      await db.query(`DELETE FROM ${db.table('blobs')} WHERE key = $1`, [key]).catch(() => {});
      throw error;
    }
  }

  async openRead(key: string): Promise<Readable> {
    const { db } = this;
    const found = await db.query<{ chunks: number }>(
      `SELECT chunks FROM ${db.table('blobs')} WHERE key = $1 AND complete`,
      [key],
    );
    const total = found.rows[0]?.chunks;
    if (total === undefined) throw new BlobNotFoundError(key);
    let next = 0;
    let queue: Buffer[] = [];
    let pumping = false;
    const stream = new ReadableStream({
      read() {
        void pump();
      },
    });
    // Pushes fetched chunks while the reader wants more; fetches the next few only when those
    // are gone, so at most CHUNKS_PER_READ chunks wait in memory besides the stream's buffer.
    const pump = async () => {
      if (pumping) return;
      pumping = true;
      try {
        for (;;) {
          if (queue.length === 0) {
            if (next >= total) {
              stream.push(null);
              return;
            }
            const rows = await this.fetchPieces(key, next);
            if (stream.destroyed) return;
            for (const row of rows) {
              // A gap means the blob was deleted while being read: never end as if it were whole.
              if (row.piece === 0 ? row.seq !== next : row.seq !== next - 1) break;
              queue.push(row.data);
              if (row.piece === 0) next += 1;
            }
            if (queue.length === 0) {
              stream.destroy(new BlobNotFoundError(key));
              return;
            }
          }
          const chunk = queue.shift() as Buffer;
          if (!stream.push(chunk)) return;
        }
      } catch (error) {
        queue = [];
        stream.destroy(error as Error);
      } finally {
        pumping = false;
      }
    };
    return stream;
  }

  /**
   * The pieces of the next few chunk rows from `seq` on, in order: each chunk row comes back as
   * rows of READ_PIECE_BYTES (`substring` of an uncompressed out-of-line value reads only the
   * slices it needs).
   */
  private async fetchPieces(
    key: string,
    seq: number,
  ): Promise<{ seq: number; piece: number; data: Buffer }[]> {
    const { rows } = await this.db.query<{ seq: number; piece: number; data: Buffer }>(
      `SELECT c.seq, p.piece, substring(c.data FROM p.piece * $3 + 1 FOR $3) AS data
       FROM ${this.db.table('blob_chunks')} c,
            generate_series(0, (octet_length(c.data) - 1) / $3) AS p (piece)
       WHERE c.key = $1 AND c.seq >= $2 AND c.seq < $2 + $4
       ORDER BY c.seq, p.piece`,
      [key, seq, READ_PIECE_BYTES, CHUNKS_PER_READ],
    );
    return rows;
  }

  withLocalFile<T>(key: string, fn: (path: string) => Promise<T>): Promise<T> {
    return withLocalCopy(() => this.openRead(key), fn);
  }

  async delete(key: string): Promise<void> {
    await this.db.query(`DELETE FROM ${this.db.table('blobs')} WHERE key = $1`, [key]);
  }

  /** Removes blobs left incomplete by processes that died mid-upload; at most once an hour. */
  private async sweepAbandoned(): Promise<void> {
    const now = Date.now();
    if (now - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    await this.db.query(
      `DELETE FROM ${this.db.table('blobs')} WHERE NOT complete AND created_at < now() - interval '${ABANDONED_AFTER}'`,
    );
  }
}
