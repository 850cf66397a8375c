// JSON ingest end to end, embedded: the real server (child process, fresh DATA_DIR, its own two
// workers) receives ~10 MB of real prose as 1,000 documents, 50 per POST, and we time from the
// first POST to the poll that sees the last document `ready`. The yardstick is a bare
// gpt-tokenizer `encode` of the same texts in this process, timed in the same run: ingest must
// reach at least half its throughput. Also reported: 1,000 documents of ~2 KB (small documents,
// where per-document costs weigh most).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { corpusDocuments, utf8Bytes } from './corpus.js';
import {
  type Benchmark,
  type BenchOptions,
  type BenchSection,
  fmt,
  median,
  megabytes,
  timeRuns,
} from './lib.js';
import {
  callApi,
  cpuMilliseconds,
  type DocindexServer,
  type IngestAck,
  startDocindex,
  waitUntilDone,
} from './server.js';

const DOCS_PER_REQUEST = 50;
/** POSTs in flight at once: a client uploading a batch job, not a flood. */
const POST_CONCURRENCY = 4;
const GOAL_RATIO = 0.5;
/** Documents are data: special-token strings in them are plain text (as in the chunker). */
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

export interface IngestRun {
  ms: number;
  failed: number;
  chunks: number;
  /** The server's CPU time from the first POST to the last `ready` (all its threads). */
  cpuMs: number;
}

export interface IngestMeasurement {
  documents: number;
  bytes: number;
  /** Median end-to-end wall time, first POST to last `ready`. */
  ms: number;
  runs: IngestRun[];
  docsPerSecond: number;
  tokenizerMs: number;
}

/** Sizes of the two corpora (documents × characters each). */
function sizes(quick: boolean) {
  return {
    large: { count: quick ? 200 : 1_000, chars: 10_000 },
    small: { count: quick ? 200 : 1_000, chars: 2_000 },
    repeats: quick ? 1 : 5,
  };
}

/** The ~10 MB corpus of section 2; the peer pipeline (section 8) runs on the same texts. */
export function ingestCorpus(quick: boolean): string[] {
  const { large } = sizes(quick);
  return corpusDocuments(large.count, large.chars);
}

/** One end-to-end run on a fresh server (`env`: more of its environment, e.g. tracing on). */
export async function ingestOnce(texts: string[], env: Record<string, string> = {}): Promise<IngestRun> {
  const server = await startDocindex({ env });
  try {
    await warmUp(server);
    const ids: string[] = [];
    const batches: string[][] = [];
    for (let i = 0; i < texts.length; i += DOCS_PER_REQUEST)
      batches.push(texts.slice(i, i + DOCS_PER_REQUEST));

    const cpuBefore = cpuMilliseconds(server.pid);
    const start = performance.now();
    let next = 0;
    const poster = async () => {
      while (next < batches.length) {
        const batch = batches[next++]!;
        const ack = await callApi<IngestAck>(
          server,
          'POST',
          '/v1/ingest',
          { documents: batch.map((text) => ({ text })) },
          202,
        );
        ids.push(...ack.document_ids);
      }
    };
    // Polling starts with the first POST, as a client would: the last `ready` is seen within one
    // poll interval of happening.
    const posting = Promise.all(Array.from({ length: POST_CONCURRENCY }, poster));
    const waiting = waitUntilDone(server, () => ids, { expected: texts.length, timeoutMs: 600_000 });
    const [, { done, finishedAt }] = await Promise.all([posting, waiting]);
    const cpuMs = cpuMilliseconds(server.pid) - cpuBefore;
    const statuses = [...done.values()];
    return {
      ms: finishedAt - start,
      cpuMs,
      failed: statuses.filter((d) => d.status === 'failed').length,
      chunks: statuses.reduce((n, d) => n + (d.chunk_count ?? 0), 0),
    };
  } catch (error) {
    throw new Error(
      `${error instanceof Error ? error.message : error}\nserver log: ${server.stderr().slice(-2000)}`,
    );
  } finally {
    await server.stop();
  }
}

/** One document through the whole pipeline first, so the server's tokenizer tables are loaded. */
async function warmUp(server: DocindexServer): Promise<void> {
  const ack = await callApi<IngestAck>(
    server,
    'POST',
    '/v1/ingest',
    { documents: [{ text: 'warm up' }] },
    202,
  );
  await waitUntilDone(server, () => ack.document_ids, { expected: 1, timeoutMs: 60_000 });
}

function tokenizeAll(texts: string[]): number {
  let tokens = 0;
  for (const text of texts) tokens += encode(text, PLAIN_TEXT).length;
  return tokens;
}

/**
 * Interleaves end-to-end runs with tokenizer passes, so load from anything else on the machine
 * falls on both alike; returns the medians.
 */
async function measure(texts: string[], repeats: number): Promise<IngestMeasurement> {
  tokenizeAll(texts); // JIT and tokenizer tables warm
  const runs: IngestRun[] = [];
  const tokenizer: number[] = [];
  for (let i = 0; i < repeats; i++) {
    tokenizer.push(...(await timeRuns(1, () => tokenizeAll(texts))));
    runs.push(await ingestOnce(texts));
  }
  tokenizer.push(...(await timeRuns(1, () => tokenizeAll(texts))));
  const ms = median(runs.map((r) => r.ms));
  return {
    documents: texts.length,
    bytes: utf8Bytes(texts),
    ms,
    runs,
    docsPerSecond: (texts.length / ms) * 1000,
    tokenizerMs: median(tokenizer),
  };
}

// Section 8 compares the peer pipeline with this section's figure: measured once per process.
const memo = new Map<boolean, Promise<IngestMeasurement>>();

/** Section 2's main measurement (~10 MB, 1,000 documents), taken once per bench process. */
export function measureLargeIngest(quick: boolean): Promise<IngestMeasurement> {
  let pending = memo.get(quick);
  if (!pending) {
    pending = measure(ingestCorpus(quick), sizes(quick).repeats);
    memo.set(quick, pending);
    pending.catch(() => memo.delete(quick));
  }
  return pending;
}

function row(label: string, m: IngestMeasurement): string {
  const ratio = m.tokenizerMs / m.ms;
  return `| ${label} | ${m.documents.toLocaleString('en-US')} | ${megabytes(m.bytes, 2)} | ${fmt(m.ms / 1000, 2)} | ${fmt(m.docsPerSecond)} | ${fmt(m.bytes / 1e6 / (m.ms / 1000), 2)} | ${fmt(m.tokenizerMs)} | ${fmt(ratio, 2)}× |`;
}

function failures(label: string, m: IngestMeasurement): string[] {
  const failed = m.runs.reduce((n, r) => n + r.failed, 0);
  return failed === 0 ? [] : [`- ${label}: ${failed} document(s) ended \`failed\` across the runs.`];
}

export const run: Benchmark = async (options?: BenchOptions): Promise<BenchSection> => {
  const quick = options?.quick ?? false;
  const { small, repeats } = sizes(quick);
  const large = await measureLargeIngest(quick);
  const smallRun = await measure(corpusDocuments(small.count, small.chars), repeats);
  const ratio = large.tokenizerMs / large.ms;
  return {
    title: 'JSON ingest end to end (embedded)',
    lines: [
      `Real server (\`docindex serve\`, child process, fresh DATA_DIR, default WORKER_CONCURRENCY and EXTRACT_WORKERS: 4 documents in flight, one pipeline thread per CPU but one), ${DOCS_PER_REQUEST} documents per POST, ${POST_CONCURRENCY} POSTs in flight, progress polled with \`GET /v1/documents?ids=…\` (the 100 oldest pending ids; every 50 ms while that batch is unfinished, at once otherwise). Time = first POST → the poll that sees the last document \`ready\`. Median of ${repeats} run(s), each on a fresh server after one warm-up document. Tokenizer pass = bare gpt-tokenizer \`encode\` (o200k_base) of the same texts in the bench process, interleaved with the runs (median).`,
      '',
      '| corpus | documents | size | seconds | documents/s | MB/s | tokenizer pass ms | ingest ÷ tokenizer throughput |',
      '|---|---:|---:|---:|---:|---:|---:|---:|',
      row('~10 KB documents (node_modules Markdown)', large),
      row('~2 KB documents', smallRun),
      '',
      `- Runs (s), ~10 KB documents: ${large.runs.map((r) => fmt(r.ms / 1000, 2)).join(', ')}; ${large.runs[0]?.chunks.toLocaleString('en-US')} chunks per run.`,
      `- Runs (s), ~2 KB documents: ${smallRun.runs.map((r) => fmt(r.ms / 1000, 2)).join(', ')}.`,
      ...failures('~10 KB documents', large),
      ...failures('~2 KB documents', smallRun),
      `- Goal: ingest ≥ ${fmt(GOAL_RATIO, 2)}× the bare tokenizer's throughput on ~10 MB / 1,000 documents: **${fmt(ratio, 2)}×**, ${ratio >= GOAL_RATIO ? 'met' : 'NOT met'}.`,
    ],
  };
};

const thisFile = fileURLToPath(import.meta.url);
if (process.argv.slice(1).some((arg) => path.resolve(arg) === thisFile)) {
  const section = await run({ quick: process.argv.includes('--quick') });
  console.log(`## ${section.title}\n\n${section.lines.join('\n')}`);
}
