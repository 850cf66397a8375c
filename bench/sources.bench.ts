// Source sync at scale, embedded: an s3 source on s3rver (127.0.0.1, allowed by URL_FETCH_ALLOW)
// with 10,000 small objects. The first run ingests them all; then 1% of the objects change and a
// second run makes new versions of those; a third run, with nothing changed, costs the listing
// alone. Times are from POST …/sync to the run's `completed` (the documents' own processing
// continues behind it and is timed apart, to the last `ready`).
// Then, on the same server: a first run over 1,000 small objects against uploading the same files
// through POST /v1/ingest/file (one at a time, as the run ingests them), each to the last `ready`,
// in ROUNDS alternating rounds; and a web source crawling a loopback site of WEB_PAGES pages, a
// first run and a second with nothing changed (every page a 304).

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { type Benchmark, type BenchSection, fmt, median, sleep } from './lib.js';
import { callApi, type DocindexServer, startDocindex, streamFileUpload } from './server.js';

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
/** The run-versus-upload comparison: objects per round, and rounds. */
const COMPARED_OBJECTS = 1_000;
const ROUNDS = 3;
const WEB_PAGES = 500;

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

async function putAll(
  client: S3Client,
  bucket: string,
  indexes: number[],
  version: number,
  prefix = 'docs/',
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < indexes.length) {
      const i = indexes[next++]!;
      await client.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: `${prefix}${String(i).padStart(6, '0')}.txt`,
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

/** One round of the comparison: documents/s of a first run and of uploading the same files, each to the last `ready`. */
async function compareRound(
  server: DocindexServer,
  client: S3Client,
  endpoint: string,
  bucket: string,
  round: number,
): Promise<{ run: number; upload: number }> {
  const prefix = `cmp-${round}/`;
  const indexes = Array.from({ length: COMPARED_OBJECTS }, (_, i) => round * COMPARED_OBJECTS + i);
  await putAll(client, bucket, indexes, 1, prefix);
  const source = await callApi<{ id: string }>(
    server,
    'POST',
    '/v1/sources',
    {
      type: 's3',
      name: `compare ${round}`,
      config: {
        bucket,
        prefix,
        endpoint,
        force_path_style: true,
        access_key_id: 'S3RVER',
        secret_access_key: 'S3RVER',
      },
    },
    201,
  );
  const runStart = performance.now();
  await timedRun(server, source.id);
  const runMs = (await documentsSettled(server)) - runStart;

  const uploadStart = performance.now();
  for (const i of indexes) {
    const body = Buffer.from(objectText(i, 1));
    const res = await streamFileUpload(server, {
      filename: `${String(i).padStart(6, '0')}.txt`,
      contentType: 'text/plain',
      bytes: body.length,
      parts: [body],
    });
    if (res.status !== 202) throw new Error(`upload answered ${res.status}: ${res.body.slice(0, 200)}`);
  }
  const uploadMs = (await documentsSettled(server)) - uploadStart;
  return { run: COMPARED_OBJECTS / (runMs / 1000), upload: COMPARED_OBJECTS / (uploadMs / 1000) };
}

/** A site on 127.0.0.1: an index page linking to `pages - 1` pages, each with an ETag. */
async function startSite(pages: number): Promise<{ origin: string; stop(): Promise<void> }> {
  const paths = Array.from({ length: pages - 1 }, (_, i) => `/page-${i}.html`);
  const index = `<!doctype html><html><head><title>Index</title></head><body>${paths.map((p) => `<a href="${p}">${p}</a>`).join(' ')}</body></html>`;
  const server = http.createServer((req, res) => {
    const path = req.url ?? '/';
    if (path === '/robots.txt') return res.writeHead(404).end();
    const n = /^\/page-(\d+)\.html$/.exec(path)?.[1];
    if (path !== '/' && n === undefined) return res.writeHead(404).end();
    const etag = `"${path === '/' ? 'index' : n}-1"`;
    if (req.headers['if-none-match'] === etag) return res.writeHead(304, { etag }).end();
    const body =
      path === '/'
        ? index
        : `<!doctype html><html><head><title>Page ${n}</title></head><body><p>${objectText(Number(n), 1)}</p></body></html>`;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', etag }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const spread = (values: number[]) => `${fmt(Math.min(...values))}–${fmt(Math.max(...values))}`;

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

    const rounds: Array<{ run: number; upload: number }> = [];
    for (let round = 0; round < ROUNDS; round++) {
      rounds.push(await compareRound(server, client, endpoint, bucket, round));
    }
    const ratios = rounds.map((r) => r.run / r.upload);

    const site = await startSite(WEB_PAGES);
    let web: { first: { run: Run; ms: number }; second: { run: Run; ms: number } };
    try {
      const webSource = await callApi<{ id: string }>(
        server,
        'POST',
        '/v1/sources',
        {
          type: 'web',
          name: 'bench site',
          config: { start_urls: [`${site.origin}/`], max_pages: WEB_PAGES, max_depth: 1 },
        },
        201,
      );
      const webFirst = await timedRun(server, webSource.id);
      await documentsSettled(server);
      web = { first: webFirst, second: await timedRun(server, webSource.id) };
    } finally {
      await site.stop();
    }

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
        `Per item: ${fmt(first.ms / objects, 2)} ms in the first run (fetch, stage, commit each object), ${fmt(third.ms / objects, 3)} ms when unchanged (its listing entry).`,
        '',
        `First run over ${COMPARED_OBJECTS.toLocaleString('en-US')} small objects (a fresh prefix and source each round) against uploading the same files through POST /v1/ingest/file one at a time, as the run ingests them; documents/s to the last \`ready\`, ${ROUNDS} rounds on the same server (median, min–max). Goal: run ≥ 0.8× upload.`,
        '',
        '| figure | median | min–max |',
        '|---|---:|---:|',
        `| first run, documents/s | ${fmt(median(rounds.map((r) => r.run)))} | ${spread(rounds.map((r) => r.run))} |`,
        `| POST /v1/ingest/file, documents/s | ${fmt(median(rounds.map((r) => r.upload)))} | ${spread(rounds.map((r) => r.upload))} |`,
        `| run ÷ upload | ${fmt(median(ratios), 2)}× | ${fmt(Math.min(...ratios), 2)}×–${fmt(Math.max(...ratios), 2)}× |`,
        '',
        `A web source crawling a site on 127.0.0.1 (in the bench process) of ${WEB_PAGES} pages: an index linking to ${WEB_PAGES - 1} small pages, each with an ETag; robots.txt 404. Pages/s: pages over POST …/sync to the run's \`completed\`; the second run finds nothing changed (a 304 for every page).`,
        '',
        '| web run | added | unchanged | run time (ms) | pages/s |',
        '|---|---|---|---|---|',
        `| first (everything new) | ${web.first.run.added} | ${web.first.run.unchanged} | ${fmt(web.first.ms, 0)} | ${fmt(WEB_PAGES / (web.first.ms / 1000))} |`,
        `| second (nothing changed) | ${web.second.run.added} | ${web.second.run.unchanged} | ${fmt(web.second.ms, 0)} | ${fmt(WEB_PAGES / (web.second.ms / 1000))} |`,
        '',
        `Machine: ${os.availableParallelism()} cores, load ${fmt(os.loadavg()[0]!)} at the end.`,
      ],
    } satisfies BenchSection;
  } finally {
    await server?.stop();
    client.destroy();
    await s3.stop();
    rmSync(directory, { recursive: true, force: true });
  }
};
