// Source sync at scale, embedded: an s3 source on s3rver (127.0.0.1, allowed by URL_FETCH_ALLOW)
// with 10,000 small objects. The first run ingests them all; then 1% of the objects change and a
// second run makes new versions of those; a third run, with nothing changed, costs the listing
// alone. Times are from POST …/sync to the run's `completed` (the documents' own processing
// continues behind it and is timed apart, to the last `ready`).

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { type Benchmark, type BenchSection, fmt, sleep } from './lib.js';
import { callApi, type DocindexServer, startDocindex } from './server.js';

/**
 * s3rver (a devDependency) in a child process of its own, so it does not share this process's
 * event loop; with OpenSSL's legacy provider, as it seals listing continuation tokens with DES.
 */
function startS3rverChild(directory: string): Promise<{ port: number; stop(): Promise<void> }> {
  const script = `const S3rver = require(${JSON.stringify(createRequire(import.meta.url).resolve('s3rver'))});
new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: process.argv[1] })
  .run().then(({ port }) => process.stdout.write(JSON.stringify({ port }) + '\\n'));
process.stdin.on('end', () => process.exit(0)); process.stdin.resume();`;
  const child = spawn(process.execPath, ['--openssl-legacy-provider', '-e', script, directory], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.once('exit', (code) => reject(new Error(`s3rver exited (${code}) before listening`)));
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (!line) return;
      child.removeAllListeners('exit');
      resolve({
        port: (JSON.parse(line) as { port: number }).port,
        stop: () =>
          new Promise<void>((done) => {
            child.once('exit', () => done());
            child.kill('SIGTERM');
          }),
      });
    });
  });
}

const PUT_CONCURRENCY = 16;
const CHANGED_SHARE = 0.01;

interface Run {
  run_id: string;
  status: string;
  added: number;
  updated: number;
  deleted: number;
  unchanged: number;
  failed: number;
}

function objectText(i: number, version: number): string {
  return `Object ${i}, version ${version}. A short text about shelf ${i % 97} and row ${i % 13}, kept in sync from a bucket.`;
}

async function putAll(client: S3Client, bucket: string, indexes: number[], version: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < indexes.length) {
      const i = indexes[next++]!;
      await client.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: `docs/${String(i).padStart(6, '0')}.txt`,
          Body: objectText(i, version),
        }),
      );
    }
  };
  await Promise.all(Array.from({ length: PUT_CONCURRENCY }, worker));
}

/** Starts a run and resolves with it once it has ended, and how long that took. */
async function timedRun(server: DocindexServer, sourceId: string): Promise<{ run: Run; ms: number }> {
  const start = performance.now();
  const { run_id } = await callApi<{ run_id: string }>(
    server,
    'POST',
    `/v1/sources/${sourceId}/sync`,
    undefined,
    202,
  );
  for (;;) {
    const { runs } = await callApi<{ runs: Run[] }>(server, 'GET', `/v1/sources/${sourceId}/runs?limit=5`);
    const run = runs.find((r) => r.run_id === run_id);
    if (run && (run.status === 'completed' || run.status === 'failed')) {
      if (run.status === 'failed') throw new Error(`run failed: ${JSON.stringify(run)}`);
      return { run, ms: performance.now() - start };
    }
    await sleep(20);
  }
}

/** Waits until no document is queued or processing; when that was first seen. */
async function documentsSettled(server: DocindexServer): Promise<number> {
  for (;;) {
    const pending = await Promise.all(
      ['queued', 'processing'].map((status) =>
        callApi<{ documents: unknown[] }>(server, 'GET', `/v1/documents?status=${status}&limit=1`),
      ),
    );
    if (pending.every((p) => p.documents.length === 0)) return performance.now();
    await sleep(100);
  }
}

export const run: Benchmark = async (options) => {
  const objects = options?.quick ? 1_000 : 10_000;
  const changed = Math.round(objects * CHANGED_SHARE);
  const directory = mkdtempSync(path.join(os.tmpdir(), 'docindex-bench-s3-'));
  const s3 = await startS3rverChild(directory);
  const { port } = s3;
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({
    region: 'us-east-1',
    endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
  let server: DocindexServer | null = null;
  try {
    const bucket = 'bench-sources';
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
    const all = Array.from({ length: objects }, (_, i) => i);
    const uploadStart = performance.now();
    await putAll(client, bucket, all, 1);
    const uploadMs = performance.now() - uploadStart;

    server = await startDocindex({
      env: { URL_FETCH_ALLOW: '127.0.0.1', SECRETS_KEY: 'ab'.repeat(32) },
    });
    const source = await callApi<{ id: string }>(
      server,
      'POST',
      '/v1/sources',
      {
        type: 's3',
        name: 'bench',
        config: {
          bucket,
          prefix: 'docs/',
          endpoint,
          force_path_style: true,
          access_key_id: 'S3RVER',
          secret_access_key: 'S3RVER',
        },
      },
      201,
    );
    const firstStart = performance.now();
    const first = await timedRun(server, source.id);
    const firstReadyMs = (await documentsSettled(server)) - firstStart;

    // Every hundredth object changes.
    const step = Math.round(1 / CHANGED_SHARE);
    await putAll(
      client,
      bucket,
      all.filter((i) => i % step === 0),
      2,
    );
    const secondStart = performance.now();
    const second = await timedRun(server, source.id);
    const secondReadyMs = (await documentsSettled(server)) - secondStart;
    const third = await timedRun(server, source.id);

    const row = (name: string, r: { run: Run; ms: number }, readyMs: number | null) =>
      `| ${name} | ${r.run.added} | ${r.run.updated} | ${r.run.unchanged} | ${fmt(r.ms, 0)} | ${readyMs === null ? '—' : fmt(readyMs, 0)} |`;
    return {
      title: `Sources: a ${objects.toLocaleString('en-US')}-object bucket, then ${CHANGED_SHARE * 100}% changed (embedded, s3rver)`,
      lines: [
        `An s3 source on s3rver (127.0.0.1) with ${objects.toLocaleString('en-US')} objects of ~110 bytes under one prefix (uploaded in ${fmt(uploadMs / 1000)} s, ${PUT_CONCURRENCY} at a time). Run time: POST …/sync to the run's \`completed\`; to ready: POST …/sync to the last document \`ready\`. Then ${changed} objects (${CHANGED_SHARE * 100}%) get new contents, and a third run finds nothing changed.`,
        '',
        '| run | added | updated | unchanged | run time (ms) | to ready (ms) |',
        '|---|---|---|---|---|---|',
        row('first (everything new)', first, firstReadyMs),
        row(`second (${changed} changed)`, second, secondReadyMs),
        row('third (nothing changed)', third, null),
        '',
        `Per item: ${fmt(first.ms / objects, 2)} ms in the first run (fetch, stage, commit each object), ${fmt(third.ms / objects, 3)} ms when unchanged (its listing entry). Machine: ${os.availableParallelism()} cores, load ${fmt(os.loadavg()[0]!)}.`,
      ],
    } satisfies BenchSection;
  } finally {
    await server?.stop();
    client.destroy();
    await s3.stop();
    rmSync(directory, { recursive: true, force: true });
  }
};
