// BlobStore in PostgreSQL (BLOB_STORE=postgres, the scale-out default): files live in the same
// database as the records, so API and worker processes share nothing but PostgreSQL (and Redis).
// A blob is a `blobs` row plus `blob_chunks` rows of CHUNK_BYTES each. Bytes are written chunk by
// chunk as the upload streams in and read back a few chunks per query, so no process holds a
// whole file in memory, and neither holds a connection for longer than one statement.
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
 * Chunk rows fetched per query while reading: 2 MB in flight (4 MB as hex text on the wire),
 * whatever the file's size. test/adapters/postgres/blob-store.test.ts measures the memory it takes.
 */
const CHUNKS_PER_READ = 2;
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
        let pending: Buffer[] = [];
        let pendingBytes = 0;
        const write = async (data: Buffer) => {
          await db.query(`INSERT INTO ${db.table('blob_chunks')} (key, seq, data) VALUES ($1, $2, $3)`, [
            key,
            chunks,
            data,
          ]);
          chunks += 1;
        };
        for await (const piece of pieces) {
          pending.push(piece);
          pendingBytes += piece.length;
          while (pendingBytes >= this.chunkBytes) {
            const joined = Buffer.concat(pending, pendingBytes);
            await write(joined.subarray(0, this.chunkBytes));
            pending = pendingBytes > this.chunkBytes ? [joined.subarray(this.chunkBytes)] : [];
            pendingBytes -= this.chunkBytes;
          }
        }
        if (pendingBytes > 0) await write(Buffer.concat(pending, pendingBytes));
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
            const rows = await this.fetchChunks(key, next);
            if (stream.destroyed) return;
            for (const row of rows) {
              // A gap means the blob was deleted while being read: never end as if it were whole.
              if (row.seq !== next) break;
              queue.push(row.data);
              next += 1;
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

  /** The next few chunk rows from `seq` on, in order. */
  private async fetchChunks(key: string, seq: number): Promise<{ seq: number; data: Buffer }[]> {
    const { rows } = await this.db.query<{ seq: number; data: Buffer }>(
      `SELECT seq, data FROM ${this.db.table('blob_chunks')} WHERE key = $1 AND seq >= $2 ORDER BY seq LIMIT $3`,
      [key, seq, CHUNKS_PER_READ],
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
