// Query latency at scale: BM25 p50/p95 over 100k and 1M chunks. Pushing a million chunks through
// HTTP ingest would take hours here, so the corpus is written straight through the document store
// adapter (createDocuments + saveIndex, the calls the worker makes) into a fresh database, with
// chunks of ~100 words of real prose and tenants of unequal size (one org holds 60%). Queries are
// then timed two ways, interleaved: through the whole HTTP layer (app.inject: auth, rate limit,
// validation, search, usage count, serialisation) and directly on the store's search().
// Two query sets: 1–4 words, and 12–30 words (natural-language queries, as RAG clients send).
// Goals at 1M chunks, p95: embedded 50 ms (short) and 30 ms (long); PostgreSQL, which runs the
// same when DATABASE_URL is set, 50 ms and 80 ms.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config/index.js';
import { type Filter, parseFilter } from '../src/domain/filter.js';
import type { ChunkRow, NewDocument, SearchQuery } from '../src/domain/types.js';
import { createLogger } from '../src/start/logger.js';
import { createRuntime, type Runtime } from '../src/start/runtime.js';
import { corpusText } from './corpus.js';
import {
  analyzePostgresSchema,
  type Benchmark,
  type BenchOptions,
  type BenchSection,
  dropPostgresSchema,
  fmt,
  median,
  percentile,
  seededRandom,
} from './lib.js';

const GOAL_P95_MS = 50;
/** Goals of the 12–30 word set at 1M chunks: embedded, and PostgreSQL (1–4 words: 50 ms). */
const GOAL_LONG_P95_MS = 30;
const GOAL_PG_P95_MS = 50;
const GOAL_PG_LONG_P95_MS = 80;
/** Goals of the 1–4 word set with a metadata range filter at 1M chunks. */
const GOAL_FILTER_P95_MS = 50;
const GOAL_PG_FILTER_P95_MS = 100;
const CHUNKS_PER_DOCUMENT = 20;
const DOCUMENTS_PER_BATCH = 250;
/** saveIndex calls in flight (PostgreSQL uses its pool; SQLite runs them one by one anyway). */
const SAVE_CONCURRENCY = 8;
const TOP_K = 10;
/** Queries timed per path even when the time budget is spent. */
const MIN_QUERIES = 20;
/**
 * PostgreSQL at 1M is attempted only when the 100k build projects to finish within this: the
 * section's default, or BENCH_PG_MILLION_BUDGET_MIN minutes (the build is slow on a small
 * machine; docs/BENCHMARKS.md).
 */
export function pgMillionBudgetMs(defaultMinutes = 5): number {
  const raw = process.env.BENCH_PG_MILLION_BUDGET_MIN;
  if (raw === undefined || raw === '') return defaultMinutes * 60_000;
  const minutes = Number(raw);
  if (!Number.isFinite(minutes) || minutes < 0) {
    throw new Error(`BENCH_PG_MILLION_BUDGET_MIN must be a number of minutes, got ${JSON.stringify(raw)}`);
  }
  return minutes * 60_000;
}

/**
 * Every document gets `shelf`, "000" to "999" in turn: a sortable key, so a range filter picks a
 * known share of an org (`$lt "010"` 1%, `$lt "500"` 50%).
 */
const SHELVES = 1000;
const RANGE_FILTERS = [
  { label: '1%', filter: parseFilter({ shelf: { $lt: '010' } }, '/filter') },
  { label: '50%', filter: parseFilter({ shelf: { $lt: '500' } }, '/filter') },
];

/** Tenants: one big org and four smaller ones, as shares of all chunks. */
export const ORG_SHARES = [0.6, 0.1, 0.1, 0.1, 0.1];

export interface Tenant {
  orgId: string;
  apiKey: string;
  share: number;
  chunks: number;
}

/** Word starts of the corpus: a chunk is a window of whole words between two starts. */
export class ProseWindows {
  private readonly text = corpusText();
  private readonly starts: Int32Array;

  constructor(private readonly random: () => number) {
    const starts: number[] = [];
    for (const m of this.text.matchAll(/\S+/g)) starts.push(m.index);
    this.starts = Int32Array.from(starts);
  }

  /** ~100 words (80–120) from a random place in the corpus. */
  chunk(): string {
    const words = 80 + Math.floor(this.random() * 41);
    const first = Math.floor(this.random() * (this.starts.length - words - 1));
    return this.text.slice(this.starts[first]!, this.starts[first + words]!).trim();
  }
}

/**
 * Realistic queries: 1–4 words, each drawn from a frequency band of the corpus vocabulary —
 * common words (the top 150, stop words included), mid-frequency, and rare ones.
 */
export function makeQueries(count: number, random: () => number): string[] {
  const counts = new Map<string, number>();
  for (const m of corpusText()
    .toLowerCase()
    .matchAll(/\p{L}{3,}/gu)) {
    counts.set(m[0], (counts.get(m[0]) ?? 0) + 1);
  }
  const ranked = [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map((e) => e[0]);
  const bands = [
    { weight: 0.3, words: ranked.slice(0, 150) },
    { weight: 0.45, words: ranked.slice(150, 3_000) },
    { weight: 0.25, words: ranked.slice(3_000).filter((w) => (counts.get(w) ?? 0) >= 3) },
  ];
  const pick = () => {
    const r = random();
    const band =
      r < bands[0]!.weight ? bands[0]! : r < bands[0]!.weight + bands[1]!.weight ? bands[1]! : bands[2]!;
    return band.words[Math.floor(random() * band.words.length)]!;
  };
  return Array.from({ length: count }, () =>
    Array.from({ length: 1 + Math.floor(random() * 4) }, pick).join(' '),
  );
}

/**
 * Natural-language queries of 12–30 words, as RAG clients send them: a run of consecutive words of
 * the corpus (letters only, so code and markup drop out), stop words and all.
 */
export function makeLongQueries(count: number, random: () => number): string[] {
  const words = [...corpusText().matchAll(/\p{L}{2,}/gu)].map((m) => m[0]);
  return Array.from({ length: count }, () => {
    const length = 12 + Math.floor(random() * 19);
    const first = Math.floor(random() * (words.length - length));
    return words.slice(first, first + length).join(' ');
  });
}

export interface Backend {
  label: string;
  env: Record<string, string>;
  /** Size of the database on disk, when it is a file. */
  size(): number | null;
  /** Run after each build, before timing: what a production database does by itself after a bulk load. */
  settle?(): Promise<void>;
  cleanup(): Promise<void>;
}

/** A fresh SQLite database in a temporary folder, or in `keepDir`, which cleanup leaves in place. */
export function sqliteBackend(keepDir?: string): Backend {
  const dir = keepDir ?? mkdtempSync(path.join(tmpdir(), 'docindex-query-bench-'));
  return {
    label: 'SQLite (embedded)',
    env: { DATA_DIR: dir },
    size: () => {
      let bytes = 0;
      for (const name of ['docindex.db', 'docindex.db-wal']) {
        try {
          bytes += statSync(path.join(dir, name)).size;
        } catch {
          // no WAL file right after a checkpoint
        }
      }
      return bytes;
    },
    cleanup: async () => {
      if (keepDir === undefined) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A fresh schema of the database DATABASE_URL names, or `keepSchema`, which cleanup leaves in place;
 * null when DATABASE_URL is unset or the PostgreSQL document store is not in this build.
 */
export async function postgresBackend(keepSchema?: string): Promise<Backend | null> {
  const url = process.env.DATABASE_URL;
  if (!url) return null;
  try {
    // Computed specifier: the adapter is checked for at run time, not by the compiler.
    const adapter = '../src/adapters/postgres/document-store.js';
    const mod = (await import(adapter)) as Record<string, unknown>;
    if (typeof mod.PgDocumentStore !== 'function') return null;
  } catch {
    return null;
  }
  const schema = keepSchema ?? `bench_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const dir = mkdtempSync(path.join(tmpdir(), 'docindex-query-bench-pg-'));
  return {
    label: 'PostgreSQL',
    env: { DATABASE_URL: url, DATABASE_SCHEMA: schema, DATA_DIR: dir },
    size: () => null,
    // Autovacuum analyzes a table after a bulk load within a minute or so; this machine's server
    // runs with it off, so the bench does it: the RUM path reads the term statistics it gathers.
    settle: () => analyzePostgresSchema(url, schema),
    cleanup: async () => {
      if (keepSchema === undefined) await dropPostgresSchema(url, schema);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** What a kept corpus needs to be opened again: its tenants and how many documents it holds. */
export interface SavedCorpus {
  tenants: Tenant[];
  documentsMade: number;
}

/** What restricts a query beyond its org and filter (the partitions it reads, the principals it acts for). */
export type Restriction = Pick<SearchQuery, 'partitions' | 'principals'>;

/** Called with each batch of documents once their chunks are saved (the hybrid bench adds vectors). */
export type AfterBatch = (
  tenant: Tenant,
  documentIds: readonly string[],
  chunksPerDocument: number,
) => Promise<void>;

/** Builds and queries one backend's corpus, growing it through each scale. */
export class QueryCorpus {
  private readonly windows: ProseWindows;
  /** Documents made so far, across tenants: each gets the next shelf. */
  private documentsMade = 0;
  private tenants: Tenant[] = [];
  private app: FastifyInstance | null = null;
  buildMs = 0;
  afterBatch: AfterBatch | null = null;
  /** The partition of the n-th document made (across tenants); null: every one in `default`. */
  partitionOf: ((n: number) => string) | null = null;
  /** The access list of the n-th document made; null: none has one. */
  accessOf: ((n: number) => string[]) | null = null;

  private constructor(
    readonly runtime: Runtime,
    random: () => number,
  ) {
    this.windows = new ProseWindows(random);
  }

  /** Opens the backend's corpus: a new one, or the one `saved` describes (kept by an earlier run). */
  static async open(backend: Backend, random: () => number, saved?: SavedCorpus): Promise<QueryCorpus> {
    const config = loadConfig({
      LOG_LEVEL: 'silent',
      DEFAULT_RATE_LIMIT_RPM: '10000000',
      UNAUTHENTICATED_RATE_LIMIT_RPM: '10000000',
      ...backend.env,
    });
    const corpus = new QueryCorpus(await createRuntime(config, createLogger('silent')), random);
    if (saved) {
      corpus.tenants = saved.tenants.map((t) => ({ ...t }));
      corpus.documentsMade = saved.documentsMade;
    } else {
      for (const [i, share] of ORG_SHARES.entries()) {
        const issued = await corpus.runtime.admin.createOrg(`bench-${i}`);
        corpus.tenants.push({ orgId: issued.org_id, apiKey: issued.api_key, share, chunks: 0 });
      }
    }
    corpus.app = await buildApp(corpus.runtime.appDeps);
    return corpus;
  }

  get big(): Tenant {
    return this.tenants[0]!;
  }

  saved(): SavedCorpus {
    return { tenants: this.tenants.map((t) => ({ ...t })), documentsMade: this.documentsMade };
  }

  get small(): Tenant {
    return this.tenants[1]!;
  }

  get totalChunks(): number {
    return this.tenants.reduce((n, t) => n + t.chunks, 0);
  }

  /** Adds chunks until the corpus holds `target`, split between tenants by their shares. */
  async grow(target: number): Promise<void> {
    const start = performance.now();
    for (const tenant of this.tenants) {
      const wanted = Math.round(target * tenant.share);
      while (tenant.chunks < wanted) {
        const docs = Math.min(DOCUMENTS_PER_BATCH, Math.ceil((wanted - tenant.chunks) / CHUNKS_PER_DOCUMENT));
        await this.addDocuments(tenant, docs);
        tenant.chunks += docs * CHUNKS_PER_DOCUMENT;
      }
    }
    this.buildMs += performance.now() - start;
  }

  private async addDocuments(tenant: Tenant, count: number): Promise<void> {
    const now = new Date();
    const docs: NewDocument[] = Array.from({ length: count }, () => {
      const n = this.documentsMade++;
      return {
        id: randomUUID(),
        orgId: tenant.orgId,
        source: { type: 'text', filename: null, url: null, content_type: 'text/plain', bytes: null },
        metadata: { shelf: String(n % SHELVES).padStart(3, '0') },
        chunkSize: 512,
        chunkOverlap: 64,
        tokenizer: 'o200k_base',
        createdAt: now,
        text: null,
        blobKey: null,
        fetchUrl: null,
        ...(this.partitionOf === null ? {} : { partition: this.partitionOf(n) }),
        ...(this.accessOf === null ? {} : { access: this.accessOf(n) }),
      } satisfies NewDocument;
    });
    const store = this.runtime.documents;
    await store.createDocuments(docs);
    let next = 0;
    const saver = async () => {
      while (next < docs.length) {
        const doc = docs[next++]!;
        const chunks: ChunkRow[] = [];
        let offset = 0;
        for (let index = 0; index < CHUNKS_PER_DOCUMENT; index++) {
          const text = this.windows.chunk();
          // ~1.3 tokens per English word; the count is stored, never used by search.
          const tokenCount = Math.round(text.split(/\s+/).length * 1.3);
          chunks.push({
            index,
            text,
            tokenCount,
            charStart: offset,
            charEnd: offset + text.length,
            pageStart: null,
            pageEnd: null,
          });
          offset += text.length;
        }
        const tokenCount = chunks.reduce((n, c) => n + c.tokenCount, 0);
        const saved = await store.saveIndex(doc.id, {
          chunks,
          tokenCount,
          contentSha256: doc.id.replaceAll('-', '').padEnd(64, '0'),
          contentType: 'text/plain',
          bytes: offset,
        });
        if (!saved) throw new Error(`saveIndex refused document ${doc.id}`);
      }
    };
    await Promise.all(Array.from({ length: SAVE_CONCURRENCY }, saver));
    await this.afterBatch?.(
      tenant,
      docs.map((d) => d.id),
      CHUNKS_PER_DOCUMENT,
    );
  }

  /** One query straight on the store, restricted by `restriction` if given; returns milliseconds. */
  async timeStore(
    tenant: Tenant,
    query: string,
    filter: Filter | null = null,
    restriction: Restriction = {},
  ): Promise<{ ms: number; hits: number }> {
    const start = performance.now();
    const hits = await this.runtime.keyword.search({
      orgId: tenant.orgId,
      query,
      topK: TOP_K,
      filter,
      documentIds: null,
      ...restriction,
    });
    return { ms: performance.now() - start, hits: hits.length };
  }

  /** One query through the HTTP layer (in-process inject); returns milliseconds. */
  async timeHttp(tenant: Tenant, query: string): Promise<{ ms: number; hits: number }> {
    const start = performance.now();
    const res = await this.app!.inject({
      method: 'POST',
      url: '/v1/query',
      headers: { authorization: `Bearer ${tenant.apiKey}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ query, top_k: TOP_K }),
    });
    const ms = performance.now() - start;
    if (res.statusCode !== 200)
      throw new Error(`POST /v1/query answered ${res.statusCode}: ${res.body.slice(0, 300)}`);
    return { ms, hits: (res.json() as { results: unknown[] }).results.length };
  }

  async close(): Promise<void> {
    await this.app?.close();
    await this.runtime.close();
  }
}

interface Latencies {
  label: string;
  times: number[];
  hits: number[];
}

/** Every query once per path, paths interleaved (order alternating) so noise falls on all alike. */
async function timeQueries(corpus: QueryCorpus, set: QuerySet): Promise<Latencies[]> {
  const { timed: queries, warmUp, budgetMs } = set;
  const paths = [
    {
      label: `${set.name}: HTTP (app.inject), big org (${fmt(ORG_SHARES[0]! * 100, 0)}%)`,
      time: (q: string) => corpus.timeHttp(corpus.big, q),
    },
    { label: `${set.name}: store.search(), big org`, time: (q: string) => corpus.timeStore(corpus.big, q) },
    {
      label: `${set.name}: store.search(), small org (${fmt(ORG_SHARES[1]! * 100, 0)}%)`,
      time: (q: string) => corpus.timeStore(corpus.small, q),
    },
    ...RANGE_FILTERS.map(({ label, filter }) => ({
      label: `${set.name}: store.search(), big org, metadata range filter matching ${label} of it`,
      time: (q: string) => corpus.timeStore(corpus.big, q, filter),
    })),
  ];
  for (const q of warmUp) for (const p of paths) await p.time(q);
  const results: Latencies[] = paths.map((p) => ({ label: p.label, times: [], hits: [] }));
  // A slow backend could take hours over every query: stop at the budget, and say so.
  const deadline = performance.now() + budgetMs;
  for (const [i, q] of queries.entries()) {
    if (i >= MIN_QUERIES && performance.now() > deadline) break;
    const forward = paths.map((_, k) => k);
    const order = i % 2 === 0 ? forward : forward.reverse();
    for (const k of order) {
      const { ms, hits } = await paths[k]!.time(q);
      results[k]!.times.push(ms);
      results[k]!.hits.push(hits);
    }
  }
  return results;
}

interface ScaleResult {
  chunks: number;
  buildMs: number;
  sizeBytes: number | null;
  latencies: Latencies[];
}

interface QuerySet {
  /** How the set is labelled in the table: "1–4 words". */
  name: string;
  timed: string[];
  warmUp: string[];
  /** Wall-time cap on timing one scale's queries. */
  budgetMs: number;
}

async function runBackend(
  backend: Backend,
  scales: number[],
  sets: QuerySet[],
  buildBudgetMs: number | null,
): Promise<{ results: ScaleResult[]; notes: string[] }> {
  const corpus = await QueryCorpus.open(backend, seededRandom(7));
  const results: ScaleResult[] = [];
  const notes: string[] = [];
  try {
    for (const scale of scales) {
      if (buildBudgetMs !== null && results.length > 0) {
        const last = results[results.length - 1]!;
        const projected = (last.buildMs / last.chunks) * (scale - last.chunks);
        if (projected > buildBudgetMs) {
          notes.push(
            `${backend.label} at ${scale.toLocaleString('en-US')} chunks: skipped — building ${last.chunks.toLocaleString('en-US')} took ${fmt(last.buildMs / 1000)} s, so the rest would take ~${fmt(projected / 60_000)} min (budget ${fmt(buildBudgetMs / 60_000, 0)} min).`,
          );
          break;
        }
      }
      await corpus.grow(scale);
      await backend.settle?.();
      const latencies: Latencies[] = [];
      for (const set of sets) latencies.push(...(await timeQueries(corpus, set)));
      results.push({
        chunks: corpus.totalChunks,
        buildMs: corpus.buildMs,
        sizeBytes: backend.size(),
        latencies,
      });
    }
  } finally {
    await corpus.close();
    await backend.cleanup();
  }
  return { results, notes };
}

function table(label: string, results: ScaleResult[]): string[] {
  const lines = [
    `| backend | chunks | path | queries | p50 ms | p95 ms | p99 ms | max ms | median hits |`,
    '|---|---:|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of results) {
    for (const l of r.latencies) {
      lines.push(
        `| ${label} | ${r.chunks.toLocaleString('en-US')} | ${l.label} | ${l.times.length} | ${fmt(percentile(l.times, 50), 2)} | ${fmt(percentile(l.times, 95), 2)} | ${fmt(percentile(l.times, 99), 2)} | ${fmt(Math.max(...l.times), 2)} | ${median(l.hits)} |`,
      );
    }
  }
  return lines;
}

function buildNotes(label: string, results: ScaleResult[]): string {
  return `- ${label} corpus build (createDocuments + saveIndex): ${results
    .map(
      (r) =>
        `${r.chunks.toLocaleString('en-US')} chunks after ${fmt(r.buildMs / 1000)} s${r.sizeBytes === null ? '' : ` (${fmt(r.sizeBytes / 1e9, 2)} GB on disk)`}`,
    )
    .join('; ')}.`;
}

export const run: Benchmark = async (options?: BenchOptions): Promise<BenchSection> => {
  const quick = options?.quick ?? false;
  const scales = quick ? [10_000, 50_000] : [100_000, 1_000_000];
  const count = quick ? 60 : 300;
  const warmUpCount = quick ? 10 : 30;
  const budgetMs = quick ? 60_000 : 180_000;
  const short = makeQueries(count + warmUpCount, seededRandom(11));
  const long = makeLongQueries(count + warmUpCount, seededRandom(13));
  const sets: QuerySet[] = [
    { name: '1–4 words', timed: short.slice(warmUpCount), warmUp: short.slice(0, warmUpCount), budgetMs },
    { name: '12–30 words', timed: long.slice(warmUpCount), warmUp: long.slice(0, warmUpCount), budgetMs },
  ];

  const sqlite = await runBackend(sqliteBackend(), scales, sets, null);
  const lines = [
    `Two query sets, up to ${count} queries each: 1–4 words (30% common words, stop words included; 45% mid-frequency; 25% rare), and 12–30 words (runs of consecutive words of the corpus, letters only: natural-language queries as RAG clients send them). top_k ${TOP_K}, no filter; each query runs once on each path, paths interleaved, after ${warmUpCount} other warm-up queries of its set; timing stops after ${fmt(budgetMs / 60_000, 0)} min per set and scale (the queries column says how many ran). Chunks: ~100 words (80–120) of node_modules Markdown from random offsets, ${CHUNKS_PER_DOCUMENT} per document, written with the document store's createDocuments + saveIndex; tenants hold ${ORG_SHARES.map((s) => `${fmt(s * 100, 0)}%`).join(' / ')} of the chunks. HTTP = the whole Fastify app in-process (auth, rate limit, validation, search, usage count, JSON), no network. PostgreSQL: VACUUM ANALYZE after each build, as autovacuum (off on this machine's server) would do after a bulk load; shared_buffers as the server has it.`,
    '',
    ...table('SQLite', sqlite.results),
    '',
    buildNotes('SQLite', sqlite.results),
  ];

  const goals: string[] = [];
  /** p95 of the path labelled `${set name}: ${path}` at a backend's largest scale. */
  const p95Of = (largest: ScaleResult, set: QuerySet, path: string) => {
    const found = largest.latencies.find((l) => l.label.startsWith(`${set.name}: ${path}`));
    return found ? percentile(found.times, 95) : Number.NaN;
  };
  const verdict = (ms: number, goalMs: number) =>
    `${ms <= goalMs ? 'met' : 'NOT met'}${quick ? ' (quick run: not the 1M goal scale)' : ''}`;
  /** The goal lines of one set at a backend's largest scale, big org: unfiltered, then filtered. */
  const goal = (
    label: string,
    results: ScaleResult[],
    set: QuerySet,
    goalMs: number,
    filterGoalMs?: number,
  ) => {
    const largest = results[results.length - 1];
    if (!largest) return;
    const chunks = largest.chunks.toLocaleString('en-US');
    const http = p95Of(largest, set, 'HTTP');
    const store = p95Of(largest, set, 'store.search(), big org');
    goals.push(
      `- Goal: ${label}, ${set.name}, p95 ≤ ${goalMs} ms at ${chunks} chunks (big org): **HTTP ${fmt(http, 1)} ms, store ${fmt(store, 1)} ms**, ${verdict(http, goalMs)}.`,
    );
    if (filterGoalMs === undefined) return;
    for (const { label: share } of RANGE_FILTERS) {
      const filtered = p95Of(
        largest,
        set,
        `store.search(), big org, metadata range filter matching ${share}`,
      );
      goals.push(
        `- Goal: ${label}, ${set.name}, range filter matching ${share} of the big org, p95 ≤ ${filterGoalMs} ms at ${chunks} chunks: **store ${fmt(filtered, 1)} ms**, ${verdict(filtered, filterGoalMs)}.`,
      );
    }
  };
  goal('embedded', sqlite.results, sets[0]!, GOAL_P95_MS, GOAL_FILTER_P95_MS);
  goal('embedded', sqlite.results, sets[1]!, GOAL_LONG_P95_MS);

  const pg = await postgresBackend();
  if (pg === null) {
    lines.push('- PostgreSQL: skipped (DATABASE_URL not set or adapter missing).');
  } else {
    try {
      const pgRun = await runBackend(pg, scales, sets, quick ? null : pgMillionBudgetMs());
      lines.push('', ...table('PostgreSQL', pgRun.results), '', buildNotes('PostgreSQL', pgRun.results));
      lines.push(...pgRun.notes.map((n) => `- ${n}`));
      goal('PostgreSQL', pgRun.results, sets[0]!, GOAL_PG_P95_MS, GOAL_PG_FILTER_P95_MS);
      goal('PostgreSQL', pgRun.results, sets[1]!, GOAL_PG_LONG_P95_MS);
    } catch (error) {
      lines.push(`- PostgreSQL: failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  lines.push(...goals);
  return { title: 'Query latency: BM25 at 100k and 1M chunks, short and long queries', lines };
};

const thisFile = fileURLToPath(import.meta.url);
if (process.argv.slice(1).some((arg) => path.resolve(arg) === thisFile)) {
  const section = await run({ quick: process.argv.includes('--quick') });
  console.log(`## ${section.title}\n\n${section.lines.join('\n')}`);
}
