// Embedded keyword query latency at 10,000,000 chunks (the goal: p95 ≤ 100 ms, 1–4 words, big
// org). The corpus is section 4's (bench/query.bench.ts: same prose windows, tenants and shelves),
// grown ten times further. Building it takes tens of minutes and ~19 GB of disk, so the run can
// keep it: with BENCH_10M_DIR set, a corpus found there is opened again and only queried, and one
// built there is left in place (tenants.json beside the database says what it holds). Without
// it, the corpus is built in a temporary folder and removed afterwards.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type Benchmark,
  type BenchOptions,
  type BenchSection,
  fmt,
  median,
  percentile,
  seededRandom,
} from './lib.js';
import { makeLongQueries, makeQueries, QueryCorpus, type SavedCorpus, sqliteBackend } from './query.bench.js';

const GOAL_P95_MS = 100;
const TOP_K_NOTE = 'top_k 10, no filter';
const SAVED_FILE = 'tenants.json';

interface PathTimes {
  label: string;
  times: number[];
  hits: number[];
}

/** Every query once per path, the order of the paths alternating, as in section 4. */
async function timePaths(
  corpus: QueryCorpus,
  setName: string,
  queries: string[],
  warmUp: string[],
  budgetMs: number,
): Promise<PathTimes[]> {
  const paths = [
    {
      label: `${setName}: HTTP (app.inject), big org (60%)`,
      time: (q: string) => corpus.timeHttp(corpus.big, q),
    },
    { label: `${setName}: store.search(), big org`, time: (q: string) => corpus.timeStore(corpus.big, q) },
    {
      label: `${setName}: store.search(), small org (10%)`,
      time: (q: string) => corpus.timeStore(corpus.small, q),
    },
  ];
  for (const q of warmUp) for (const p of paths) await p.time(q);
  const results: PathTimes[] = paths.map((p) => ({ label: p.label, times: [], hits: [] }));
  const deadline = performance.now() + budgetMs;
  for (const [i, q] of queries.entries()) {
    if (i >= 20 && performance.now() > deadline) break;
    const order = paths.map((_, k) => k);
    if (i % 2 === 1) order.reverse();
    for (const k of order) {
      const { ms, hits } = await paths[k]!.time(q);
      results[k]!.times.push(ms);
      results[k]!.hits.push(hits);
    }
  }
  return results;
}

function loadSaved(dir: string): SavedCorpus | undefined {
  const file = path.join(dir, SAVED_FILE);
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as SavedCorpus) : undefined;
}

export const run: Benchmark = async (options?: BenchOptions): Promise<BenchSection> => {
  const quick = options?.quick ?? false;
  const target = quick ? 200_000 : 10_000_000;
  const keepDir = process.env.BENCH_10M_DIR;
  if (keepDir) mkdirSync(keepDir, { recursive: true });
  const saved = keepDir ? loadSaved(keepDir) : undefined;
  const reused = saved !== undefined && saved.tenants.reduce((n, t) => n + t.chunks, 0) >= target;
  const backend = sqliteBackend(keepDir);
  const corpus = await QueryCorpus.open(backend, seededRandom(7), saved);
  const load = () =>
    os
      .loadavg()
      .map((l) => fmt(l, 2))
      .join(' / ');
  const lines: string[] = [];
  try {
    if (!reused) {
      await corpus.grow(target);
      if (keepDir) writeFileSync(path.join(keepDir, SAVED_FILE), JSON.stringify(corpus.saved()));
    }
    const count = quick ? 60 : 300;
    const warmUpCount = quick ? 10 : 30;
    const budgetMs = quick ? 60_000 : 180_000;
    const short = makeQueries(count + warmUpCount, seededRandom(11));
    const long = makeLongQueries(count + warmUpCount, seededRandom(13));
    const loadBefore = load();
    const results = [
      ...(await timePaths(
        corpus,
        '1–4 words',
        short.slice(warmUpCount),
        short.slice(0, warmUpCount),
        budgetMs,
      )),
      ...(await timePaths(
        corpus,
        '12–30 words',
        long.slice(warmUpCount),
        long.slice(0, warmUpCount),
        budgetMs,
      )),
    ];
    const chunks = corpus.totalChunks.toLocaleString('en-US');
    const size = backend.size();
    lines.push(
      `Section 4's corpus (same prose windows, tenants 60% / 10% / 10% / 10% / 10%, 20 chunks per document) grown to ${chunks} chunks in one SQLite file; section 4's query sets (the same seeds), ${TOP_K_NOTE}, up to ${count} queries per set after ${warmUpCount} warm-up queries, paths interleaved, at most ${fmt(budgetMs / 60_000, 0)} min per set.`,
      '',
      '| chunks | path | queries | p50 ms | p95 ms | p99 ms | max ms | median hits |',
      '|---:|---|---:|---:|---:|---:|---:|---:|',
      ...results.map(
        (r) =>
          `| ${chunks} | ${r.label} | ${r.times.length} | ${fmt(percentile(r.times, 50), 2)} | ${fmt(percentile(r.times, 95), 2)} | ${fmt(percentile(r.times, 99), 2)} | ${fmt(Math.max(...r.times), 2)} | ${median(r.hits)} |`,
      ),
      '',
      reused
        ? `- Corpus opened again from BENCH_10M_DIR (built by an earlier run; ${size === null ? '' : `${fmt(size / 1e9, 2)} GB on disk`}).`
        : `- Corpus build (createDocuments + saveIndex): ${fmt(corpus.buildMs / 60_000, 1)} min${size === null ? '' : `, ${fmt(size / 1e9, 2)} GB on disk`}.`,
      `- Load average (1 / 5 / 15 min, ${os.cpus().length} CPUs) before timing: ${loadBefore}; after: ${load()}.`,
    );
    const http = results[0]!;
    const store = results[1]!;
    lines.push(
      `- Goal: embedded, 1–4 words, p95 ≤ ${GOAL_P95_MS} ms at ${chunks} chunks (big org): **HTTP ${fmt(percentile(http.times, 95), 1)} ms, store ${fmt(percentile(store.times, 95), 1)} ms**, ${percentile(http.times, 95) <= GOAL_P95_MS ? 'met' : 'NOT met'}${quick ? ' (quick run: not the 10M goal scale)' : ''}.`,
    );
  } finally {
    await corpus.close();
    await backend.cleanup();
  }
  return { title: 'Query latency at 10M chunks (embedded)', lines };
};

const thisFile = fileURLToPath(import.meta.url);
if (process.argv.slice(1).some((arg) => path.resolve(arg) === thisFile)) {
  const section = await run({ quick: process.argv.includes('--quick') });
  console.log(`## ${section.title}\n\n${section.lines.join('\n')}`);
}
