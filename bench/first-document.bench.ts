// First contact: how long `npm start` takes to listen when nothing changed since the last build,
// and how long the first document after a start takes to be ready, beside the second one (the
// same server, warm). Each of several starts is a fresh server on a fresh DATA_DIR; the client is
// warmed on /healthz first, so its own first-request costs are not counted. Goals: start ≤ 3 s,
// first document ≤ 200 ms. With DATABASE_URL set, also a document's POST to `ready` scaled out
// without Redis, the worker in a process of its own and idle when the document comes.
import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Benchmark, dropPostgresSchema, fmt, median, projectRoot, sleep } from './lib.js';
import { type DocindexServer, startDocindex, startWorkerProcess, stopProcess } from './server.js';

const STARTS = 5;
/** Documents sent one at a time to the scale-out deployment without Redis. */
const PG_ONLY_DOCUMENTS = 10;
/** Between them: past the worker's claim pass, so that each finds it idle. */
const PG_ONLY_PAUSE_MS = 400;
const GOAL_START_MS = 3_000;
const GOAL_FIRST_MS = 200;

/** Ms from `npm start` to its "listening" line, on a fresh DATA_DIR and a free port. */
async function npmStartMs(): Promise<number> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'docindex-bench-start-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
  };
  for (const name of ['DATABASE_URL', 'REDIS_URL']) delete env[name];
  const started = performance.now();
  // Its own process group: npm does not pass a signal on to the server it started.
  const child = spawn('npm', ['start', '--silent'], {
    cwd: projectRoot(),
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  try {
    return await new Promise<number>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (/listening on http/.test(out)) resolve(performance.now() - started);
      });
      child.once('exit', (code) => reject(new Error(`npm start exited with ${code} before listening`)));
    });
  } finally {
    // npm, when it has not ended, and the server in its group.
    const exited =
      child.exitCode === null && child.signalCode === null
        ? new Promise((resolve) => child.once('exit', resolve))
        : Promise.resolve();
    try {
      process.kill(-child.pid!, 'SIGTERM');
    } catch {
      // The group has ended already.
    }
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Ms from POST /v1/ingest of one short document to its status `ready`, polled every 5 ms. */
async function documentMs(server: DocindexServer, text: string): Promise<number> {
  const headers = { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' };
  const started = performance.now();
  const accepted = await fetch(`${server.baseUrl}/v1/ingest`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ documents: [{ text }] }),
  });
  if (accepted.status !== 202) throw new Error(`ingest answered ${accepted.status}`);
  const id = ((await accepted.json()) as { document_ids: string[] }).document_ids[0];
  for (;;) {
    const res = await fetch(`${server.baseUrl}/v1/documents/${id}`, { headers });
    const { status } = (await res.json()) as { status: string };
    if (status === 'ready') return performance.now() - started;
    if (status === 'failed') throw new Error('the document failed');
    await sleep(5);
  }
}

/**
 * POST to `ready` of documents sent one at a time to `serve --no-worker` and one `docindex worker`
 * on PostgreSQL alone (its documents table is the job queue), each when the worker is idle.
 */
async function pgOnlyDocumentMs(databaseUrl: string): Promise<number[]> {
  const schema = `bench_first_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const env = { DATABASE_URL: databaseUrl, DATABASE_SCHEMA: schema };
  let server: DocindexServer | null = null;
  let worker: Awaited<ReturnType<typeof startWorkerProcess>> | null = null;
  try {
    server = await startDocindex({ env, args: ['--no-worker'] });
    const workerEnv: NodeJS.ProcessEnv = { ...process.env, ...env, DATA_DIR: server.dataDir };
    delete workerEnv.REDIS_URL;
    worker = await startWorkerProcess(workerEnv);
    await fetch(`${server.baseUrl}/healthz`);
    const times: number[] = [];
    for (let i = 0; i < PG_ONLY_DOCUMENTS; i++) {
      await sleep(PG_ONLY_PAUSE_MS);
      times.push(
        await documentMs(server, `Document ${i}: eels cross the ocean to spawn in the Sargasso Sea.`),
      );
    }
    return times;
  } finally {
    if (worker) await stopProcess(worker);
    await server?.stop();
    await dropPostgresSchema(databaseUrl, schema);
  }
}

const range = (values: number[]) => `${fmt(Math.min(...values), 0)}–${fmt(Math.max(...values), 0)}`;

export const run: Benchmark = async () => {
  const title = 'First contact: npm start, and the first document after a start';
  const loadBefore = os
    .loadavg()
    .map((l) => fmt(l, 2))
    .join(' / ');
  // "Nothing changed": the build is brought up to date first, so no start below compiles.
  execFileSync(process.execPath, [path.join(projectRoot(), 'scripts', 'build.mjs'), '--if-stale'], {
    stdio: 'inherit',
  });
  const starts: number[] = [];
  const firsts: number[] = [];
  const seconds: number[] = [];
  for (let i = 0; i < STARTS; i++) {
    starts.push(await npmStartMs());
    const server = await startDocindex();
    try {
      await fetch(`${server.baseUrl}/healthz`);
      firsts.push(
        await documentMs(server, 'Salmon swim upstream to spawn in the rivers where they hatched.'),
      );
      seconds.push(await documentMs(server, 'Trout stay in the rivers and lakes all their lives.'));
    } finally {
      await server.stop();
    }
  }
  const databaseUrl = process.env.DATABASE_URL;
  const pgOnly = databaseUrl ? await pgOnlyDocumentMs(databaseUrl) : null;
  const row = (name: string, values: number[], goal: string) =>
    `| ${name} | ${fmt(median(values), 0)} | ${range(values)} | ${goal} |`;
  return {
    title,
    lines: [
      `${STARTS} starts, each a fresh server on a fresh DATA_DIR (embedded, the default settings).`,
      '',
      '| figure | median ms | min–max ms | goal |',
      '|---|---|---|---|',
      row(
        '`npm start` to "listening", nothing changed since the last build',
        starts,
        `≤ ${GOAL_START_MS} ms`,
      ),
      row('first document after a start: POST to `ready`', firsts, `≤ ${GOAL_FIRST_MS} ms`),
      row('second document, same server', seconds, 'the reference'),
      ...(pgOnly
        ? [
            row(
              `scaled out without Redis (\`serve --no-worker\` + 1 \`worker\`, PostgreSQL): one document's POST to \`ready\`, the worker idle (${PG_ONLY_DOCUMENTS} in turn)`,
              pgOnly,
              '—',
            ),
          ]
        : []),
      '',
      `- First ÷ second document (medians): ${fmt(median(firsts) / median(seconds), 2)}×.`,
      pgOnly
        ? `- Scaled out without Redis: ${PG_ONLY_PAUSE_MS} ms between documents, so the worker has gone idle; it is told of each by a PostgreSQL NOTIFY and polls every 250 ms besides.`
        : '- Scaled out without Redis: not measured (DATABASE_URL not set).',
      `- Machine load (1 / 5 / 15-minute load average, ${os.cpus().length} CPUs, shared with other work): ${loadBefore} before, ${os
        .loadavg()
        .map((l) => fmt(l, 2))
        .join(' / ')} after.`,
    ],
  };
};
