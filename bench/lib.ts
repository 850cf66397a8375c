// Shared shape of a benchmark: each bench/*.bench.ts exports `run()` returning a section of
// bench/RESULTS.md. bench/run.ts runs them in one process, one after another, so ratios compare
// figures taken on the same machine within minutes of each other.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface BenchSection {
  /** Heading of the section in RESULTS.md. */
  title: string;
  /** Markdown lines (tables, bullet points) with the measured figures. */
  lines: string[];
}

/** What bench/run.ts passes to every benchmark. */
export interface BenchOptions {
  /** `--quick`: smaller sizes and shorter runs, for a smoke test of the benchmarks themselves. */
  quick: boolean;
}

// The options are optional, so a benchmark that has no reduced mode can ignore them.
export type Benchmark = (options?: BenchOptions) => Promise<BenchSection>;

/** Median of a non-empty list of numbers. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The median of several runs' figures and their spread (min–max). */
export function medianSpread(values: number[]): { median: number; min: number; max: number } {
  return { median: median(values), min: Math.min(...values), max: Math.max(...values) };
}

/** A spread as `min–max`, each with `digits` decimals. */
export function fmtSpread(spread: { min: number; max: number }, digits = 0): string {
  return `${fmt(spread.min, digits)}–${fmt(spread.max, digits)}`;
}

/** The p-th percentile (0..100) by nearest rank. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

/** Runs `fn` `repeats` times and returns each wall time in milliseconds. */
export async function timeRuns(repeats: number, fn: () => unknown | Promise<unknown>): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < repeats; i++) {
    const start = process.hrtime.bigint();
    await fn();
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return times;
}

export function fmt(n: number, digits = 1): string {
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

/** The project root: the nearest folder above this file with a package.json (bench/ or dist/bench/). */
export function projectRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('package.json not found above bench/lib');
    dir = parent;
  }
  return dir;
}

/** Sleeps for `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A small seeded PRNG (mulberry32), so every run builds the same corpus and queries. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** "12.3 MB" (10^6 bytes). */
export function megabytes(bytes: number, digits = 1): string {
  return `${fmt(bytes / 1e6, digits)} MB`;
}

/** Runs `fn` with a client of its own on `url` (pg is loaded only when used). */
async function withPgClient<T>(url: string, fn: (client: import('pg').Client) => Promise<T>): Promise<T> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** VACUUM ANALYZE of every table of a schema, as autovacuum would do after a bulk load. */
export function analyzePostgresSchema(url: string, schema: string): Promise<void> {
  return withPgClient(url, async (client) => {
    const { rows } = await client.query<{ name: string }>(
      'SELECT tablename AS name FROM pg_tables WHERE schemaname = $1',
      [schema],
    );
    for (const { name } of rows) await client.query(`VACUUM ANALYZE "${schema}"."${name}"`);
  });
}

/** Drops a benchmark's PostgreSQL schema and everything in it. */
export function dropPostgresSchema(url: string, schema: string): Promise<void> {
  return withPgClient(url, async (client) => {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  });
}
