// Uploaded and downloaded files: the store, its keys and its errors.
import type { Readable } from 'node:stream';
import { newUuid } from '../ids-and-hashes.js';

export interface BlobWrite {
  key: string;
  bytes: number;
  /** hex SHA-256 of the bytes written. */
  sha256: string;
}

/**
 * Uploaded and downloaded files. Streams in and out: no adapter ever holds a whole file in memory.
 * Keys come from newBlobKey(); an adapter may refuse any other shape of key.
 */
export interface BlobStore {
  /**
   * Streams `source` into a new blob under `key`. The blob appears complete or not at all: if the
   * stream fails or passes maxBytes (BlobTooLargeError), nothing is left behind.
   */
  put(key: string, source: Readable, opts?: { maxBytes?: number }): Promise<BlobWrite>;
  /** The blob's bytes; BlobNotFoundError when there is no blob under `key`. */
  openRead(key: string): Promise<Readable>;
  /**
   * Runs `fn` with the path of a local file holding the blob, for parsers that need random
   * access; the file stays valid until `fn` settles. BlobNotFoundError when there is no blob.
   */
  withLocalFile<T>(key: string, fn: (path: string) => Promise<T>): Promise<T>;
  /** Idempotent. */
  delete(key: string): Promise<void>;
}

/** A fresh blob key: `<2 hex>/<uuid v4>` (the two characters shard large folders). */
export function newBlobKey(): string {
  const id = newUuid();
  return `${id.slice(0, 2)}/${id}`;
}

/** Thrown by BlobStore.openRead and withLocalFile when there is no blob under the key. */
export class BlobNotFoundError extends Error {
  constructor(readonly key: string) {
    super('no blob under this key');
    this.name = 'BlobNotFoundError';
  }
}

/** Thrown by BlobStore.put when the source exceeds maxBytes; nothing is left behind. */
export class BlobTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`blob exceeds ${maxBytes} bytes`);
    this.name = 'BlobTooLargeError';
  }
}
