// What only PgBlobStore has to prove: a 100 MB file goes into PostgreSQL and comes back out
// without the process ever holding it in memory. The stream is generated as it is read, and the
// process's resident memory is sampled throughout: its peak growth must stay far below the file.
// And while a chunk's write waits on the database, the store stops reading its source.
import { createHash } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PgBlobStore } from '../../../src/adapters/postgres/blob-store.js';
import { PgDatabase } from '../../../src/adapters/postgres/database.js';
import { migratePostgres } from '../../../src/adapters/postgres/migrations.js';
import { newBlobKey } from '../../../src/domain/ports.js';
import { checkServices, describeScaleOut, dropSchema, freshSchema } from '../../scale-out/services.js';

const services = await checkServices(['DATABASE_URL']);
const url = services.urls.DATABASE_URL ?? '';

const FILE_BYTES = 100 * 1024 * 1024;
const PIECE = 64 * 1024;
/**
 * Well under the file's size: a store that buffered the file would grow by at least 100 MB. Reading
 * makes garbage (pg hands bytea over as hex text, decoded into new Buffers) that V8 frees in
 * batches, so the peak varies from run to run, by tens of MB on a loaded 2-core machine (a bound
 * much closer to the usual peak failed now and then); it does not grow with the file.
 */
const MAX_RSS_GROWTH = 72 * 1024 * 1024;

/** `total` varied bytes, made piece by piece as they are read; never held whole. */
function generated(total = FILE_BYTES): Readable & { pulled(): number } {
  const base = Buffer.alloc(PIECE);
  for (let i = 0; i < PIECE; i++) base[i] = (i * 131 + 17) & 0xff;
  let sent = 0;
  const stream = new Readable({
    read() {
      if (sent >= total) return void this.push(null);
      const piece = Buffer.from(base);
      piece.writeUInt32BE(sent / PIECE, 0); // no two pieces alike
      sent += piece.length;
      this.push(piece);
    },
  });
  return Object.assign(stream, { pulled: () => sent });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Peak resident memory while `fn` runs, sampled every 20 ms. */
async function peakRss<T>(fn: () => Promise<T>): Promise<{ result: T; peak: number }> {
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 20);
  try {
    const result = await fn();
    return { result, peak: Math.max(peak, process.memoryUsage().rss) };
  } finally {
    clearInterval(timer);
  }
}

describeScaleOut('PgBlobStore, large files', services, () => {
  const schema = freshSchema();
  let db: PgDatabase;

  beforeAll(async () => {
    db = new PgDatabase({ connectionString: url, schema, maxConnections: 4 });
    await migratePostgres(db);
  });
  afterAll(async () => {
    await db?.close();
    await dropSchema(url, schema);
  });

  it('puts and reads back 100 MB with resident memory growing far less than the file', async () => {
    const store = new PgBlobStore(db);
    const expected = createHash('sha256');
    for await (const piece of generated()) expected.update(piece as Buffer);
    const sha256 = expected.digest('hex');

    const before = process.memoryUsage().rss;
    const written = await peakRss(() => store.put(newBlobKey(), generated(), { maxBytes: FILE_BYTES }));
    expect(written.result).toMatchObject({ bytes: FILE_BYTES, sha256 });

    const read = await peakRss(async () => {
      const hash = createHash('sha256');
      let bytes = 0;
      await pipeline(
        await store.openRead(written.result.key),
        new Writable({
          write(chunk: Buffer, _encoding, callback) {
            hash.update(chunk);
            bytes += chunk.length;
            callback();
          },
        }),
      );
      return { bytes, sha256: hash.digest('hex') };
    });
    expect(read.result).toEqual({ bytes: FILE_BYTES, sha256 });

    const growth = Math.max(written.peak, read.peak) - before;
    console.info(
      `PgBlobStore 100 MB round trip: peak RSS growth ${(growth / 1024 / 1024).toFixed(1)} MB ` +
        `(put ${((written.peak - before) / 1024 / 1024).toFixed(1)} MB, read ${((read.peak - before) / 1024 / 1024).toFixed(1)} MB)`,
    );
    expect(growth).toBeLessThan(MAX_RSS_GROWTH);
    await store.delete(written.result.key);
  }, 180_000);

  it('stops reading the source while a chunk write waits on the database, then finishes the blob', async () => {
    // A pool with room for every chunk's INSERT at once, so that a store writing without waiting
    // would show it by reading the whole source rather than by running out of connections.
    const wide = new PgDatabase({ connectionString: url, schema, maxConnections: 16 });
    const store = new PgBlobStore(wide);
    const total = 12 * 1024 * 1024;
    const expected = createHash('sha256');
    for await (const piece of generated(total)) expected.update(piece as Buffer);
    // Another session holds a lock that every INSERT into blob_chunks waits for.
    const locker = await db.pool.connect();
    let put: Promise<{ bytes: number; sha256: string }> | undefined;
    try {
      await locker.query('BEGIN');
      await locker.query(`LOCK TABLE ${db.table('blob_chunks')} IN EXCLUSIVE MODE`);
      const source = generated(total);
      put = store.put(newBlobKey(), source);
      put.catch(() => {});
      // The first chunk's INSERT is waiting on the lock once the server says so.
      for (;;) {
        const { rows } = await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity
           WHERE wait_event_type = 'Lock' AND query LIKE $1`,
          [`INSERT INTO ${db.table('blob_chunks')}%`],
        );
        if ((rows[0]?.n ?? 0) > 0) break;
        await sleep(20);
      }
      // Until the source stops being read (or is read to its end, as a store that kept reading
      // while the write waits would do).
      let last = -1;
      while (source.pulled() !== last && source.pulled() < total) {
        last = source.pulled();
        await sleep(300);
      }
      // One chunk row in the pending INSERT, plus what the streams between may buffer.
      expect(source.pulled()).toBeLessThanOrEqual(2 * 1024 * 1024);
    } finally {
      await locker.query('COMMIT').catch(() => {});
      locker.release();
    }
    try {
      await expect(put).resolves.toMatchObject({ bytes: total, sha256: expected.digest('hex') });
    } finally {
      await wide.close();
    }
  }, 180_000);
});
