// JSON ingest end to end, embedded: the real server (child process, fresh DATA_DIR, its own two
// workers) receives ~10 MB of real prose as 1,000 documents, 50 per POST, and we time from the
// first POST to the poll that sees the last document `ready`; then the next 1,000 documents of
// the corpus on the same server, once its code is compiled and its tokenizer cache filled, as a
// server that has been running for a while ingests. The yardstick is a bare gpt-tokenizer
// `encode` of the same texts in this process, timed warm in the same run: ingest must reach at
// least 0.6 of its throughput. Also reported: 1,000 documents of ~2 KB (small documents, where
// per-document costs weigh most).
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
const GOAL_RATIO = 0.6;
/** Documents are data: special-token strings in them are plain text (as in the chunker). */
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

export interface IngestRun {
  ms: number;
  failed: number;
  chunks: number;
  /** The server's CPU time from the first POST to the last `ready` (all its threads). */
  cpuMs: number;
}

/**
 * A fresh server's two passes: the corpus's first documents after start (one warm-up document
 * before them), and its next ones once V8 has compiled the paths the first pass ran and the
 * chunker's piece cache holds the corpus's common pieces.
 */
export interface IngestPasses {
  first: IngestRun;
  steady: IngestRun;
}

/** One pass's runs (one per fresh server), their median wall time and the pass's yardstick. */
export interface PassMeasurement {
  documents: number;
  bytes: number;
  /** Median end-to-end wall time, first POST to last `ready`. */
  ms: number;
  runs: IngestRun[];
  docsPerSecond: number;
  /** Median time of a bare tokenizer pass over the same texts, warm. */
  tokenizerMs: number;
}

/** The two passes, in the order a run makes them. */
export const PASSES = ['first', 'steady'] as const;
export type Pass = (typeof PASSES)[number];

/** How a table row names each pass. */
export const PASS_LABEL: Record<Pass, string> = { first: 'first after start', steady: 'the next (steady)' };

export type IngestMeasurement = Record<Pass, PassMeasurement>;

/** The texts of each pass: the corpus's first documents, then the ones after them. */
export type IngestTexts = Record<Pass, string[]>;

/** Sizes of the two corpora (documents × characters each). */
function sizes(quick: boolean) {
  return {
    large: { count: quick ? 200 : 1_000, chars: 10_000 },
    small: { count: quick ? 200 : 1_000, chars: 2_000 },
    repeats: quick ? 1 : 5,
  };
}

/** Section 2's first pass (~10 MB); the peer pipeline (section 9) runs on the same texts. */
export function ingestCorpus(quick: boolean): string[] {
  const { large } = sizes(quick);
  return corpusDocuments(large.count, large.chars);
}

/** Section 2's two passes of ~10 MB each: consecutive documents of the corpus. */
export function ingestTexts(quick: boolean): IngestTexts {
  const { large } = sizes(quick);
  return twoPasses(large.count, large.chars);
}

function twoPasses(count: number, chars: number): IngestTexts {
  const documents = corpusDocuments(count * 2, chars);
  return { first: documents.slice(0, count), steady: documents.slice(count) };
}

/**
 * Two end-to-end passes on one fresh server (`env`: more of its environment, e.g. tracing on):
 * the first texts after one warm-up document, then the next ones.
 */
export async function ingestOnce(
  texts: IngestTexts,
  env: Record<string, string> = {},
): Promise<IngestPasses> {
  const server = await startDocindex({ env });
  try {
    await warmUp(server);
    const first = await ingestPass(server, texts.first);
    const steady = await ingestPass(server, texts.steady);
    return { first, steady };
  } catch (error) {
    throw new Error(
      `${error instanceof Error ? error.message : error}\nserver log: ${server.stderr().slice(-2000)}`,
    );
  } finally {
    await server.stop();
  }
}

/** `texts` as new documents, 50 per POST with 4 POSTs in flight, timed to the last `ready`. */
async function ingestPass(server: DocindexServer, texts: string[]): Promise<IngestRun> {
  const ids: string[] = [];
  const batches: string[][] = [];
  for (let i = 0; i < texts.length; i += DOCS_PER_REQUEST) batches.push(texts.slice(i, i + DOCS_PER_REQUEST));

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
async function measure(texts: IngestTexts, repeats: number): Promise<IngestMeasurement> {
  for (const pass of PASSES) tokenizeAll(texts[pass]); // JIT and tokenizer tables warm
  const runs: IngestPasses[] = [];
  const tokenizer: Record<Pass, number[]> = { first: [], steady: [] };
  const timeTokenizer = async () => {
    for (const pass of PASSES) tokenizer[pass].push(...(await timeRuns(1, () => tokenizeAll(texts[pass]))));
  };
  for (let i = 0; i < repeats; i++) {
    await timeTokenizer();
    runs.push(await ingestOnce(texts));
  }
  await timeTokenizer();
  const pass = (which: Pass): PassMeasurement => {
    const passRuns = runs.map((r) => r[which]);
    const ms = median(passRuns.map((r) => r.ms));
    return {
      documents: texts[which].length,
      bytes: utf8Bytes(texts[which]),
      ms,
      runs: passRuns,
      docsPerSecond: (texts[which].length / ms) * 1000,
      tokenizerMs: median(tokenizer[which]),
    };
  };
  return { first: pass('first'), steady: pass('steady') };
}

// Section 9 compares the peer pipeline with this section's next pass: measured once per process.
const memo = new Map<boolean, Promise<IngestMeasurement>>();

/** Section 2's main measurement (~10 MB, 1,000 documents), taken once per bench process. */
export function measureLargeIngest(quick: boolean): Promise<IngestMeasurement> {
  let pending = memo.get(quick);
  if (!pending) {
    pending = measure(ingestTexts(quick), sizes(quick).repeats);
    memo.set(quick, pending);
    pending.catch(() => memo.delete(quick));
  }
  return pending;
}

function row(label: string, m: IngestMeasurement, which: Pass): string {
  const pass = m[which];
  const ratio = pass.tokenizerMs / pass.ms;
  return `| ${label} | ${PASS_LABEL[which]} | ${pass.documents.toLocaleString('en-US')} | ${megabytes(pass.bytes, 2)} | ${fmt(pass.ms / 1000, 2)} | ${fmt(pass.docsPerSecond)} | ${fmt(pass.bytes / 1e6 / (pass.ms / 1000), 2)} | ${fmt(pass.tokenizerMs)} | ${fmt(ratio, 2)}× |`;
}

function runsLine(label: string, m: IngestMeasurement): string {
  const seconds = (pass: PassMeasurement) => pass.runs.map((r) => fmt(r.ms / 1000, 2)).join(', ');
  return `- Runs (s), ${label}: first ${seconds(m.first)}; next ${seconds(m.steady)}.`;
}

function failures(label: string, m: IngestMeasurement): string[] {
  const failed = PASSES.flatMap((pass) => m[pass].runs).reduce((n, r) => n + r.failed, 0);
  return failed === 0 ? [] : [`- ${label}: ${failed} document(s) ended \`failed\` across the runs.`];
}

export const run: Benchmark = async (options?: BenchOptions): Promise<BenchSection> => {
  const quick = options?.quick ?? false;
  const { small, repeats } = sizes(quick);
  const large = await measureLargeIngest(quick);
  const smallRun = await measure(twoPasses(small.count, small.chars), repeats);
  const ratio = large.steady.tokenizerMs / large.steady.ms;
  const firstRatio = large.first.tokenizerMs / large.first.ms;
  const chunks = (pass: PassMeasurement) => pass.runs[0]?.chunks.toLocaleString('en-US');
  return {
    title: 'JSON ingest end to end (embedded)',
    lines: [
      `Real server (\`docindex serve\`, child process, fresh DATA_DIR, default WORKER_CONCURRENCY and EXTRACT_WORKERS: 8 documents in flight, one pipeline thread per CPU but one, which hands on the ends of short documents in runs: of up to 4 on 2 cores), ${DOCS_PER_REQUEST} documents per POST, ${POST_CONCURRENCY} POSTs in flight, progress polled with \`GET /v1/documents?ids=…\` (the 100 oldest pending ids; every 50 ms while that batch is unfinished, at once otherwise). Time = first POST → the poll that sees the last document \`ready\`. Each run is a fresh server: one warm-up document, the corpus's first ${large.first.documents.toLocaleString('en-US')} documents (first after start), then the corpus's next ${large.steady.documents.toLocaleString('en-US')} documents (the next: the server's code compiled and its tokenizer cache filled by then, as in a server that has been running, and as the tokenizer pass is timed). Median of ${repeats} run(s). Tokenizer pass = bare gpt-tokenizer \`encode\` (o200k_base) of each pass's texts in the bench process, warm, interleaved with the runs (median).`,
      '',
      '| corpus | pass | documents | size | seconds | documents/s | MB/s | tokenizer pass ms | ingest ÷ tokenizer throughput |',
      '|---|---|---:|---:|---:|---:|---:|---:|---:|',
      row('~10 KB documents (node_modules Markdown)', large, 'first'),
      row('~10 KB documents (node_modules Markdown)', large, 'steady'),
      row('~2 KB documents', smallRun, 'first'),
      row('~2 KB documents', smallRun, 'steady'),
      '',
      `${runsLine('~10 KB documents', large)} Chunks per run: ${chunks(large.first)} first, ${chunks(large.steady)} next.`,
      runsLine('~2 KB documents', smallRun),
      ...failures('~10 KB documents', large),
      ...failures('~2 KB documents', smallRun),
      `- Goal: ingest ≥ ${fmt(GOAL_RATIO, 2)}× the bare tokenizer's throughput on ~10 MB / 1,000 documents, both warm (the next pass): **${fmt(ratio, 3)}×**, ${ratio >= GOAL_RATIO ? 'met' : 'NOT met'}; the first pass after start: ${fmt(firstRatio, 2)}×.`,
    ],
  };
};

const thisFile = fileURLToPath(import.meta.url);
if (process.argv.slice(1).some((arg) => path.resolve(arg) === thisFile)) {
  const section = await run({ quick: process.argv.includes('--quick') });
  console.log(`## ${section.title}\n\n${section.lines.join('\n')}`);
}
