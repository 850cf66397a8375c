// Bench: query latency restricted beyond the org, on section 4's corpus at 1M chunks (its
// QueryCorpus, ProseWindows and query sets), on SQLite and PostgreSQL. Every 100th document
// goes into the partition `one-pct` (1% of each org's documents), the rest into `default`.
// Each restriction is a row: the unrestricted query first, then the same queries restricted by
// RESTRICTIONS (partitions, then principals). The goal: a
// restriction to 1% of the big org answers with a p95 ≤ 1.2× the unrestricted one, and one that
// covers the whole org is no slower than none.
//
//   npm run bench -- partitions            (DATABASE_URL set for the PostgreSQL rows)
// With BENCH_PARTITIONS_DIR=<dir>, each backend's corpus is kept (SQLite's files in the folder,
// PostgreSQL's schema named there) and a later run only queries it; BENCH_PARTITIONS_ONLY=sqlite
// or =postgres times one backend.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Benchmark, BenchOptions, BenchSection } from './lib.js';
import { fmt, median, percentile, seededRandom } from './lib.js';
import {
  type Backend,
  makeLongQueries,
  makeQueries,
  postgresBackend,
  QueryCorpus,
  type Restriction,
  type SavedCorpus,
  sqliteBackend,
} from './query.bench.js';

/** The partition of every 100th document. */
const ONE_PERCENT = 'one-pct';
/** The principal in the access list of every 100th document (another than the partition's); the rest have REST_PRINCIPAL. */
const ONE_PERCENT_PRINCIPAL = 'group:one-pct';
const REST_PRINCIPAL = 'group:rest';
/** Timing passes over one corpus: each gives a p95, and the table shows their median and spread. */
const PASSES = 3;
/** A restricted p95 may be this many times the unrestricted one. */
const GOAL_RATIO = 1.2;

/** The restrictions each query is timed under, beside none. */
export const RESTRICTIONS: ReadonlyArray<{ label: string; restriction: Restriction }> = [
  { label: 'partitions: [one-pct] (1% of the org)', restriction: { partitions: [ONE_PERCENT] } },
  { label: 'partitions: [default] (99%)', restriction: { partitions: ['default'] } },
  {
    label: 'partitions: [default, one-pct] (100%)',
    restriction: { partitions: ['default', ONE_PERCENT] },
  },
  {
    label: `principals: [${ONE_PERCENT_PRINCIPAL}] (1% of the org)`,
    restriction: { principals: [ONE_PERCENT_PRINCIPAL] },
  },
  { label: `principals: [${REST_PRINCIPAL}] (99%)`, restriction: { principals: [REST_PRINCIPAL] } },
];

interface Row {
  label: string;
  /** Each pass's p95 and p50, milliseconds. */
  p95s: number[];
  p50s: number[];
  hits: number[];
  queries: number;
}

/** A backend's corpus kept by an earlier run (BENCH_PARTITIONS_DIR): where it is and its tenants. */
interface KeptCorpus {
  /** PostgreSQL's schema (SQLite's files are in the folder itself). */
  schema?: string;
  corpus: SavedCorpus;
}

/** The backend to time and, in a keep folder, the corpus an earlier run left there and how to record this run's. */
interface Timed {
  backend: Backend;
  kept?: KeptCorpus;
  keep?: (corpus: SavedCorpus) => void;
}

async function timeBackend(
  { backend, kept, keep }: Timed,
  chunks: number,
  sets: Array<{ name: string; timed: string[]; warmUp: string[] }>,
  budgetMs: number,
): Promise<{ rows: Row[]; buildMs: number | null; chunks: number }> {
  const reused = kept !== undefined && kept.corpus.tenants.reduce((n, t) => n + t.chunks, 0) >= chunks;
  const corpus = await QueryCorpus.open(backend, seededRandom(7), reused ? kept.corpus : undefined);
  corpus.partitionOf = (n) => (n % 100 === 0 ? ONE_PERCENT : 'default');
  // Other documents than the partition's: a restriction by principals is not one by partition.
  corpus.accessOf = (n) => (n % 100 === 1 ? [ONE_PERCENT_PRINCIPAL] : [REST_PRINCIPAL]);
  const rows: Row[] = [];
  try {
    if (!reused) {
      await corpus.grow(chunks);
      await backend.settle?.();
      keep?.(corpus.saved());
    }
    const paths = [{ label: 'unrestricted', restriction: {} as Restriction }, ...RESTRICTIONS];
    for (const set of sets) {
      const setRows = paths.map((p) => ({
        label: `${set.name}: ${p.label}`,
        p95s: [] as number[],
        p50s: [] as number[],
        hits: [] as number[],
        queries: 0,
      }));
      for (const q of set.warmUp)
        for (const p of paths) await corpus.timeStore(corpus.big, q, null, p.restriction);
      for (let pass = 0; pass < PASSES; pass++) {
        const times: number[][] = paths.map(() => []);
        const deadline = performance.now() + budgetMs;
        for (const [i, q] of set.timed.entries()) {
          if (i >= 20 && performance.now() > deadline) break;
          const order = paths.map((_, k) => k);
          if (i % 2 === 1) order.reverse();
          for (const k of order) {
            const { ms, hits } = await corpus.timeStore(corpus.big, q, null, paths[k]!.restriction);
            times[k]!.push(ms);
            if (pass === 0) setRows[k]!.hits.push(hits);
          }
        }
        setRows.forEach((row, k) => {
          row.p95s.push(percentile(times[k]!, 95));
          row.p50s.push(percentile(times[k]!, 50));
          row.queries = Math.max(row.queries, times[k]!.length);
        });
      }
      rows.push(...setRows);
    }
    return { rows, buildMs: reused ? null : corpus.buildMs, chunks: corpus.totalChunks };
  } finally {
    await corpus.close();
    await backend.cleanup();
  }
}

const spread = (values: number[]) => `${fmt(Math.min(...values), 2)}–${fmt(Math.max(...values), 2)}`;

function report(
  label: string,
  timed: { rows: Row[]; buildMs: number | null; chunks: number },
  quick: boolean,
) {
  const lines = [
    `| backend | chunks | query: restriction | queries per pass | p50 ms (median) | p95 ms (median of ${PASSES} passes) | p95 spread | × unrestricted p95 | median hits |`,
    '|---|---:|---|---:|---:|---:|---:|---:|---:|',
  ];
  const goals: string[] = [];
  for (const row of timed.rows) {
    const set = row.label.split(':')[0]!;
    const base = timed.rows.find((r) => r.label === `${set}: unrestricted`)!;
    const ratio = median(row.p95s) / median(base.p95s);
    lines.push(
      `| ${label} | ${timed.chunks.toLocaleString('en-US')} | ${row.label} | ${row.queries} | ${fmt(median(row.p50s), 2)} | ${fmt(median(row.p95s), 2)} | ${spread(row.p95s)} | ${fmt(ratio, 2)} | ${median(row.hits)} |`,
    );
    if (row === base) continue;
    const limit = row.label.includes('100%') ? 1 : GOAL_RATIO;
    goals.push(
      `- Goal: ${label}, ${row.label}, p95 ≤ ${limit}× unrestricted: **${fmt(ratio, 2)}×** (${fmt(median(row.p95s), 1)} vs ${fmt(median(base.p95s), 1)} ms), ${ratio <= limit ? 'met' : 'NOT met'}${quick ? ' (quick run)' : ''}.`,
    );
  }
  lines.push(
    '',
    timed.buildMs === null
      ? `- ${label} corpus: ${timed.chunks.toLocaleString('en-US')} chunks, opened again from BENCH_PARTITIONS_DIR (built by an earlier run).`
      : `- ${label} corpus build: ${timed.chunks.toLocaleString('en-US')} chunks after ${fmt(timed.buildMs / 1000)} s.`,
  );
  return { lines, goals };
}

export const run: Benchmark = async (options?: BenchOptions): Promise<BenchSection> => {
  const quick = options?.quick ?? false;
  const chunks = quick ? 50_000 : 1_000_000;
  const count = quick ? 60 : 300;
  const warmUpCount = quick ? 10 : 30;
  const budgetMs = quick ? 20_000 : 60_000;
  const short = makeQueries(count + warmUpCount, seededRandom(11));
  const long = makeLongQueries(count + warmUpCount, seededRandom(13));
  const sets = [
    { name: '1–4 words', timed: short.slice(warmUpCount), warmUp: short.slice(0, warmUpCount) },
    { name: '12–30 words', timed: long.slice(warmUpCount), warmUp: long.slice(0, warmUpCount) },
  ];
  const lines = [
    `Section 4's corpus and query sets (big org, 60% of the chunks; store.search(), top_k 10, no filter), with every 100th document in the partition \`${ONE_PERCENT}\` and the rest in \`default\`, and every document with an access list: \`[${ONE_PERCENT_PRINCIPAL}]\` for one in 100 (not those of the partition), \`[${REST_PRINCIPAL}]\` for the others (a query without principals sees them all). Each query runs once per restriction, restrictions interleaved; ${PASSES} timing passes over the same corpus (up to ${count} queries each, ${fmt(budgetMs / 1000, 0)} s per set and pass at most), after ${warmUpCount} warm-up queries: the p95 column is the median of the passes' p95s, the spread their lowest and highest.`,
    '',
  ];
  const goals: string[] = [];
  const load = () =>
    os
      .loadavg()
      .map((n) => fmt(n, 1))
      .join(' / ');
  const loadAtStart = load();
  for (const label of ['SQLite', 'PostgreSQL'] as const) {
    const only = process.env.BENCH_PARTITIONS_ONLY?.toLowerCase();
    if (only && only !== (label === 'SQLite' ? 'sqlite' : 'postgres')) continue;
    const timed = await backendOf(label, process.env.BENCH_PARTITIONS_DIR);
    if (timed === null) {
      lines.push('- PostgreSQL: skipped (DATABASE_URL not set).');
      continue;
    }
    try {
      const out = report(label, await timeBackend(timed, chunks, sets, budgetMs), quick);
      lines.push(...out.lines, '');
      goals.push(...out.goals);
    } catch (error) {
      lines.push(`- ${label}: failed: ${error instanceof Error ? error.message : String(error)}`, '');
    }
  }
  lines.push(
    `- Machine load (1 / 5 / 15-minute load averages, ${os.cpus().length} cores, shared): ${loadAtStart} at the start, ${load()} at the end.`,
    ...goals,
  );
  return { title: 'Partitions: restricted query latency', lines };
};

/** The backend of `label`, with the corpus kept in `keepDir` (from an earlier run) when one is named. */
async function backendOf(label: 'SQLite' | 'PostgreSQL', keepDir: string | undefined): Promise<Timed | null> {
  if (!keepDir) return label === 'SQLite' ? { backend: sqliteBackend() } : nullable(await postgresBackend());
  const file = path.join(keepDir, `${label.toLowerCase()}.json`);
  const kept = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as KeptCorpus) : undefined;
  let schema: string | undefined;
  let backend: Backend | null;
  if (label === 'SQLite') {
    const dir = path.join(keepDir, 'sqlite');
    mkdirSync(dir, { recursive: true });
    backend = sqliteBackend(dir);
  } else {
    schema = kept?.schema ?? `bench_partitions_${Date.now().toString(36)}`;
    backend = await postgresBackend(schema);
  }
  if (backend === null) return null;
  const keep = (corpus: SavedCorpus) => writeFileSync(file, JSON.stringify({ schema, corpus }));
  return { backend, keep, ...(kept ? { kept } : {}) };
}

const nullable = (backend: Backend | null): Timed | null => (backend === null ? null : { backend });

const thisFile = fileURLToPath(import.meta.url);
if (process.argv.slice(1).some((arg) => path.resolve(arg) === thisFile)) {
  const section = await run({ quick: process.argv.includes('--quick') });
  console.log(`## ${section.title}\n\n${section.lines.join('\n')}`);
}
