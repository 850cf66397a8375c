// Runs the BlobStore contract against S3BlobStore on a real S3-protocol server: s3rver, started as
// a child process on 127.0.0.1 (test/helpers/s3rver.ts), one fresh bucket per test. Plus what only
// S3 has: a failed multipart upload is aborted rather than left to accumulate parts.
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import {
  CreateBucketCommand,
  ListObjectsV2Command,
  type ListObjectsV2CommandOutput,
  S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3BlobStore } from '../../src/adapters/blob/s3-blob-store.js';
import { BlobNotFoundError, newBlobKey } from '../../src/domain/ports.js';
import { startHarness } from '../helpers/harness.js';
import { describeS3, type S3rverProcess, startS3rver } from '../helpers/s3rver.js';
import { blobStoreContract } from './blob-store.contract.js';

// s3rver accepts any key pair; these only keep the SDK from looking for real credentials.
const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

describeS3('S3 blob store (s3rver)', () => {
  let server: S3rverProcess;
  let admin: S3Client;

  beforeAll(async () => {
    server = await startS3rver();
    admin = new S3Client({
      region: 'us-east-1',
      endpoint: server.endpoint,
      forcePathStyle: true,
      credentials,
    });
  });
  afterAll(async () => {
    admin?.destroy();
    await server?.stop();
  });

  /** A store on a bucket of its own. */
  async function freshStore(): Promise<{ store: S3BlobStore; bucket: string }> {
    const bucket = `t-${randomUUID()}`;
    await admin.send(new CreateBucketCommand({ Bucket: bucket }));
    const store = new S3BlobStore({
      bucket,
      region: 'us-east-1',
      endpoint: server.endpoint,
      forcePathStyle: true,
      credentials,
    });
    return { store, bucket };
  }

  async function listKeys(bucket: string): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page: ListObjectsV2CommandOutput = await admin.send(
        new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token }),
      );
      keys.push(...(page.Contents ?? []).map((o) => o.Key ?? ''));
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return keys.sort();
  }

  blobStoreContract('S3BlobStore', async () => {
    const { store, bucket } = await freshStore();
    return {
      store,
      // Objects only: s3rver cannot list (or abort) multipart uploads; the test below checks
      // that the store aborts them.
      listAll: () => listKeys(bucket),
      async close() {
        store.close();
      },
    };
  });

  describe('S3 specifics', () => {
    it('aborts the multipart upload of a stream that fails after several parts', async () => {
      const { store, bucket } = await freshStore();
      const sent: string[] = [];
      store.client.middlewareStack.add(
        (next, context) => async (args) => {
          sent.push(String(context.commandName));
          return next(args);
        },
        { step: 'initialize', name: 'recordCommands' },
      );
      const part = Buffer.alloc(1024 * 1024, 7);
      let pieces = 0;
      const boom = new Error('client went away');
      const source = new Readable({
        read() {
          if (pieces++ < 12) this.push(part);
          else this.destroy(boom);
        },
      });
      const key = newBlobKey();
      await expect(store.put(key, source)).rejects.toBe(boom);
      expect(sent).toContain('CreateMultipartUploadCommand');
      expect(sent).toContain('UploadPartCommand');
      expect(sent).toContain('AbortMultipartUploadCommand');
      expect(sent).not.toContain('CompleteMultipartUploadCommand');
      expect(await listKeys(bucket)).toEqual([]);
      await expect(store.openRead(key)).rejects.toBeInstanceOf(BlobNotFoundError);
      store.close();
    });

    it('is what the runtime stores uploads in with BLOB_STORE=s3, from ingest to delete', async () => {
      const bucket = `t-${randomUUID()}`;
      await admin.send(new CreateBucketCommand({ Bucket: bucket }));
      const h = await startHarness({
        env: {
          BLOB_STORE: 's3',
          S3_ENDPOINT: server.endpoint,
          S3_BUCKET: bucket,
          S3_FORCE_PATH_STYLE: 'true',
          S3_ACCESS_KEY_ID: credentials.accessKeyId,
          S3_SECRET_ACCESS_KEY: credentials.secretAccessKey,
        },
      });
      try {
        const boundary = 'docindex-s3-boundary';
        const payload =
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="otters.txt"\r\n` +
          `Content-Type: text/plain\r\n\r\nSea otters hold hands while they sleep.\r\n--${boundary}--\r\n`;
        const res = await h.request('POST', '/v1/ingest/file', {
          payload,
          headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
        });
        expect(res.statusCode).toBe(202);
        const [doc] = await h.waitForDone(h.orgA, res.json().document_ids);
        expect(doc).toMatchObject({ status: 'ready', chunk_count: 1 });
        expect(await listKeys(bucket)).toHaveLength(1);
        expect((await h.request('DELETE', `/v1/documents/${doc!.id}`)).statusCode).toBe(204);
        expect(await listKeys(bucket)).toEqual([]);
      } finally {
        await h.close();
      }
    });

    it('reads the bucket it was given, and only that one', async () => {
      const a = await freshStore();
      const b = await freshStore();
      const w = await a.store.put(newBlobKey(), Readable.from([Buffer.from('only in a')]));
      await expect(b.store.openRead(w.key)).rejects.toBeInstanceOf(BlobNotFoundError);
      expect(await listKeys(a.bucket)).toEqual([w.key]);
      a.store.close();
      b.store.close();
    });
  });
});
