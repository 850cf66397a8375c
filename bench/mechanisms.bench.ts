// What each of docindex's less obvious mechanisms still earns, measured against the plain way
// beside it in the same run, so that each earns its place or goes:
//   A. the chunker's own o200k encoder (a piece cache, an ASCII twin of the split regex and a
//      byte-pair merge on strings) against gpt-tokenizer's `encode`, in fresh processes and warm;
//   B. the WAL checkpoint thread against SQLite's own checkpoints on the writing connection;
//   C. workers yielding to a burst of ingests (WORKER_YIELD_INGEST_RPS) against never yielding;
//   D. JobQueue.enqueue's `created` hint against enqueueing as the reconciler does.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startCheckpointer } from '../src/adapters/sqlite/checkpointer.js';
import { openSqlite } from '../src/adapters/sqlite/database.js';
import { SqliteDocumentStore } from '../src/adapters/sqlite/document-store.js';
import { SqliteKeywordIndex } from '../src/adapters/sqlite/keyword/index.js';
import { SqliteTableQueue } from '../src/adapters/sqlite/table-queue.js';
import { analyzer } from '../src/domain/search-words.js';
import type { NewDocument } from '../src/domain/types.js';
import { chunkForIndex, type IndexPlan } from '../src/pipeline/chunk/for-index.js';
import { type AcceptFigures, measureAccept } from './accept.bench.js';
import { corpusDocuments } from './corpus.js';
import { type Benchmark, type BenchOptions, type BenchSection, fmt, median, projectRoot } from './lib.js';

const here = path.dirname(fileURLToPath(import.meta.url));

// ---- A. encoder -------------------------------------------------------------------------------

interface EncodeRun {
  coldMs: number;
  warmMs: number;
  tokens: number;
}

/** One fresh Node process encodes the corpus twice (cold, then warm) with `variant`. */
function encodeInFreshProcess(variant: 'docindex' | 'library', documents: number): EncodeRun {
  const encoder = pathToFileURL(path.join(here, '../src/pipeline/chunk/encoder.js')).href;
  const corpus = pathToFileURL(path.join(here, 'corpus.js')).href;
  const script = `
    const { corpusDocuments } = await import(${JSON.stringify(corpus)});
    const texts = corpusDocuments(${documents}, 10000);
    const start = performance.now();
    const mod = ${variant === 'docindex' ? `await import(${JSON.stringify(encoder)})` : "await import('gpt-tokenizer/encoding/o200k_base')"};
    const plain = { disallowedSpecial: new Set() };
    const encode = ${variant === 'docindex' ? '(t) => mod.encodeText(t)' : '(t) => mod.encode(t, plain)'};
    let tokens = 0;
    for (const t of texts) tokens += encode(t).length;
    const coldMs = performance.now() - start;
    const again = performance.now();
    for (const t of texts) encode(t);
    const warmMs = performance.now() - again;
    console.log(JSON.stringify({ coldMs, warmMs, tokens }));`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: projectRoot(),
    encoding: 'utf8',
  });
  return JSON.parse(out.trim().split('\n').pop()!) as EncodeRun;
}

async function encoderSection(quick: boolean): Promise<string[]> {
  const documents = quick ? 200 : 1_000;
  const repeats = quick ? 2 : 5;
  const runs = { docindex: [] as EncodeRun[], library: [] as EncodeRun[] };
  for (let i = 0; i < repeats; i++) {
    runs.docindex.push(encodeInFreshProcess('docindex', documents));
    runs.library.push(encodeInFreshProcess('library', documents));
  }
  const cold = (r: EncodeRun[]) => median(r.map((x) => x.coldMs));
  const warm = (r: EncodeRun[]) => median(r.map((x) => x.warmMs));
  const sameTokens = runs.docindex[0]!.tokens === runs.library[0]!.tokens;
  return [
    `### A. The chunker's encoder (\`pipeline/chunk/encoder.ts\`) vs gpt-tokenizer \`encode\``,
    '',
    `${documents.toLocaleString('en-US')} documents of ~10 KB (the ingest corpus), encoded whole in a fresh Node process (cold: module load, tables, JIT; the first document a pipeline thread sees pays this), then again in the same process (warm). Medians of ${repeats} processes per variant, interleaved.`,
    '',
    '| encoder | cold ms (load + first pass) | warm ms (second pass) | tokens |',
    '|---|---:|---:|---:|',
    `| docindex \`encodeText\` | ${fmt(cold(runs.docindex), 0)} | ${fmt(warm(runs.docindex), 0)} | ${runs.docindex[0]!.tokens.toLocaleString('en-US')} |`,
    `| gpt-tokenizer \`encode\` | ${fmt(cold(runs.library), 0)} | ${fmt(warm(runs.library), 0)} | ${runs.library[0]!.tokens.toLocaleString('en-US')} |`,
    '',
    `- Cold: docindex takes **${fmt(cold(runs.docindex) / cold(runs.library), 2)}×** the library's time; warm: **${fmt(warm(runs.docindex) / warm(runs.library), 2)}×**. Same tokens: ${sameTokens ? 'yes' : 'NO'}.`,
    `- Runs (cold ms), docindex: ${runs.docindex.map((r) => fmt(r.coldMs, 0)).join(', ')}; library: ${runs.library.map((r) => fmt(r.coldMs, 0)).join(', ')}.`,
  ];
}

// ---- B. checkpoint thread ---------------------------------------------------------------------

interface WriteRun {
  ms: number;
  p99Ms: number;
  maxMs: number;
}

function newDocument(text: string, orgId: string): NewDocument {
  return {
    id: crypto.randomUUID(),
    orgId,
    source: { type: 'text', filename: null, url: null, content_type: 'text/plain', bytes: null },
    metadata: {},
    chunkSize: 512,
    chunkOverlap: 64,
    tokenizer: 'o200k_base',
    createdAt: new Date(),
    text,
    blobKey: null,
    fetchUrl: null,
  };
}

/**
 * The embedded server's writes for `texts` (create in batches of 50, then each document's index,
 * four at a time, as the workers would) on a fresh database file, with or without the thread.
 */
async function writeAll(texts: string[], plans: IndexPlan[], thread: boolean): Promise<WriteRun> {
  const dir = mkdtempSync(path.join(tmpdir(), 'docindex-bench-wal-'));
  const file = path.join(dir, 'docindex.db');
  const db = openSqlite(file);
  const checkpointer = thread ? startCheckpointer(db, file) : null;
  // Let the thread open its connection and take checkpoints over, as at server start.
  await new Promise((resolve) => setTimeout(resolve, 200));
  const store = new SqliteDocumentStore(db, { keyword: new SqliteKeywordIndex(db) });
  const delay = monitorEventLoopDelay({ resolution: 1 });
  try {
    const docs = texts.map((text) => newDocument(text, 'org_bench'));
    delay.enable();
    const start = performance.now();
    for (let i = 0; i < docs.length; i += 50) await store.createDocuments(docs.slice(i, i + 50));
    let next = 0;
    const saver = async () => {
      while (next < docs.length) {
        const at = next++;
        const plan = plans[at]!;
        await store.saveIndex(docs[at]!.id, {
          chunks: plan.chunks,
          tokenCount: plan.tokenCount,
          contentSha256: plan.contentSha256,
          contentType: null,
          bytes: null,
        });
      }
    };
    await Promise.all(Array.from({ length: 4 }, saver));
    const ms = performance.now() - start;
    delay.disable();
    return { ms, p99Ms: delay.percentile(99) / 1e6, maxMs: delay.max / 1e6 };
  } finally {
    await checkpointer?.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function checkpointSection(quick: boolean): Promise<string[]> {
  const texts = corpusDocuments(quick ? 200 : 1_000, 10_000);
  const plans = texts.map((text) =>
    chunkForIndex(text, { chunkSize: 512, chunkOverlap: 64, markdown: true }, analyzer('english')),
  );
  const repeats = quick ? 1 : 3;
  const runs = { thread: [] as WriteRun[], loop: [] as WriteRun[] };
  await writeAll(texts.slice(0, 50), plans.slice(0, 50), true); // warm-up: JIT, page cache
  for (let i = 0; i < repeats; i++) {
    runs.thread.push(await writeAll(texts, plans, true));
    runs.loop.push(await writeAll(texts, plans, false));
  }
  const med = (r: WriteRun[], key: keyof WriteRun) => median(r.map((x) => x[key]));
  const row = (label: string, r: WriteRun[]) =>
    `| ${label} | ${fmt(med(r, 'ms'), 0)} | ${fmt(med(r, 'p99Ms'), 1)} | ${fmt(med(r, 'maxMs'), 1)} |`;
  return [
    '### B. WAL checkpoints in a thread (`adapters/sqlite/checkpointer.ts`) vs on the writing connection',
    '',
    `The embedded server's writes for ${texts.length.toLocaleString('en-US')} documents of ~10 KB (${plans.reduce((n, p) => n + p.chunks.length, 0).toLocaleString('en-US')} chunks): createDocuments in batches of 50, then saveIndex four at a time, chunked beforehand (not timed); fresh database file per run. Event-loop delay from \`monitorEventLoopDelay\` (1 ms resolution) over the writes. Medians of ${repeats} runs per variant, interleaved, after a warm-up.`,
    '',
    '| checkpoints | writes ms | event-loop delay p99 ms | max ms |',
    '|---|---:|---:|---:|',
    row('thread (PASSIVE every 250 ms; RESTART past 65,536 frames)', runs.thread),
    row("SQLite's own (wal_autocheckpoint 1000, on the event loop)", runs.loop),
    '',
    `- Writes with the thread take **${fmt(med(runs.thread, 'ms') / med(runs.loop, 'ms'), 2)}×** the time without it. Runs (ms), thread: ${runs.thread.map((r) => fmt(r.ms, 0)).join(', ')}; own: ${runs.loop.map((r) => fmt(r.ms, 0)).join(', ')}.`,
  ];
}

// ---- C. yielding to ingest bursts -------------------------------------------------------------

async function yieldSection(quick: boolean): Promise<string[]> {
  const seconds = quick ? 3 : 10;
  const repeats = quick ? 1 : 2;
  const runs = { yielding: [] as AcceptFigures[], never: [] as AcceptFigures[] };
  for (let i = 0; i < repeats; i++) {
    runs.yielding.push(await measureAccept(1, seconds));
    runs.never.push(await measureAccept(1, seconds, true, { WORKER_YIELD_INGEST_RPS: '0' }));
  }
  const rps = (f: AcceptFigures) => f.result.latency.totalCount / f.result.duration;
  const med = (r: AcceptFigures[], pick: (f: AcceptFigures) => number) => median(r.map(pick));
  const row = (label: string, r: AcceptFigures[]) =>
    `| ${label} | ${fmt(med(r, rps), 0)} | ${fmt(
      med(r, (f) => f.result.latency.p50),
      0,
    )} | ${fmt(
      med(r, (f) => f.result.latency.p99),
      0,
    )} | ${fmt(
      med(r, (f) => f.result.latency.max),
      0,
    )} |`;
  return [
    '### C. Workers yield to a burst of ingests (`pipeline/yield-to-api.ts`) vs never',
    '',
    `Section 3's 1-document case (autocannon, 10 connections, ${seconds} s after a 1 s warm-up, fresh embedded server with its workers), with the default WORKER_YIELD_INGEST_RPS and with 0 (never yield). Medians of ${repeats} runs per variant, interleaved.`,
    '',
    '| workers | req/s | p50 ms | p99 ms | max ms |',
    '|---|---:|---:|---:|---:|',
    row('yield while ingests arrive (default)', runs.yielding),
    row('never yield (WORKER_YIELD_INGEST_RPS=0)', runs.never),
    '',
    `- Yielding: **${fmt(med(runs.yielding, rps) / med(runs.never, rps), 2)}×** the accept rate of never yielding. Runs (req/s), yielding: ${runs.yielding.map((f) => fmt(rps(f), 0)).join(', ')}; never: ${runs.never.map((f) => fmt(rps(f), 0)).join(', ')}.`,
  ];
}

// ---- D. the `created` hint --------------------------------------------------------------------

async function createdSection(quick: boolean): Promise<string[]> {
  const calls = quick ? 5_000 : 20_000;
  const repeats = quick ? 2 : 5;
  const dir = mkdtempSync(path.join(tmpdir(), 'docindex-bench-created-'));
  const db = openSqlite(path.join(dir, 'docindex.db'));
  try {
    const store = new SqliteDocumentStore(db, { keyword: new SqliteKeywordIndex(db) });
    const queue = new SqliteTableQueue(db, { lane: 'process' });
    const docs = Array.from({ length: 10_000 }, () => newDocument('x', 'org_bench'));
    for (let i = 0; i < docs.length; i += 500) await store.createDocuments(docs.slice(i, i + 500));
    const refs = docs.map((d) => ({ documentId: d.id, orgId: d.orgId }));
    const time = async (created: boolean) => {
      const start = performance.now();
      for (let i = 0; i < calls; i++)
        await queue.enqueue([refs[i % refs.length]!], created ? { created } : {});
      return ((performance.now() - start) * 1000) / calls;
    };
    await time(false);
    await time(true);
    const runs = { hinted: [] as number[], plain: [] as number[] };
    for (let i = 0; i < repeats; i++) {
      runs.hinted.push(await time(true));
      runs.plain.push(await time(false));
    }
    const hinted = median(runs.hinted);
    const plain = median(runs.plain);
    return [
      '### D. `JobQueue.enqueue(…, { created: true })` vs a plain enqueue (SQLite table queue)',
      '',
      `One enqueue per accepted document, as ingest does, on a database of 10,000 pending documents: ${calls.toLocaleString('en-US')} calls per run, medians of ${repeats} runs, interleaved. A plain enqueue must look whether a finished job needs reviving (a read; PostgreSQL: an UPDATE round trip); with the hint the rows just written are known to be pending jobs already.`,
      '',
      '| enqueue | µs of event loop per accepted document |',
      '|---|---:|',
      `| with \`created\` | ${fmt(hinted, 2)} |`,
      `| plain | ${fmt(plain, 2)} |`,
      '',
      `- The hint saves **${fmt(plain - hinted, 2)} µs** per accepted document; at section 3's ~6,000 req/s that is ${fmt(((plain - hinted) * 6000) / 10_000, 1)}% of one core.`,
    ];
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export const run: Benchmark = async (options?: BenchOptions): Promise<BenchSection> => {
  const quick = options?.quick ?? false;
  const lines = [
    'Each mechanism against the plain way beside it, in the same run. A verdict that changed the code (kept or simplified) is a row of the table of changes at the end of this file.',
    '',
    ...(await encoderSection(quick)),
    '',
    ...(await checkpointSection(quick)),
    '',
    ...(await yieldSection(quick)),
    '',
    ...(await createdSection(quick)),
  ];
  return { title: 'Mechanisms: what each still earns', lines };
};

const thisFile = fileURLToPath(import.meta.url);
if (process.argv.slice(1).some((arg) => path.resolve(arg) === thisFile)) {
  const section = await run({ quick: process.argv.includes('--quick') });
  console.log(`## ${section.title}\n\n${section.lines.join('\n')}`);
}
