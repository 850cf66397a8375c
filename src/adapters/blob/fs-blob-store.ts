// BlobStore on a local (or shared) folder: uploaded and downloaded files. A blob appears under
// its key only once it is complete: bytes are streamed to a temporary name, flushed, then
// renamed. Parsers read the file in place (withLocalFile needs no copy here).
import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { access, link, mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BlobNotFoundError, type BlobStore, type BlobWrite } from '../../domain/ports.js';
import { ByteLimit } from './byte-limit.js';

// Keys are `<2 hex>/<uuid>` (newBlobKey), never derived from user input, and checked before any
// path is built from one, so a key read back from a database cannot point outside the folder.
const KEY_PATTERN = /^[0-9a-f]{2}\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TEMP_DIR = '.incoming';

/** Filesystems without hard links (some network and FUSE mounts) answer link() with these. */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV']);

/**
 * Makes the finished temporary file the blob. link, not rename: a key already in use fails with
 * EEXIST instead of being silently replaced. Where the filesystem has no hard links, a check and
 * a rename do the same (keys are UUIDs, so only a caller's bug could reuse one).
 */
async function publish(temp: string, final: string): Promise<void> {
  try {
    await link(temp, final);
  } catch (err) {
    if (!NO_HARD_LINKS.has((err as NodeJS.ErrnoException).code ?? '')) throw err;
    const taken = await access(final).then(
      () => true,
      () => false,
    );
    if (taken) throw Object.assign(new Error(`blob key already in use: ${final}`), { code: 'EEXIST' });
    await rename(temp, final);
    return;
  }
  await rm(temp, { force: true });
}

export class FsBlobStore implements BlobStore {
  private readonly root: string;

  constructor(root: string) {
    this.root = path.resolve(root);
  }

  async put(key: string, source: Readable, opts: { maxBytes?: number } = {}): Promise<BlobWrite> {
    const final = this.pathOf(key);
    const tempDir = path.join(this.root, TEMP_DIR);
    const temp = path.join(tempDir, `${randomUUID()}.part`);
    const counter = new ByteLimit(opts.maxBytes ?? Number.POSITIVE_INFINITY);
    await mkdir(tempDir, { recursive: true });
    // flush: the data reaches the disk before the rename makes the blob visible, so a crash
    // cannot leave a complete-looking key with missing bytes.
    const sink = createWriteStream(temp, { flags: 'wx', flush: true });
    try {
      await pipeline(source, counter, sink);
      await mkdir(path.dirname(final), { recursive: true });
      await publish(temp, final);
    } catch (err) {
      // The file may still be opening when the pipeline fails; removing it before the stream has
      // closed could let the open recreate it afterwards.
      if (!sink.closed) await new Promise<void>((resolve) => sink.once('close', () => resolve()));
      await rm(temp, { force: true });
      throw err;
    }
    return { key, bytes: counter.bytes, sha256: counter.hash.digest('hex') };
  }

  async openRead(key: string): Promise<Readable> {
    const file = await this.existing(key);
    return createReadStream(file);
  }

  async withLocalFile<T>(key: string, fn: (path: string) => Promise<T>): Promise<T> {
    return fn(await this.existing(key));
  }

  /** The path of the blob under `key`; BlobNotFoundError when there is none (or the key is not ours). */
  private async existing(key: string): Promise<string> {
    if (!KEY_PATTERN.test(key)) throw new BlobNotFoundError(key);
    const file = this.pathOf(key);
    try {
      await access(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new BlobNotFoundError(key);
      throw err;
    }
    return file;
  }

  private pathOf(key: string): string {
    if (!KEY_PATTERN.test(key)) throw new Error('invalid blob key');
    return path.join(this.root, key);
  }

  async delete(key: string): Promise<void> {
    if (!KEY_PATTERN.test(key)) return;
    await rm(this.pathOf(key), { force: true });
  }
}
