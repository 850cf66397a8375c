// Durability of source runs (embedded): SIGKILL the server while a run of an s3 source (s3rver on
// 127.0.0.1) is ingesting, start it again, and the run finishes: every object is one document
// (no duplicate external_id), counted once, and the deletions of a run cut off are done too.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CreateBucketCommand, DeleteObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeS3, type S3rverProcess, startS3rver } from '../helpers/s3rver.js';
import { CrashableServer } from '../helpers/source-crash.js';

const OBJECTS = 300;
const ADDED_LATER = 150;
const DELETED = 100;

describeS3('SIGKILL during a source run (embedded)', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'docindex-sources-restart-'));
  let s3: S3rverProcess;
  let admin: S3Client;
  let server: CrashableServer | undefined;

  beforeAll(async () => {
    s3 = await startS3rver();
    admin = new S3Client({
      region: 'us-east-1',
      endpoint: s3.endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
  });
  afterAll(async () => {
    await server?.stop('SIGKILL');
    admin?.destroy();
    await s3?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('resumes the run: no duplicate document, no lost deletion, each item counted once', async () => {
    const bucket = `t-${randomUUID()}`;
    await admin.send(new CreateBucketCommand({ Bucket: bucket }));
    const put = (i: number) =>
      admin.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: `doc-${String(i).padStart(4, '0')}.txt`,
          Body: `object ${i} text`,
        }),
      );
    for (let i = 0; i < OBJECTS; i++) await put(i);

    server = new CrashableServer({
      DATA_DIR: dataDir,
      DEFAULT_RATE_LIMIT_RPM: '1000000',
      URL_FETCH_ALLOW: '127.0.0.1',
      SECRETS_KEY: randomBytes(32).toString('base64'),
    });
    await server.start();
    const sourceId = await server.createSource({
      type: 's3',
      name: 'crash',
      config: {
        bucket,
        endpoint: s3.endpoint,
        force_path_style: true,
        access_key_id: 'S3RVER',
        secret_access_key: 'S3RVER',
      },
    });

    const first = await server.runWithKill(sourceId, 20);
    expect(first).toMatchObject({ status: 'completed', added: OBJECTS, updated: 0, deleted: 0, failed: 0 });

    // New objects to ingest first, deletions after them: a kill during the ingests leaves the
    // deletions to the resumed run.
    for (let i = OBJECTS; i < OBJECTS + ADDED_LATER; i++) await put(i);
    for (let i = 0; i < DELETED; i++) {
      await admin.send(
        new DeleteObjectCommand({ Bucket: bucket, Key: `doc-${String(i).padStart(4, '0')}.txt` }),
      );
    }
    const second = await server.runWithKill(sourceId, 10);
    expect(second).toMatchObject({
      status: 'completed',
      added: ADDED_LATER,
      updated: 0,
      deleted: DELETED,
      unchanged: OBJECTS - DELETED,
      failed: 0,
    });
    await server.stop();
    server = undefined;

    const expected = Array.from(
      { length: OBJECTS + ADDED_LATER - DELETED },
      (_, i) => `${sourceId}:doc-${String(i + DELETED).padStart(4, '0')}.txt`,
    );
    const stored = new CrashableServer({ DATA_DIR: dataDir }).storedOf(sourceId);
    expect(stored.externalIds).toEqual(expected.sort());
    expect(stored.items).toBe(expected.length);
  }, 300_000);
});
