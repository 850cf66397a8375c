// BlobStore.withLocalFile for stores that keep blobs elsewhere (PostgreSQL, S3): the blob is
// streamed to a file in a folder of its own under the system's temporary directory, `fn` gets its
// path, and the folder is removed however `fn` ends. Shared on purpose, like byte-limit.ts.
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/**
 * Opens the blob first (so a missing one fails before any file exists), copies it to a temporary
 * file, runs `fn` on it and removes it.
 */
export async function withLocalCopy<T>(
  open: () => Promise<Readable>,
  fn: (path: string) => Promise<T>,
): Promise<T> {
  const source = await open();
  let dir: string;
  try {
    dir = await mkdtemp(path.join(tmpdir(), 'docindex-blob-'));
  } catch (error) {
    source.destroy();
    throw error;
  }
  try {
    const file = path.join(dir, 'blob');
    await pipeline(source, createWriteStream(file, { flags: 'wx' }));
    return await fn(file);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
