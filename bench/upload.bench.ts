// Memory during large uploads: a 100 MB file must stream to the blob store, not sit in the
// server's memory, and processing it (extraction, chunking, index writes) must stay within a
// bounded amount of memory too (the goal: ≤ 256 MiB above the baseline for a 100 MB text, PDF
// or spreadsheet). The bench streams multipart uploads it generates (a text file, a PDF of many text
// pages, a CSV) to the real server and samples the resident set size (VmRSS) of the server process and of the pipeline processes that
// read its files, every thread included, every 50 ms, from before the request until the document is ready.

import { randomUUID } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { proseCsv, proseXlsx, textPdf } from './big-files.js';
import {
  type Benchmark,
  type BenchOptions,
  type BenchSection,
  dropPostgresSchema,
  fmt,
  fmtSpread,
  median,
  medianSpread,
  sleep,
} from './lib.js';
import {
  type DocindexServer,
  documentStatuses,
  residentBytes,
  startDocindex,
  streamFileUpload,
  streamUpload,
  type UploadFile,
  waitUntilDone,
} from './server.js';

const MB = 1_000_000;
const MIB = 1024 * 1024;
const SAMPLE_MS = 50;
const PROCESSING_TIMEOUT_MS = 600_000;
const GOAL_UPLOAD_GROWTH_BYTES = 64 * MIB;
const GOAL_PROCESSING_GROWTH_BYTES = 256 * MIB;
const PG_BLOB_LABEL = 'text (.txt), scale-out `serve` with BLOB_STORE=postgres';

/** Samples RSS until the document is ready or failed; returns the peak and how long it took. */
async function followProcessing(
  server: DocindexServer,
  id: string,
): Promise<{ status: string; ms: number; peak: number; error: string | null }> {
  const start = performance.now();
  let peak = 0;
  let lastPoll = 0;
  while (performance.now() - start < PROCESSING_TIMEOUT_MS) {
    const { exitCode, signalCode } = server.child;
    if (exitCode !== null || signalCode !== null) {
      // What the memory goal guards against: the server going down with the file instead of
      // failing it.
      const lastLog = server.stderr().trim().split('\n').slice(-3).join(' / ').slice(0, 400);
      return {
        status: `server process ended (${signalCode ?? `exit code ${exitCode}`})`,
        ms: performance.now() - start,
        peak,
        error: lastLog || null,
      };
    }
    try {
      peak = Math.max(peak, residentBytes(server.pid));
    } catch {
      // Exited between the check above and this read: the next turn reports it.
    }
    if (performance.now() - lastPoll >= 250) {
      lastPoll = performance.now();
      const [doc] = await documentStatuses(server, [id]);
      if (doc && (doc.status === 'ready' || doc.status === 'failed')) {
        const error = (doc as { error?: { code?: string } | null }).error;
        return { status: doc.status, ms: performance.now() - start, peak, error: error?.code ?? null };
      }
    }
    await sleep(SAMPLE_MS);
  }
  return {
    status: `still not done after ${PROCESSING_TIMEOUT_MS / 1000} s`,
    ms: PROCESSING_TIMEOUT_MS,
    peak,
    error: null,
  };
}

interface Measured {
  label: string;
  bytes: number;
  toAcceptMs: number;
  baseline: number;
  uploadPeak: number;
  status: string;
  error: string | null;
  processingMs: number;
  peak: number;
}

/**
 * One file through a fresh server: warm-up, baseline, then the upload (sampled to its 202) and its
 * processing (sampled to ready or failed).
 */
async function measure(
  label: string,
  file: UploadFile | number,
  env: Record<string, string> = {},
): Promise<Measured> {
  // The cap per document is the default; a 100 MB PDF takes minutes on a loaded 2-CPU machine.
  const server = await startDocindex({ env: { EXTRACT_TIMEOUT_MS: String(PROCESSING_TIMEOUT_MS), ...env } });
  try {
    // Warm-up: a small upload through the whole path (multipart, sniffing, blob store, worker), so
    // lazily loaded code is in the baseline rather than counted as growth.
    const warm = await streamUpload(server, 64 * 1024, 'warm-up.txt');
    if (warm.status !== 202)
      throw new Error(`warm-up upload answered ${warm.status}: ${warm.body.slice(0, 300)}`);
    await waitUntilDone(server, () => JSON.parse(warm.body).document_ids, {
      expected: 1,
      timeoutMs: 300_000,
    });

    const baselineSamples: number[] = [];
    for (let i = 0; i < 20; i++) {
      baselineSamples.push(residentBytes(server.pid));
      await sleep(SAMPLE_MS);
    }
    const baseline = median(baselineSamples);

    let uploadPeak = 0;
    const sampler = setInterval(() => {
      uploadPeak = Math.max(uploadPeak, residentBytes(server.pid));
    }, SAMPLE_MS);
    const start = performance.now();
    let result: { status: number; body: string };
    const bytes = typeof file === 'number' ? file : file.bytes;
    try {
      result =
        typeof file === 'number'
          ? await streamUpload(server, file, 'large.txt')
          : await streamFileUpload(server, file);
    } finally {
      clearInterval(sampler);
    }
    const toAcceptMs = performance.now() - start;
    uploadPeak = Math.max(uploadPeak, residentBytes(server.pid));
    if (result.status !== 202)
      throw new Error(`${label} upload answered ${result.status}: ${result.body.slice(0, 300)}`);
    const processing = await followProcessing(server, JSON.parse(result.body).document_ids[0]);
    return {
      label,
      bytes,
      toAcceptMs,
      baseline,
      uploadPeak,
      status: processing.status,
      error: processing.error,
      processingMs: processing.ms,
      peak: Math.max(uploadPeak, processing.peak),
    };
  } finally {
    await server.stop();
  }
}

/** Runs of each file in a full run (UPLOAD_BENCH_RUNS overrides; `--quick`: 1). */
const RUNS = 5;

/** A file's runs, summed up: medians, and the spread (min–max) of its peak above baseline. */
interface FileFigures {
  label: string;
  bytes: number;
  runs: Measured[];
  toAcceptMs: number;
  uploadGrowth: number;
  processingMs: number;
  baseline: number;
  peak: number;
  /** Peak above baseline: the median and the spread of the runs'. */
  growth: { median: number; min: number; max: number };
  /** `ready` when every run ended ready, else how the others ended and why. */
  status: string;
}

function summarise(label: string, runs: Measured[]): FileFigures {
  const of = (pick: (m: Measured) => number) => median(runs.map(pick));
  const growths = runs.map((m) => m.peak - m.baseline);
  const notReady = runs.filter((m) => m.status !== 'ready');
  return {
    label,
    bytes: runs[0]!.bytes,
    runs,
    toAcceptMs: of((m) => m.toAcceptMs),
    uploadGrowth: of((m) => m.uploadPeak - m.baseline),
    processingMs: of((m) => m.processingMs),
    baseline: of((m) => m.baseline),
    peak: of((m) => m.peak),
    growth: medianSpread(growths),
    status:
      notReady.length === 0
        ? 'ready'
        : notReady.map((m) => `${m.status}${m.error ? ` (${m.error})` : ''}`).join(', '),
  };
}

function runsOf(options?: BenchOptions): number {
  if (options?.quick) return 1;
  const given = Number(process.env.UPLOAD_BENCH_RUNS ?? RUNS);
  if (!Number.isInteger(given) || given < 1 || given > 50) {
    throw new Error(
      `UPLOAD_BENCH_RUNS must be a whole number from 1 to 50, not ${process.env.UPLOAD_BENCH_RUNS}`,
    );
  }
  return given;
}

export const run: Benchmark = async (options?: BenchOptions): Promise<BenchSection> => {
  const scale = options?.quick ? 0.2 : 1;
  const runs = runsOf(options);
  const textBytes = Math.round(100 * MB * scale);
  // 5,000 pages is PDF_MAX_PAGES's default; 200 lines of about 90 characters fill a page's text
  // to about 20 KB, so the file is about 100 MB.
  const pdf = textPdf(Math.round(4_800 * scale), 200);
  const csv = proseCsv(Math.round(100 * MB * scale));
  // The largest workbook the archive limits let through inflates to 200 MiB of XML (docs/API.md, "Why a document fails").
  const xlsxXml = Math.round(190 * MB * scale);
  const xlsx = proseXlsx(xlsxXml);
  const loadBefore = loadavg()[0]!;
  // UPLOAD_BENCH_FILES=text,csv runs only those (for a quick look; RESULTS.md gets them all).
  const only = process.env.UPLOAD_BENCH_FILES?.split(',');
  // Scale-out with no shared folder: the upload streams into PostgreSQL (BLOB_STORE=postgres).
  const databaseUrl = process.env.DATABASE_URL;
  const redisUrl = process.env.REDIS_URL;
  const scaleOut =
    databaseUrl && redisUrl
      ? { DATABASE_URL: databaseUrl, REDIS_URL: redisUrl, BLOB_STORE: 'postgres' }
      : null;
  const cases: [string, string, UploadFile | number, Record<string, string> | null][] = [
    ['text', 'text (.txt)', textBytes, {}],
    ['pdf', 'PDF (text pages)', pdf, {}],
    ['csv', 'spreadsheet (.csv)', csv, {}],
    ['xlsx', 'spreadsheet (.xlsx)', xlsx, {}],
    ['pg-blob', PG_BLOB_LABEL, textBytes, scaleOut],
  ];
  type Case = (typeof cases)[number];
  const chosen = cases.filter(
    (c): c is [Case[0], Case[1], Case[2], Record<string, string>] =>
      (!only || only.includes(c[0])) && c[3] !== null,
  );
  const measured = new Map<string, Measured[]>(chosen.map(([, label]) => [label, []]));
  // The files take turns (rotated each round): a drift in the machine's load spreads over all.
  for (let round = 0; round < runs; round++) {
    for (let i = 0; i < chosen.length; i++) {
      const [, label, file, given] = chosen[(i + round) % chosen.length]!;
      // Each scale-out run in a schema of its own, dropped after it.
      const env: Record<string, string> = given.DATABASE_URL
        ? { ...given, DATABASE_SCHEMA: `bench_upload_${randomUUID().replaceAll('-', '').slice(0, 12)}` }
        : given;
      const m = await measure(label, file, env).finally(async () => {
        if (env.DATABASE_SCHEMA && databaseUrl) await dropPostgresSchema(databaseUrl, env.DATABASE_SCHEMA);
      });
      console.error(
        `${label} (run ${round + 1} of ${runs}): ${m.status}${m.error ? ` (${m.error})` : ''}, peak ${fmt((m.peak - m.baseline) / MIB, 1)} MiB above baseline, ${fmt(m.processingMs / 1000, 1)} s`,
      );
      measured.get(label)!.push(m);
    }
  }
  const loadAfter = loadavg()[0]!;
  const rows = [...measured].map(([label, ms]) => summarise(label, ms));

  const mib = (n: number) => `${fmt(n / MIB, 1)} MiB`;
  const upload = rows[0];
  if (!upload) throw new Error('UPLOAD_BENCH_FILES named no file');
  const spread = (r: FileFigures) => fmtSpread({ min: r.growth.min / MIB, max: r.growth.max / MIB }, 1);
  const lines = [
    `Real server (child process, embedded, workers running, \`EXTRACT_TIMEOUT_MS=${PROCESSING_TIMEOUT_MS}\`, other settings default), a fresh one per run. The bench streams one multipart \`file\` part (generated from the corpus's prose, Content-Length known) to POST /v1/ingest/file and samples the VmRSS of the server and of the pipeline processes that read its files (/proc/<pid>/status, every thread included) every ${SAMPLE_MS} ms from the request's start to its 202, then until the document is ready or failed. Baseline = median of 20 samples after a warm-up upload. ${runs} run(s) of each file, the files taking turns (rotated each round); every figure is the median of its runs, with the spread (min–max) of the peak above baseline beside it.`,
    '',
    '| file | size | time to 202 | peak to 202 | processing | status | baseline RSS | peak RSS | peak above baseline | its spread, MiB |',
    '|---|---:|---:|---:|---:|---|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.label} | ${fmt(r.bytes / MB, 1)} MB | ${fmt(r.toAcceptMs / 1000, 2)} s | +${mib(r.uploadGrowth)} | ${fmt(r.processingMs / 1000, 1)} s | ${r.status} | ${mib(r.baseline)} | ${mib(r.peak)} | **${mib(r.growth.median)}** | ${spread(r)} |`,
    ),
    '',
    `- The PDF: ${pdf.bytes.toLocaleString('en-US')} bytes, ${Math.round(4_800 * scale).toLocaleString('en-US')} pages of 200 lines each (uncompressed content streams, Helvetica). The CSV: 4 columns, a quoted sentence with commas in each row. The workbook: ${fmt(xlsx.bytes / MB, 1)} MB whose XML inflates to ${fmt(xlsxXml / MB, 0)} MB (the archive limits allow 200 MiB), one sheet of 5 columns (an id, a date, a category, a note unique to its row, an amount) in shared strings, as Excel writes them.`,
    `- Peak above baseline, run by run (MiB): ${rows.map((r) => `${r.label} ${r.runs.map((m) => fmt((m.peak - m.baseline) / MIB, 1)).join(', ')}`).join('; ')}.`,
    `- Load average (1 min) ${fmt(loadBefore, 2)} before, ${fmt(loadAfter, 2)} after, ${cpus().length} CPUs shared with other work: times are inflated by it; memory is not.`,
    `- Goal (upload): growth to the 202 ≤ ${mib(GOAL_UPLOAD_GROWTH_BYTES)}: **${mib(upload.uploadGrowth)}** for ${upload.label === 'text (.txt)' ? 'the text file' : upload.label}, ${upload.uploadGrowth <= GOAL_UPLOAD_GROWTH_BYTES ? 'met' : 'NOT met'}.`,
    ...rows
      .filter((r) => r.label === PG_BLOB_LABEL)
      .map(
        (r) =>
          `- Goal (scale-out upload memory), the 100 MB upload streamed into PostgreSQL (BLOB_STORE=postgres, PostgreSQL + Redis, no shared folder): growth of the API's RSS to the 202 ≤ ${mib(GOAL_UPLOAD_GROWTH_BYTES)}: **${mib(r.uploadGrowth)}**, ${r.uploadGrowth <= GOAL_UPLOAD_GROWTH_BYTES ? 'met' : 'NOT met'}.`,
      ),
    ...(scaleOut
      ? []
      : ['- The BLOB_STORE=postgres row: skipped (DATABASE_URL and REDIS_URL not both set).']),
    ...rows.map((r) => {
      const ready = r.status === 'ready';
      const met = r.growth.median <= GOAL_PROCESSING_GROWTH_BYTES && ready;
      return `- Goal (processing memory), ${r.label}: upload → ready ≤ ${mib(GOAL_PROCESSING_GROWTH_BYTES)} above baseline: **${mib(r.growth.median)}** (${spread(r)}), ${met ? 'met' : 'NOT met'}${ready ? '' : ` (not every run ended ready: ${r.status})`}${options?.quick ? ` (quick run: ${fmt(r.bytes / MB, 0)} MB, not 100 MB)` : ''}.`;
    }),
  ];
  return { title: 'Memory: server RSS during a 100 MB upload and its processing', lines };
};

const thisFile = fileURLToPath(import.meta.url);
if (process.argv.slice(1).some((arg) => path.resolve(arg) === thisFile)) {
  const section = await run({ quick: process.argv.includes('--quick') });
  console.log(`## ${section.title}\n\n${section.lines.join('\n')}`);
}
