// Memory during a large upload: a 100 MB file must stream to the blob store, not sit in the
// server's memory. The bench streams a multipart upload it generates on the fly (never holding it
// whole either) to the real server, sampling the server's resident set size (VmRSS) every 50 ms
// from before the request until its 202. Goal: growth ≤ 64 MB.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Benchmark, type BenchOptions, type BenchSection, fmt, median, sleep } from './lib.js';
import {
  type DocindexServer,
  documentStatuses,
  residentBytes,
  startDocindex,
  streamUpload,
  waitUntilDone,
} from './server.js';

const MB = 1_000_000;
const MIB = 1024 * 1024;
const SAMPLE_MS = 50;
const PROCESSING_TIMEOUT_MS = 300_000;
const GOAL_GROWTH_BYTES = 64 * MIB;

/** Samples RSS until the document is ready or failed; returns the peak and how long it took. */
async function followProcessing(
  server: DocindexServer,
  id: string,
): Promise<{ status: string; ms: number; peak: number }> {
  const start = performance.now();
  let peak = 0;
  let lastPoll = 0;
  while (performance.now() - start < PROCESSING_TIMEOUT_MS) {
    peak = Math.max(peak, residentBytes(server.pid));
    if (performance.now() - lastPoll >= 250) {
      lastPoll = performance.now();
      const [doc] = await documentStatuses(server, [id]);
      if (doc && (doc.status === 'ready' || doc.status === 'failed')) {
        return { status: doc.status, ms: performance.now() - start, peak };
      }
    }
    await sleep(SAMPLE_MS);
  }
  return {
    status: `still not done after ${PROCESSING_TIMEOUT_MS / 1000} s`,
    ms: PROCESSING_TIMEOUT_MS,
    peak,
  };
}

export const run: Benchmark = async (options?: BenchOptions): Promise<BenchSection> => {
  const bytes = (options?.quick ? 20 : 100) * MB;
  const server = await startDocindex();
  try {
    // Warm-up: a small upload through the whole path (multipart, sniffing, blob store, worker), so
    // lazily loaded code is in the baseline rather than counted as growth.
    const warm = await streamUpload(server, 64 * 1024, 'warm-up.txt');
    if (warm.status !== 202)
      throw new Error(`warm-up upload answered ${warm.status}: ${warm.body.slice(0, 300)}`);
    await waitUntilDone(server, () => JSON.parse(warm.body).document_ids, { expected: 1, timeoutMs: 60_000 });

    const baselineSamples: number[] = [];
    for (let i = 0; i < 20; i++) {
      baselineSamples.push(residentBytes(server.pid));
      await sleep(SAMPLE_MS);
    }
    const baseline = median(baselineSamples);

    const samples: number[] = [];
    const sampler = setInterval(() => samples.push(residentBytes(server.pid)), SAMPLE_MS);
    const start = performance.now();
    let result: { status: number; body: string };
    try {
      result = await streamUpload(server, bytes, 'large.txt');
    } finally {
      clearInterval(sampler);
    }
    const ms = performance.now() - start;
    samples.push(residentBytes(server.pid));
    if (result.status !== 202)
      throw new Error(`upload answered ${result.status}: ${result.body.slice(0, 300)}`);

    // Not part of the goal: what the server holds once a worker takes the file (extraction and
    // chunking of all that text), sampled the same way until the document is ready or failed.
    const processing = await followProcessing(server, JSON.parse(result.body).document_ids[0]);

    const peak = Math.max(...samples);
    const growth = peak - baseline;
    const mib = (n: number) => `${fmt(n / MIB, 1)} MiB`;
    return {
      title: 'Memory: server RSS during a 100 MB upload',
      lines: [
        `Real server (child process, embedded, workers running). The bench streams one multipart \`file\` part of ${fmt(bytes / MB, 0)} MB of text (generated on the fly, Content-Length known) to POST /v1/ingest/file; the server's VmRSS (/proc/<pid>/status) is sampled every ${SAMPLE_MS} ms from the request's start to its 202 (${samples.length} samples). Baseline = median of 20 samples after a warm-up upload.`,
        '',
        '| upload | time to 202 | MB/s | baseline RSS | peak RSS | growth |',
        '|---:|---:|---:|---:|---:|---:|',
        `| ${fmt(bytes / MB, 0)} MB | ${fmt(ms / 1000, 2)} s | ${fmt(bytes / MB / (ms / 1000), 1)} | ${mib(baseline)} | ${mib(peak)} | ${mib(growth)} |`,
        '',
        `- After the 202 (not part of the goal): the document was ${processing.status} after ${fmt(processing.ms / 1000, 1)} s; meanwhile RSS peaked at ${mib(processing.peak)} (${mib(processing.peak - baseline)} above the baseline) while a worker extracted, chunked and indexed it.`,
        `- Goal: growth ≤ ${mib(GOAL_GROWTH_BYTES)}: **${mib(growth)}**, ${growth <= GOAL_GROWTH_BYTES ? 'met' : 'NOT met'}${options?.quick ? ` (quick run: ${fmt(bytes / MB, 0)} MB, not 100 MB)` : ''}.`,
      ],
    };
  } finally {
    await server.stop();
  }
};

const thisFile = fileURLToPath(import.meta.url);
if (process.argv.slice(1).some((arg) => path.resolve(arg) === thisFile)) {
  const section = await run({ quick: process.argv.includes('--quick') });
  console.log(`## ${section.title}\n\n${section.lines.join('\n')}`);
}
