// Durability of source runs (embedded): SIGKILL the server while a run of an s3 source (s3rver on
// 127.0.0.1) is ingesting, start it again, and the run finishes: every object is one document
// (no duplicate external_id), counted once, and the deletions of a run cut off are done too.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CreateBucketCommand, DeleteObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ServerProcess, startServer, stopServer } from '../helpers/process.js';
import { describeS3, type S3rverProcess, startS3rver } from '../helpers/s3rver.js';

const OBJECTS = 300;
const ADDED_LATER = 150;
const DELETED = 100;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describeS3('SIGKILL during a source run (embedded)', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'docindex-sources-restart-'));
  let s3: S3rverProcess;
  let admin: S3Client;
  let server: ServerProcess | undefined;

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
    if (server) await stopServer(server, 'SIGKILL');
    admin?.destroy();
    await s3?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('resumes the run: no duplicate document, no lost deletion, each item counted once', async () => {
    const env = {
      DATA_DIR: dataDir,
      DEFAULT_RATE_LIMIT_RPM: '1000000',
      URL_FETCH_ALLOW: '127.0.0.1',
      SECRETS_KEY: randomBytes(32).toString('base64'),
    };
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

    server = await startServer(['serve'], env);
    const key = /api_key: (\S+)/.exec(server.stdout())![1]!;
    const authorization = `Bearer ${key}`;
    const api = async (method: string, url: string, body?: unknown) => {
      const res = await fetch(`${server!.baseUrl}${url}`, {
        method,
        headers:
          body === undefined ? { authorization } : { authorization, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, json: (await res.json().catch(() => null)) as Record<string, unknown> };
    };
    const created = await api('POST', '/v1/sources', {
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
    expect(created.status).toBe(201);
    const sourceId = created.json.id as string;

    const runOf = async (runId: string) => {
      const { json } = await api('GET', `/v1/sources/${sourceId}/runs`);
      return (json.runs as Array<Record<string, number | string>>).find((r) => r.run_id === runId)!;
    };
    /** Starts a run, kills the server once it has added `killAfter` items, restarts, waits for the end. */
    const runWithKill = async (killAfter: number) => {
      const started = await api('POST', `/v1/sources/${sourceId}/sync`);
      expect(started.status).toBe(202);
      const runId = started.json.run_id as string;
      for (;;) {
        const run = await runOf(runId);
        expect(run.status === 'completed' || run.status === 'failed', 'the run ended before the kill').toBe(
          false,
        );
        if ((run.added as number) >= killAfter) break;
        await sleep(10);
      }
      await stopServer(server!, 'SIGKILL');
      server = await startServer(['serve'], env);
      const deadline = Date.now() + 120_000;
      while (Date.now() < deadline) {
        const run = await runOf(runId);
        if (run.status === 'completed' || run.status === 'failed') return run;
        await sleep(100);
      }
      throw new Error('the run did not finish after the restart');
    };

    const first = await runWithKill(20);
    expect(first).toMatchObject({ status: 'completed', added: OBJECTS, updated: 0, deleted: 0, failed: 0 });

    // New objects to ingest first, deletions after them: a kill during the ingests leaves the
    // deletions to the resumed run.
    for (let i = OBJECTS; i < OBJECTS + ADDED_LATER; i++) await put(i);
    for (let i = 0; i < DELETED; i++) {
      await admin.send(
        new DeleteObjectCommand({ Bucket: bucket, Key: `doc-${String(i).padStart(4, '0')}.txt` }),
      );
    }
    const second = await runWithKill(10);
    expect(second).toMatchObject({
      status: 'completed',
      added: ADDED_LATER,
      updated: 0,
      deleted: DELETED,
      unchanged: OBJECTS - DELETED,
      failed: 0,
    });
    await stopServer(server);
    server = undefined;

    const db = new Database(path.join(dataDir, 'docindex.db'), { readonly: true });
    try {
      const docs = db
        .prepare<[string], { external_id: string }>(
          'SELECT external_id FROM documents WHERE external_id LIKE ?',
        )
        .all(`${sourceId}:%`)
        .map((r) => r.external_id);
      const expected = Array.from(
        { length: OBJECTS + ADDED_LATER - DELETED },
        (_, i) => `${sourceId}:doc-${String(i + DELETED).padStart(4, '0')}.txt`,
      );
      expect(docs.sort()).toEqual(expected);
      const items = db
        .prepare('SELECT count(*) AS n FROM source_items WHERE source_id = ?')
        .get(sourceId) as {
        n: number;
      };
      expect(items.n).toBe(expected.length);
    } finally {
      db.close();
    }
  }, 300_000);
});
