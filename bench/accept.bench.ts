// Accept rate: how many POST /v1/ingest requests the real server answers 202 per second, with its
// workers running (they chunk and index what was accepted, on the same two cores), measured by
// autocannon from this process on 127.0.0.1. Goal for 1-document requests: ≥ 5,000 req/s with
// p99 ≤ 10 ms, as medians of five runs. 50-document requests are reported beside them, and
// 1-document requests to an API process without workers (`serve --no-worker`, the scale-out
// shape): what accepting alone costs. The cases take turns, each run on a fresh server.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { corpusDocuments } from './corpus.js';
import { type Benchmark, type BenchOptions, type BenchSection, fmt, fmtSpread, medianSpread } from './lib.js';
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
const GOAL_P99_MS = 10;

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

/** A case's requests per second in one run. */
const rps = (f: AcceptFigures) => f.result.latency.totalCount / f.result.duration;

interface AcceptCase {
  docsPerRequest: number;
  workers: boolean;
  label: string;
}

const CASES: AcceptCase[] = [
  { docsPerRequest: 1, workers: true, label: '1 document' },
  { docsPerRequest: 50, workers: true, label: '50 documents' },
  { docsPerRequest: 1, workers: false, label: '1 document, no workers' },
];

/** The median of one figure over a case's runs, and its spread (min–max). */
function summary(runs: AcceptFigures[], figure: (f: AcceptFigures) => number) {
  return medianSpread(runs.map(figure));
}

export const run: Benchmark = async (options?: BenchOptions): Promise<BenchSection> => {
  const seconds = options?.quick ? 5 : 10;
  const runs = options?.quick ? 1 : 5;
  const results: AcceptFigures[][] = CASES.map(() => []);
  // The cases take turns (rotated each round): a drift in the machine's load spreads over all.
  for (let round = 0; round < runs; round++) {
    for (let i = 0; i < CASES.length; i++) {
      const at = (i + round) % CASES.length;
      const c = CASES[at]!;
      results[at]!.push(await measureAccept(c.docsPerRequest, seconds, c.workers));
    }
  }
  const line = (c: AcceptCase, figures: AcceptFigures[]) => {
    const r = summary(figures, rps);
    const p99 = summary(figures, (f) => f.result.latency.p99);
    const sum = (pick: (f: AcceptFigures) => number) => figures.reduce((n, f) => n + pick(f), 0);
    const ready = summary(figures, (f) => f.readyPerSecond);
    return `| ${c.workers ? 'running' : 'none (`serve --no-worker`)'} | ${c.docsPerRequest} | ${fmt(figures[0]!.bodyBytes / 1024)} KB | ${fmt(r.median, 0)} | ${fmtSpread(r)} | ${fmt(r.median * c.docsPerRequest, 0)} | ${fmt(summary(figures, (f) => f.result.latency.p50).median, 0)} | ${fmt(p99.median, 0)} | ${fmtSpread(p99)} | ${fmt(Math.max(...figures.map((f) => f.result.latency.max)), 0)} | ${sum((f) => f.result.non2xx).toLocaleString('en-US')} | ${sum((f) => f.result.errors + f.result.timeouts)} | ${c.workers ? fmt(ready.median, 1) : '—'} |`;
  };
  const statuses = CASES.map(
    (c, i) => `${c.label} — ${results[i]!.map((f) => statusCounts(f.result)).join(' / ')}`,
  ).join('; ');
  const one = results[0]!;
  const apiOnly = results[2]!;
  const oneRps = summary(one, rps);
  const p99 = summary(one, (f) => f.result.latency.p99);
  const met = oneRps.median >= GOAL_RPS && p99.median <= GOAL_P99_MS;
  return {
    title: 'Accept rate: POST /v1/ingest under load',
    lines: [
      `autocannon 8 in the bench process → real server (child process, embedded, MAX_QUEUED_DOCUMENTS lifted), ${CONNECTIONS} connections, ${seconds} s per run after a 1 s warm-up, a fresh server per run; ${runs} run(s) of each case, the cases taking turns (rotated each round); medians, with the spread (min–max) of the runs beside them. Documents of ~${fmt(DOC_CHARS / 1000, 0)} KB of real prose. With workers running, the server chunks and indexes what it accepts on the same cores (chunking in its threads, index writes on its event loop). Load generator and server share the machine's cores. Latency in ms (autocannon's histogram has 1 ms resolution); max is the largest of the runs'. The last column counts the documents the workers made ready during the window (the server's database read beside it).`,
      '',
      '| workers | documents per request | body | req/s | req/s spread | documents/s accepted | p50 ms | p99 ms | p99 spread | max ms | non-2xx | errors + timeouts | documents/s made ready meanwhile |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
      ...CASES.map((c, i) => line(c, results[i]!)),
      '',
      `- Status codes, run by run: ${statuses}.`,
      `- Goal (1 document, workers running; medians of ${runs}): ≥ ${GOAL_RPS.toLocaleString('en-US')} req/s and p99 ≤ ${GOAL_P99_MS} ms: **${fmt(oneRps.median, 0)} req/s (${fmtSpread(oneRps)}), p99 ${fmt(p99.median, 0)} ms (${fmtSpread(p99)})**, ${met ? 'met' : 'NOT met'}. Without workers in the process: ${fmt(summary(apiOnly, rps).median, 0)} req/s, p99 ${fmt(summary(apiOnly, (f) => f.result.latency.p99).median, 0)} ms.`,
    ],
  };
};

const thisFile = fileURLToPath(import.meta.url);
if (process.argv.slice(1).some((arg) => path.resolve(arg) === thisFile)) {
  const section = await run({ quick: process.argv.includes('--quick') });
  console.log(`## ${section.title}\n\n${section.lines.join('\n')}`);
}
