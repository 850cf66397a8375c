// Conformance suite for BlobStore: the filesystem, PostgreSQL and S3 stores run these same tests.
// The promise that matters: a blob exists completely or not at all. Some tests stream several MB,
// so that a store that works in pieces (PostgreSQL's chunk rows, S3's multipart parts of 5 MiB)
// crosses its piece boundaries while writing, reading and failing.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BlobNotFoundError, type BlobStore, BlobTooLargeError, newBlobKey } from '../../src/domain/ports.js';

export interface BlobStoreHarness {
  store: BlobStore;
  /** Every object the backend holds, finished or partial (temporary files included). */
  listAll(): Promise<string[]>;
  close(): Promise<void>;
}

function bytes(n: number, seed = 7): Buffer {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = (i * 31 + seed) & 0xff;
  return b;
}

/** Streams `data` in uneven pieces, so limits are crossed mid-chunk as well as on edges. */
function streamOf(data: Buffer, piece = 1000): Readable {
  const parts: Buffer[] = [];
  for (let i = 0, n = piece; i < data.length; i += n, n = n === piece ? piece + 337 : piece) {
    parts.push(data.subarray(i, i + n));
  }
  return Readable.from(parts);
}

/** Sends `afterBytes` bytes (in pieces of at most 64 KiB), then fails with `error`. */
function failingStream(afterBytes: number, error: Error): Readable {
  const data = bytes(afterBytes);
  let sent = 0;
  return new Readable({
    read() {
      if (sent < data.length || (sent === 0 && data.length === 0)) {
        const piece = data.subarray(sent, sent + 64 * 1024);
        sent += Math.max(piece.length, 1);
        this.push(piece);
      } else {
        this.destroy(error);
      }
    },
  });
}

const MiB = 1024 * 1024;
/** More than two S3 parts and a dozen PostgreSQL chunk rows; not a round number of either. */
const LARGE = 12 * MiB + 12_345;

export function blobStoreContract(name: string, make: () => Promise<BlobStoreHarness>): void {
  describe(name, () => {
    let h: BlobStoreHarness;
    let store: BlobStore;

    beforeEach(async () => {
      h = await make();
      store = h.store;
    });
    afterEach(async () => {
      await h.close();
    });

    /** The blob's bytes, read both ways the port offers; they must agree. */
    async function read(key: string): Promise<Buffer> {
      const streamed = await buffer(await store.openRead(key));
      const local = await store.withLocalFile(key, (file) => readFile(file));
      expect(local.equals(streamed)).toBe(true);
      return streamed;
    }

    const absent = async (key: string) => {
      await expect(store.openRead(key)).rejects.toBeInstanceOf(BlobNotFoundError);
      await expect(store.withLocalFile(key, async () => 'read')).rejects.toBeInstanceOf(BlobNotFoundError);
    };

    it('stores a stream under its key and gives back the same bytes, streamed or as a local file', async () => {
      const data = bytes(250_000);
      const a = await store.put(newBlobKey(), streamOf(data));
      const b = await store.put(newBlobKey(), streamOf(data));
      expect(a.bytes).toBe(data.length);
      expect(a.sha256).toBe(createHash('sha256').update(data).digest('hex'));
      expect(b.sha256).toBe(a.sha256);
      expect(a.key).not.toBe(b.key);
      expect((await read(a.key)).equals(data)).toBe(true);
    });

    it('keeps the local file until the function settles, and passes on what it returns or throws', async () => {
      const w = await store.put(newBlobKey(), streamOf(bytes(1000)));
      const size = await store.withLocalFile(w.key, async (file) => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        return (await readFile(file)).length;
      });
      expect(size).toBe(1000);
      const boom = new Error('parser failed');
      await expect(
        store.withLocalFile(w.key, async () => {
          throw boom;
        }),
      ).rejects.toBe(boom);
      expect((await read(w.key)).length).toBe(1000);
    });

    it('stores an empty stream', async () => {
      const w = await store.put(newBlobKey(), Readable.from([]));
      expect(w.bytes).toBe(0);
      expect((await read(w.key)).length).toBe(0);
    });

    it('accepts exactly maxBytes', async () => {
      const data = bytes(10_000);
      const w = await store.put(newBlobKey(), streamOf(data, 999), { maxBytes: 10_000 });
      expect(w.bytes).toBe(10_000);
      expect((await read(w.key)).equals(data)).toBe(true);
    });

    it('refuses maxBytes + 1 and leaves nothing behind', async () => {
      const before = await h.listAll();
      const key = newBlobKey();
      const err = await store
        .put(key, streamOf(bytes(10_001), 999), { maxBytes: 10_000 })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BlobTooLargeError);
      expect((err as BlobTooLargeError).maxBytes).toBe(10_000);
      expect(await h.listAll()).toEqual(before);
      await absent(key);
    });

    it('refuses an oversized stream that arrives as one chunk', async () => {
      const before = await h.listAll();
      await expect(
        store.put(newBlobKey(), Readable.from([bytes(5000)]), { maxBytes: 4999 }),
      ).rejects.toBeInstanceOf(BlobTooLargeError);
      expect(await h.listAll()).toEqual(before);
    });

    it('leaves nothing behind when the source stream fails', async () => {
      const kept = await store.put(newBlobKey(), streamOf(bytes(100)));
      const before = await h.listAll();
      const boom = new Error('client went away');
      await expect(store.put(newBlobKey(), failingStream(64 * 1024, boom))).rejects.toBe(boom);
      await expect(store.put(newBlobKey(), failingStream(0, boom))).rejects.toBe(boom);
      expect(await h.listAll()).toEqual(before);
      expect((await read(kept.key)).length).toBe(100);
    });

    it('streams a blob of several MB back whole and in order', async () => {
      const data = bytes(LARGE, 3);
      const w = await store.put(newBlobKey(), streamOf(data, 64 * 1024));
      expect(w.bytes).toBe(LARGE);
      expect(w.sha256).toBe(createHash('sha256').update(data).digest('hex'));
      expect((await read(w.key)).equals(data)).toBe(true);
    });

    it('refuses a stream that passes maxBytes after several MB, and leaves nothing behind', async () => {
      const before = await h.listAll();
      const key = newBlobKey();
      await expect(
        store.put(key, streamOf(bytes(LARGE), 64 * 1024), { maxBytes: 7 * MiB }),
      ).rejects.toBeInstanceOf(BlobTooLargeError);
      expect(await h.listAll()).toEqual(before);
      await absent(key);
    });

    it('leaves nothing behind when the source fails after several MB', async () => {
      const before = await h.listAll();
      const key = newBlobKey();
      const boom = new Error('connection reset mid-upload');
      await expect(store.put(key, failingStream(11 * MiB, boom))).rejects.toBe(boom);
      expect(await h.listAll()).toEqual(before);
      await absent(key);
    });

    it('lets a reader stop early, and the blob can still be read and deleted', async () => {
      const data = bytes(3 * MiB, 5);
      const w = await store.put(newBlobKey(), streamOf(data, 64 * 1024));
      const stream = await store.openRead(w.key);
      const first = await new Promise<Buffer>((resolve, reject) => {
        stream.once('data', resolve);
        stream.once('error', reject);
      });
      stream.destroy();
      expect(first.equals(data.subarray(0, first.length))).toBe(true);
      expect((await read(w.key)).equals(data)).toBe(true);
      await store.delete(w.key);
      await absent(w.key);
    });

    it('never cuts a blob short: deleted while being read, it comes out whole or the read fails', async () => {
      const data = bytes(LARGE, 9);
      const w = await store.put(newBlobKey(), streamOf(data, 64 * 1024));
      const stream = await store.openRead(w.key);
      const parts: Buffer[] = [];
      let deleted = false;
      const outcome = await new Promise<'ended' | unknown>((resolve) => {
        stream.on('data', (part: Buffer) => {
          parts.push(part);
          if (deleted) return;
          deleted = true;
          // Paused while the delete runs, so the rest is read after it.
          stream.pause();
          void store.delete(w.key).then(() => stream.resume());
        });
        stream.once('end', () => resolve('ended'));
        stream.once('error', resolve);
      });
      const read = Buffer.concat(parts);
      if (outcome === 'ended') expect(read.equals(data)).toBe(true);
      else expect(read.length).toBeLessThan(data.length);
      await absent(w.key);
    });

    it('never replaces a blob: a second put under the same key fails and the first stays', async () => {
      const key = newBlobKey();
      const first = bytes(300, 1);
      await store.put(key, streamOf(first));
      await expect(store.put(key, streamOf(bytes(500, 2)))).rejects.toThrow();
      expect((await read(key)).equals(first)).toBe(true);
      expect(await h.listAll()).toHaveLength(1);
    });

    it('deletes idempotently', async () => {
      const w = await store.put(newBlobKey(), streamOf(bytes(10)));
      const other = await store.put(newBlobKey(), streamOf(bytes(10)));
      await store.delete(w.key);
      await absent(w.key);
      await store.delete(w.key);
      expect((await read(other.key)).length).toBe(10);
      expect(await h.listAll()).toHaveLength(1);
    });

    it('deletes a key it never stored without complaint', async () => {
      const kept = await store.put(newBlobKey(), streamOf(bytes(10)));
      await store.delete(newBlobKey());
      await store.delete('00/00000000-0000-4000-8000-000000000000');
      expect((await read(kept.key)).length).toBe(10);
    });

    it('reports keys it never stored as absent', async () => {
      await absent(newBlobKey());
      await absent('00/00000000-0000-4000-8000-000000000000');
    });
  });
}
