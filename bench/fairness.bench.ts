// Fairness between orgs: one org's backlog must not delay another org's small document. Org A
// ingests four large texts in one request (2.4 MB each: prose, then text without a single space,
// which chunks slowest), then org B one line; the delay
// is B's 202 → B ready, polled every 25 ms. Each run uses a fresh embedded server (default
// WORKER_CONCURRENCY and EXTRACT_WORKERS); the section reports the median of the runs and their
// spread, beside how long A's four documents took.
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Benchmark, type BenchOptions, type BenchSection, fmt, median, sleep } from './lib.js';
import {
  callApi,
  createOrg,
  type DocindexServer,
  documentStatuses,
  type IngestAck,
  startDocindex,
  waitUntilDone,
} from './server.js';

const SENTENCE = 'Sentences follow one another across the page, each a little different. ';

interface Backlog {
  label: string;
  text(n: number, bytes: number): string;
}

const BACKLOGS: readonly Backlog[] = [
  {
    label: 'prose',
    text: (n, bytes) => `Document ${n}. ${SENTENCE.repeat(Math.ceil(bytes / SENTENCE.length))}`,
  },
  { label: 'no whitespace (`xxx…`)', text: (n, bytes) => `${n}${'x'.repeat(bytes)}` },
];

async function ingest(server: DocindexServer, apiKey: string, texts: string[]): Promise<string[]> {
  const res = await fetch(`${server.baseUrl}/v1/ingest`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ documents: texts.map((text) => ({ text })) }),
  });
  const body = await res.text();
  if (res.status !== 202) throw new Error(`POST /v1/ingest answered ${res.status}: ${body.slice(0, 300)}`);
  return (JSON.parse(body) as IngestAck).document_ids;
}

interface RunResult {
  delayMs: number;
  backlogMs: number;
  /** Of A's documents, how many were still queued when B's was ready. */
  aQueued: number;
}

async function oneRun(backlogKind: Backlog, docBytes: number, large: number): Promise<RunResult> {
  const server = await startDocindex();
  try {
    const other = await createOrg(server, 'other org');
    const texts = Array.from({ length: large }, (_, i) => backlogKind.text(i, docBytes));
    const t0 = performance.now();
    const backlog = await ingest(server, server.apiKey, texts);
    const [small] = await ingest(server, other.apiKey, ['One line from another org.']);
    const bAt = performance.now();
    let readyAt = 0;
    while (readyAt === 0) {
      const { status } = await callApi<{ status: string }>(
        { ...server, apiKey: other.apiKey },
        'GET',
        `/v1/documents/${small}`,
      );
      if (status === 'ready' || status === 'failed') readyAt = performance.now();
      else await sleep(25);
    }
    const aQueued = (await documentStatuses(server, backlog)).filter((d) => d.status === 'queued').length;
    const { finishedAt } = await waitUntilDone(server, () => backlog, {
      expected: backlog.length,
      timeoutMs: 900_000,
    });
    return { delayMs: readyAt - bAt, backlogMs: finishedAt - t0, aQueued };
  } finally {
    await server.stop();
  }
}

export const run: Benchmark = async (options?: BenchOptions): Promise<BenchSection> => {
  const quick = options?.quick ?? false;
  const runs = 3;
  const docBytes = quick ? 600_000 : 2_400_000;
  const large = 4;
  const title = 'Fairness: another org’s small document behind one org’s backlog';
  const lines = [
    `Real server (child process, embedded, default WORKER_CONCURRENCY and EXTRACT_WORKERS), fresh for each of ${runs} runs per backlog. Org A sends ${large} texts of ${fmt(docBytes / 1e6, 1)} MB in one POST /v1/ingest; then org B sends one line. Delay = B's 202 → B's document seen ready (polled every 25 ms).`,
    '',
    "| A's texts | runs | B delay median ms | spread (min–max) ms | A backlog done median s | A documents still queued when B was ready |",
    '|---|---:|---:|---:|---:|---:|',
  ];
  for (const kind of BACKLOGS) {
    const results: RunResult[] = [];
    for (let i = 0; i < runs; i++) results.push(await oneRun(kind, docBytes, large));
    const delays = results.map((r) => r.delayMs);
    lines.push(
      `| ${kind.label} | ${runs} | ${fmt(median(delays), 0)} | ${fmt(Math.min(...delays), 0)}–${fmt(Math.max(...delays), 0)} | ${fmt(median(results.map((r) => r.backlogMs)) / 1000, 1)} | ${results.map((r) => r.aQueued).join(', ')} |`,
    );
  }
  lines.push(
    '',
    `- Machine load (1 / 5 / 15-minute load average, 2 CPUs, shared with other work): ${os
      .loadavg()
      .map((n) => fmt(n, 2))
      .join(' / ')} after.`,
  );
  return { title, lines };
};

const thisFile = fileURLToPath(import.meta.url);
if (process.argv.slice(1).some((arg) => path.resolve(arg) === thisFile)) {
  const section = await run({ quick: process.argv.includes('--quick') });
  console.log(`## ${section.title}\n\n${section.lines.join('\n')}`);
}
