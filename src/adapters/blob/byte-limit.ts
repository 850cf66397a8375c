// What every BlobStore adapter does to the bytes on their way in: count them, hash them, and stop
// at the size limit. Technology-neutral, so the PostgreSQL and S3 stores share it with this folder
// (test/architecture/layering.test.ts lists it as shared on purpose).
import { createHash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { BlobTooLargeError } from '../../domain/ports.js';

/** Counts (and hashes) bytes as they pass, failing as soon as the limit is crossed. */
export class ByteLimit extends Transform {
  bytes = 0;
  readonly hash = createHash('sha256');

  constructor(private readonly maxBytes: number = Number.POSITIVE_INFINITY) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    this.hash.update(chunk);
    if (this.bytes > this.maxBytes) callback(new BlobTooLargeError(this.maxBytes));
    else callback(null, chunk);
  }
}
