// BlobStore on an S3-compatible bucket (BLOB_STORE=s3), through the AWS SDK v3. Uploads stream
// through ByteLimit into lib-storage's Upload: one PUT for a small file, a multipart upload in 5 MiB
// parts otherwise, at most QUEUE_SIZE parts in memory, so a file of unknown length is never held
// whole. S3 makes an object visible only when its upload completes, which gives "complete or not
// at all"; a failed multipart upload is aborted, so its parts are not left behind either.
import { pipeline, Readable } from 'node:stream';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { BlobNotFoundError, type BlobStore, type BlobWrite } from '../../domain/ports.js';
import { ByteLimit } from './byte-limit.js';
import { withLocalCopy } from './local-copy.js';

/** Parts uploaded at once: with 5 MiB parts, about 10 MiB of a file in memory per upload. */
const QUEUE_SIZE = 2;

export interface S3BlobStoreOptions {
  bucket: string;
  region: string;
  /** null or unset: AWS S3 itself. */
  endpoint?: string | null;
  forcePathStyle?: boolean;
  /** Unset: the SDK's default credential chain (environment, profile, instance role). */
  credentials?: { accessKeyId: string; secretAccessKey: string };
}

const httpStatusOf = (error: unknown): number | undefined =>
  (error as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;

const isNotFound = (error: unknown): boolean =>
  error instanceof Error &&
  (error.name === 'NoSuchKey' || error.name === 'NotFound' || httpStatusOf(error) === 404);

export class S3BlobStore implements BlobStore {
  /** The SDK client (tests watch the commands it sends). */
  readonly client: S3Client;
  private readonly bucket: string;

  constructor(options: S3BlobStoreOptions) {
    this.bucket = options.bucket;
    const config: S3ClientConfig = {
      region: options.region,
      forcePathStyle: options.forcePathStyle ?? false,
      // Checksums only where S3 requires them: the newer default (CRC32 on every request, with
      // aws-chunked uploads) is refused by several S3-compatible servers.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    };
    if (options.endpoint) config.endpoint = options.endpoint;
    if (options.credentials) config.credentials = options.credentials;
    this.client = new S3Client(config);
  }

  async put(key: string, source: Readable, opts: { maxBytes?: number } = {}): Promise<BlobWrite> {
    // S3 would silently replace an object: refuse a key in use, as the other stores do. Keys are
    // UUIDs (newBlobKey), so only a caller's bug could reuse one; the check is not atomic.
    let taken: boolean;
    try {
      taken = await this.exists(key);
    } catch (error) {
      source.destroy();
      throw error;
    }
    if (taken) {
      source.destroy();
      throw Object.assign(new Error(`blob key already in use: ${key}`), { code: 'EEXIST' });
    }
    const counter = new ByteLimit(opts.maxBytes);
    let streamError: unknown = null;
    // The upload reads `counter`; a failing source or the limit destroys it, which fails the upload.
    const body = pipeline(source, counter, (error) => {
      if (error) streamError ??= error;
    });
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: key, Body: body },
      queueSize: QUEUE_SIZE,
      leavePartsOnError: false,
    });
    try {
      await upload.done();
      if (streamError !== null) throw streamError;
    } catch (error) {
      // Upload aborts a failed multipart upload itself; this removes an object in the (unlikely)
      // case one was completed before the failure surfaced. The key was free before this put.
      body.destroy();
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key })).catch(() => {});
      // The stream's own error (the client went away, BlobTooLargeError) says more than the SDK's.
      throw streamError ?? error;
    }
    return { key, bytes: counter.bytes, sha256: counter.hash.digest('hex') };
  }

  async openRead(key: string): Promise<Readable> {
    try {
      const { Body } = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      if (Body instanceof Readable) return Body;
      throw new Error('S3 GetObject answered without a readable body');
    } catch (error) {
      if (isNotFound(error)) throw new BlobNotFoundError(key);
      throw error;
    }
  }

  withLocalFile<T>(key: string, fn: (path: string) => Promise<T>): Promise<T> {
    return withLocalCopy(() => this.openRead(key), fn);
  }

  /** S3 answers 204 whether or not the object existed: idempotent as it is. */
  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  /** Closes the client's sockets; the store must not be used afterwards. */
  close(): void {
    this.client.destroy();
  }

  private async exists(key: string): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
  }
}
