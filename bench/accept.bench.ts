// Accept rate: how many POST /v1/ingest requests the real server answers 202 per second, with its
// workers running (they chunk and index what was accepted, on the same two cores), measured by
// autocannon from this process on 127.0.0.1. Goal for 1-document requests: ≥ 5,000 req/s with
// p99 ≤ 25 ms. 50-document requests are reported beside them, and 1-document requests to an API
// process without workers (`serve --no-worker`, the scale-out shape): what accepting alone costs.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { corpusDocuments } from './corpus.js';
import { type Benchmark, type BenchOptions, type BenchSection, fmt } from './lib.js';
import { type DocindexServer, startDocindex } from './server.js';

/** The part of autocannon's result this benchmark reads (the package ships no types). */
interface AutocannonResult {
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodeStats: Record<string, { count: number }>;
  latency: { p50: number; p99: number; max: number; totalCount: number };
  requests: { average: number; total: number };
}
type Autocannon = (opts: Record<string, unknown>) => Promise<AutocannonResult>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

const CONNECTIONS = 10;
const DOC_CHARS = 2_000;
const GOAL_RPS = 5_000;
const GOAL_P99_MS = 25;

export interface AcceptFigures {
  docsPerRequest: number;
  workers: boolean;
  bodyBytes: number;
  result: AutocannonResult;
  /** Documents the server's workers made ready during the measured window, per second. */
  readyPerSecond: number;
}

/** One case on a fresh server; `env` adds to (or overrides) the server's environment. */
export async function measureAccept(
  docsPerRequest: number,
  seconds: number,
  workers = true,
  env: Record<string, string> = {},
): Promise<AcceptFigures> {
  // Nobody drains the queue at this rate: lift the backpressure limit, or the figure would be
  // the 503 rate once 50,000 documents wait.
  const server = await startDocindex({
    env: { MAX_QUEUED_DOCUMENTS: '100000000', ...env },
    args: workers ? [] : ['--no-worker'],
  });
  try {
    const body = JSON.stringify({
      documents: corpusDocuments(docsPerRequest, DOC_CHARS).map((text) => ({ text })),
    });
    const common = {
      url: `${server.baseUrl}/v1/ingest`,
      method: 'POST',
      headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' },
      body,
      connections: CONNECTIONS,
    };
    // Warm-up: JIT, connection setup, SQLite page cache; not counted.
    await autocannon({ ...common, duration: 1 });
    await checkAlive(server);
    // What the workers finished meanwhile: a change that speeds them up takes the cores from
    // accepting, and the accept rate alone would call it a loss.
    const ready = readyCounter(server);
    const readyBefore = ready.count();
    const result = await autocannon({ ...common, duration: seconds });
    const readyPerSecond = (ready.count() - readyBefore) / seconds;
    ready.close();
    await checkAlive(server);
    return { docsPerRequest, workers, bodyBytes: Buffer.byteLength(body), result, readyPerSecond };
  } finally {
    await server.stop();
  }
}

/** Counts the server's ready documents, reading its database beside it. */
function readyCounter(server: DocindexServer): { count(): number; close(): void } {
  const db = new Database(path.join(server.dataDir, 'docindex.db'), { readonly: true });
  const statement = db.prepare("SELECT count(*) FROM documents WHERE status = 'ready'").pluck();
  return { count: () => statement.get() as number, close: () => db.close() };
}

async function checkAlive(server: DocindexServer): Promise<void> {
  const res = await fetch(`${server.baseUrl}/healthz`);
  if (!res.ok) throw new Error(`server unhealthy after load: ${res.status}\n${server.stderr().slice(-2000)}`);
}

function statusCounts(result: AutocannonResult): string {
  return Object.entries(result.statusCodeStats)
    .map(([code, { count }]) => `${code}: ${count.toLocaleString('en-US')}`)
    .join(', ');
}

export const run: Benchmark = async (options?: BenchOptions): Promise<BenchSection> => {
  const seconds = options?.quick ? 5 : 10;
  const one = await measureAccept(1, seconds);
  const fifty = await measureAccept(50, seconds);
  const apiOnly = await measureAccept(1, seconds, false);
  const rps = (f: AcceptFigures) => f.result.latency.totalCount / f.result.duration;
  const line = (f: AcceptFigures) =>
    `| ${f.workers ? 'running' : 'none (`serve --no-worker`)'} | ${f.docsPerRequest} | ${fmt(f.bodyBytes / 1024)} KB | ${fmt(rps(f), 0)} | ${fmt(rps(f) * f.docsPerRequest, 0)} | ${fmt(f.result.latency.p50, 0)} | ${fmt(f.result.latency.p99, 0)} | ${fmt(f.result.latency.max, 0)} | ${f.result.non2xx.toLocaleString('en-US')} | ${f.result.errors + f.result.timeouts} | ${f.workers ? fmt(f.readyPerSecond, 1) : '—'} |`;
  const oneRps = rps(one);
  const p99 = one.result.latency.p99;
  const met = oneRps >= GOAL_RPS && p99 <= GOAL_P99_MS;
  return {
    title: 'Accept rate: POST /v1/ingest under load',
    lines: [
      `autocannon 8 in the bench process → real server (child process, embedded, MAX_QUEUED_DOCUMENTS lifted), ${CONNECTIONS} connections, ${seconds} s per case after a 1 s warm-up, fresh server per case; documents of ~${fmt(DOC_CHARS / 1000, 0)} KB of real prose. With workers running, the server chunks and indexes what it accepts on the same cores (chunking in its threads, index writes on its event loop). Load generator and server share the machine's cores. Latency in ms (autocannon's histogram has 1 ms resolution). The last column counts the documents the workers made ready during the window (the server's database read beside it).`,
      '',
      '| workers | documents per request | body | req/s | documents/s accepted | p50 ms | p99 ms | max ms | non-2xx | errors + timeouts | documents/s made ready meanwhile |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
      line(one),
      line(fifty),
      line(apiOnly),
      '',
      `- Status codes: 1 document — ${statusCounts(one.result)}; 50 documents — ${statusCounts(fifty.result)}; 1 document, no workers — ${statusCounts(apiOnly.result)}.`,
      `- Goal (1 document, workers running): ≥ ${GOAL_RPS.toLocaleString('en-US')} req/s and p99 ≤ ${GOAL_P99_MS} ms: **${fmt(oneRps, 0)} req/s, p99 ${fmt(p99, 0)} ms**, ${met ? 'met' : 'NOT met'}. Without workers in the process: ${fmt(rps(apiOnly), 0)} req/s, p99 ${fmt(apiOnly.result.latency.p99, 0)} ms.`,
    ],
  };
};

const thisFile = fileURLToPath(import.meta.url);
if (process.argv.slice(1).some((arg) => path.resolve(arg) === thisFile)) {
  const section = await run({ quick: process.argv.includes('--quick') });
  console.log(`## ${section.title}\n\n${section.lines.join('\n')}`);
}
