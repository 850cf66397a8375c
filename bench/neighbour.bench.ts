// Noisy neighbour: while one organisation's three large uploads (84 MB of text each, ~35k chunks)
// are extracted, chunked and indexed, how long do another organisation's queries and the health
// check take? The same queries are first timed on the idle server (the reference of this run).
// Also the server's memory: resident set at start, its peak during the uploads, and once idle.
// Goal: the other tenant's query p99 ≤ 50 ms and max ≤ 250 ms during the uploads.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type Benchmark,
  type BenchOptions,
  type BenchSection,
  fmt,
  median,
  percentile,
  sleep,
} from './lib.js';
import {
  callApi,
  createOrg,
  type DocindexServer,
  documentStatuses,
  prepareUploads,
  residentBytes,
  startDocindex,
  streamUpload,
  waitUntilDone,
} from './server.js';

const MB = 1_000_000;
const MIB = 1024 * 1024;
const QUERY_EVERY_MS = 50;
const HEALTH_EVERY_MS = 100;
const IDLE_SAMPLE_MS = 1_000;
const IDLE_AFTER_MS = 15_000;
const DONE_TIMEOUT_MS = 900_000;
const GOAL_P99_MS = 50;
const GOAL_MAX_MS = 250;
const QUERIES = ['salmon river', 'migration upstream', 'spawning grounds', 'fish ladder dam'];

interface Timed {
  at: number;
  ms: number;
  status: number;
}

/** Sends one request every `everyMs` (never two at once) until `stop` is set; times each. */
async function probe(
  send: (i: number) => Promise<number>,
  everyMs: number,
  stop: { done: boolean },
): Promise<Timed[]> {
  const out: Timed[] = [];
  for (let i = 0; !stop.done; i++) {
    const start = performance.now();
    let status = 0;
    try {
      status = await send(i);
    } catch {
      status = -1;
    }
    const ms = performance.now() - start;
    out.push({ at: start, ms, status });
    await sleep(Math.max(0, everyMs - ms));
  }
  return out;
}

function queryOf(server: DocindexServer, apiKey: string) {
  return async (i: number) => {
    const res = await fetch(`${server.baseUrl}/v1/query`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: QUERIES[i % QUERIES.length], top_k: 10 }),
    });
    await res.arrayBuffer();
    return res.status;
  };
}

function healthOf(server: DocindexServer) {
  return async () => {
    const res = await fetch(`${server.baseUrl}/healthz`);
    await res.arrayBuffer();
    return res.status;
  };
}

interface RunResult {
  idleQuery: Timed[];
  busyQuery: Timed[];
  busyHealth: Timed[];
  seconds: number;
  chunks: number;
  rssStart: number;
  rssPeak: number;
  rssIdle: number;
  statuses: string[];
}

async function oneRun(fileBytes: number, files: number): Promise<RunResult> {
  const server = await startDocindex();
  try {
    const other = await createOrg(server, 'neighbour');
    // The other tenant's own documents, so its queries rank real matches.
    const texts = Array.from(
      { length: 200 },
      (_, i) =>
        `Report ${i}: salmon swim upstream on their migration to the spawning grounds; a fish ladder at the dam ${i % 7} helps them.`,
    );
    const ownIds: string[] = [];
    for (let i = 0; i < texts.length; i += 50) {
      const ack = await fetch(`${server.baseUrl}/v1/ingest`, {
        method: 'POST',
        headers: { authorization: `Bearer ${other.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ documents: texts.slice(i, i + 50).map((text) => ({ text })) }),
      }).then((r) => r.json() as Promise<{ document_ids: string[] }>);
      ownIds.push(...ack.document_ids);
    }
    await waitUntilDone({ ...server, apiKey: other.apiKey }, () => ownIds, {
      expected: ownIds.length,
      timeoutMs: 60_000,
    });
    prepareUploads();
    await sleep(1_000);
    const rssStart = residentBytes(server.pid);

    const idleStop = { done: false };
    const idle = probe(queryOf(server, other.apiKey), QUERY_EVERY_MS, idleStop);
    await sleep(5_000);
    idleStop.done = true;
    const idleQuery = await idle;

    const stop = { done: false };
    let rssPeak = rssStart;
    const sampler = setInterval(() => {
      rssPeak = Math.max(rssPeak, residentBytes(server.pid));
    }, 100);
    const queries = probe(queryOf(server, other.apiKey), QUERY_EVERY_MS, stop);
    const health = probe(healthOf(server), HEALTH_EVERY_MS, stop);
    const start = performance.now();
    const uploads = await Promise.all(
      Array.from({ length: files }, (_, i) => streamUpload(server, fileBytes, `big-${i}.txt`)),
    );
    const ids = uploads.map((u) => {
      if (u.status !== 202) throw new Error(`upload answered ${u.status}: ${u.body.slice(0, 300)}`);
      return (JSON.parse(u.body) as { document_ids: string[] }).document_ids[0]!;
    });
    let statuses: string[] = [];
    let chunks = 0;
    while (performance.now() - start < DONE_TIMEOUT_MS) {
      const docs = await documentStatuses(server, ids);
      statuses = docs.map((d) => d.status);
      if (docs.every((d) => d.status === 'ready' || d.status === 'failed')) {
        chunks = docs.reduce((n, d) => n + (d.chunk_count ?? 0), 0);
        break;
      }
      await sleep(250);
    }
    const seconds = (performance.now() - start) / 1000;
    stop.done = true;
    const [busyQuery, busyHealth] = await Promise.all([queries, health]);
    clearInterval(sampler);

    // Memory once idle: the lowest of the samples over the last seconds of a quiet period.
    const idleSamples: number[] = [];
    const quietUntil = performance.now() + IDLE_AFTER_MS;
    while (performance.now() < quietUntil) {
      idleSamples.push(residentBytes(server.pid));
      await sleep(IDLE_SAMPLE_MS);
    }
    await callApi({ ...server, apiKey: other.apiKey }, 'GET', '/v1/usage');
    return {
      idleQuery,
      busyQuery,
      busyHealth,
      seconds,
      chunks,
      rssStart,
      rssPeak,
      rssIdle: Math.min(...idleSamples.slice(-5)),
      statuses,
    };
  } finally {
    await server.stop();
  }
}

const ms = (n: number) => fmt(n, 1);
const mib = (n: number) => `${fmt(n / MIB, 0)} MiB`;
const summary = (t: Timed[]) => {
  const values = t.map((x) => x.ms);
  return {
    p50: percentile(values, 50),
    p99: percentile(values, 99),
    max: Math.max(...values),
    n: values.length,
  };
};

export const run: Benchmark = async (options?: BenchOptions & { runs?: number }): Promise<BenchSection> => {
  const quick = options?.quick ?? false;
  const fileBytes = (quick ? 8 : 84) * MB;
  const files = 3;
  const repeats = options?.runs ?? (quick ? 1 : 3);
  const runs: RunResult[] = [];
  for (let i = 0; i < repeats; i++) runs.push(await oneRun(fileBytes, files));

  const rows = runs.map((r, i) => {
    const idle = summary(r.idleQuery);
    const q = summary(r.busyQuery);
    const hz = summary(r.busyHealth);
    const failed =
      r.busyQuery.filter((t) => t.status !== 200).length +
      r.busyHealth.filter((t) => t.status !== 200).length;
    return {
      line: `| ${i + 1} | ${ms(idle.p50)} / ${ms(idle.p99)} | ${ms(q.p50)} | ${ms(q.p99)} | ${ms(q.max)} | ${ms(hz.p99)} / ${ms(hz.max)} | ${q.n} + ${hz.n} | ${failed} | ${fmt(r.seconds, 1)} s | ${r.chunks.toLocaleString('en-US')} | ${r.statuses.join(', ')} | ${mib(r.rssStart)} / ${mib(r.rssPeak)} / ${mib(r.rssIdle)} |`,
      q,
    };
  });
  const p99 = median(rows.map((r) => r.q.p99));
  const max = median(rows.map((r) => r.q.max));
  const met = p99 <= GOAL_P99_MS && max <= GOAL_MAX_MS;
  return {
    title: 'Noisy neighbour: other tenants during three large uploads',
    lines: [
      `Real server (child process, embedded, default settings, workers running). Organisation A uploads ${files} text files of ${fmt(fileBytes / MB, 0)} MB at once (streamed multipart); meanwhile organisation B (200 small documents of its own) sends one query every ${QUERY_EVERY_MS} ms and /healthz is called every ${HEALTH_EVERY_MS} ms, each request waiting for the previous one, until all of A's documents are ready. Reference: B's same queries for 5 s on the idle server just before. RSS is the VmRSS of the server and of the pipeline processes that read its files: before the uploads / peak during them / lowest over the last 5 s of ${IDLE_AFTER_MS / 1000} s idle after. Latencies in ms. ${repeats} run(s), each on a fresh server.`,
      '',
      '| run | idle query p50 / p99 | query p50 | query p99 | query max | healthz p99 / max | requests | non-200 | A indexed in | A chunks | A status | RSS start / peak / idle |',
      '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|',
      ...rows.map((r) => r.line),
      '',
      `- Goal: B's query p99 ≤ ${GOAL_P99_MS} ms and max ≤ ${GOAL_MAX_MS} ms during the uploads (medians over runs): **p99 ${ms(p99)} ms, max ${ms(max)} ms**, ${met ? 'met' : 'NOT met'}${quick ? ' (quick run: smaller files, not the goal)' : ''}.`,
    ],
  };
};

const thisFile = fileURLToPath(import.meta.url);
if (process.argv.slice(1).some((arg) => path.resolve(arg) === thisFile)) {
  // `--runs N` overrides the number of runs (one full-size run, while working on it).
  const runs = process.argv.indexOf('--runs');
  const section = await run({
    quick: process.argv.includes('--quick'),
    ...(runs === -1 ? {} : { runs: Number(process.argv[runs + 1]) }),
  });
  console.log(`## ${section.title}\n\n${section.lines.join('\n')}`);
}
