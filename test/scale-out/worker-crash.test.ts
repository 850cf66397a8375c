// Durability (scale-out): one API and two `docindex worker` processes on PostgreSQL + BullMQ.
// While 1,000 documents are posted and processed, a worker is killed with SIGKILL three times at
// random moments (a fresh worker takes its place each time). Afterwards every accepted document
// is `ready` with the chunk count of a clean run, and no (document_id, chunk_index) exists twice.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { chunkText } from '../../src/pipeline/chunk/chunker.js';
import {
  runCli,
  type ServerProcess,
  startServer,
  startWorker,
  stopChild,
  stopServer,
  type WorkerProcess,
} from '../helpers/process.js';
import { syntheticDocument } from '../helpers/texts.js';
import {
  checkServices,
  deleteRedisPrefix,
  describeScaleOut,
  dropSchema,
  freshPrefix,
  freshSchema,
} from './services.js';

const DOCS = 1_000;
const BATCH = 50;
const KILLS = 3;
const CHUNK = { chunkSize: 128, chunkOverlap: 16 };

const services = await checkServices(['DATABASE_URL', 'REDIS_URL']);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describeScaleOut('scale-out: SIGKILL of workers during a 1,000-document ingest', services, () => {
  const databaseUrl = services.urls.DATABASE_URL ?? '';
  const redisUrl = services.urls.REDIS_URL ?? '';
  const schema = freshSchema();
  const prefix = freshPrefix();
  const env: Record<string, string> = {
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    DATABASE_SCHEMA: schema,
    REDIS_PREFIX: prefix,
    JOB_LEASE_MS: '3000',
    WORKER_CONCURRENCY: '4',
    EXTRACT_WORKERS: '1',
    DEFAULT_RATE_LIMIT_RPM: '1000000',
  };
  let work = '';
  let api: ServerProcess;
  const workers: WorkerProcess[] = [];
  let db: pg.Pool;

  beforeAll(async () => {
    work = mkdtempSync(path.join(tmpdir(), 'docindex-worker-crash-'));
    env.BLOB_DIR = path.join(work, 'blobs');
    env.DATA_DIR = path.join(work, 'data');
    expect(runCli(['migrate'], env).status).toBe(0);
    db = new pg.Pool({ connectionString: databaseUrl, max: 2 });
    api = await startServer(['serve', '--no-worker'], env);
    workers.push(...(await Promise.all([0, 1].map(() => startWorker(env)))));
  }, 120_000);

  afterAll(async () => {
    await Promise.all([api ? stopServer(api) : undefined, ...workers.map((w) => stopChild(w.child))]);
    await db?.end();
    await dropSchema(databaseUrl, schema);
    await deleteRedisPrefix(redisUrl, prefix);
    if (work) rmSync(work, { recursive: true, force: true });
  }, 60_000);

  it('every accepted document ends ready with one set of chunks', async () => {
    const created = runCli(['orgs', 'create', '--name', 'crash', '--json'], env);
    expect(created.status, created.stderr).toBe(0);
    const { api_key: key } = JSON.parse(created.stdout.trim()) as { api_key: string };
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const texts = Array.from({ length: DOCS }, (_, i) => syntheticDocument(i));
    const accepted = new Map<string, number>();

    const posting = (async () => {
      for (let first = 0; first < DOCS; first += BATCH) {
        const res = await fetch(`${api.baseUrl}/v1/ingest`, {
          method: 'POST',
          headers,
          body: JSON.stringify({
            documents: texts.slice(first, first + BATCH).map((text) => ({ text })),
            ...{ chunk_size: CHUNK.chunkSize, chunk_overlap: CHUNK.chunkOverlap },
          }),
        });
        expect(res.status).toBe(202);
        const ids = ((await res.json()) as { document_ids: string[] }).document_ids;
        for (const [i, id] of ids.entries()) accepted.set(id, first + i);
      }
    })();
    const killed: number[] = [];
    const killing = (async () => {
      for (let k = 0; k < KILLS; k++) {
        await sleep(300 + Math.floor(Math.random() * 1_200));
        const victim = workers.splice(Math.floor(Math.random() * workers.length), 1)[0]!;
        killed.push(victim.child.pid ?? 0);
        await stopChild(victim.child, 'SIGKILL');
        workers.push(await startWorker(env));
      }
    })();
    await Promise.all([posting, killing]);
    expect(accepted.size).toBe(DOCS);

    const table = (name: string) => `"${schema}"."${name}"`;
    const deadline = Date.now() + 180_000;
    let unfinished = DOCS;
    while (Date.now() < deadline) {
      unfinished = Number(
        (
          await db.query(
            `SELECT count(*) AS n FROM ${table('documents')} WHERE status IN ('queued', 'processing')`,
          )
        ).rows[0].n,
      );
      if (unfinished === 0) break;
      await sleep(200);
    }
    expect(unfinished).toBe(0);

    const { rows } = await db.query<{ id: string; status: string; chunk_count: number; rows: string }>(
      `SELECT d.id, d.status, d.chunk_count,
              (SELECT count(*) FROM ${table('chunks')} c WHERE c.document_id = d.id) AS rows
       FROM ${table('documents')} d`,
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const [id, index] of accepted) {
      const expected = chunkText(texts[index]!, CHUNK).chunks.length;
      expect(byId.get(id)).toMatchObject({ status: 'ready', chunk_count: expected });
      expect(Number(byId.get(id)!.rows)).toBe(expected);
    }
    const duplicates = (
      await db.query(`SELECT 1 FROM ${table('chunks')} GROUP BY document_id, chunk_index HAVING count(*) > 1`)
    ).rowCount;
    const ready = rows.filter((r) => r.status === 'ready').length;
    const failed = rows.filter((r) => r.status === 'failed').length;
    console.log(
      `crash test (scale-out, ${KILLS} × SIGKILL of a worker, pids ${killed.join(', ')}): accepted ${accepted.size}, ` +
        `ready ${ready}, failed ${failed}, duplicate chunks ${duplicates}`,
    );
    expect(duplicates).toBe(0);
    expect(rows).toHaveLength(DOCS);
  }, 300_000);
});
