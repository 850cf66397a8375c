// Semantic and hybrid query latency at 100k and 1M chunks (the goals: hybrid fusion overhead vs
// keyword alone, p95 ≤ 50 ms embedded and ≤ 100 ms PostgreSQL at 1M, excluding the query's
// embedding call; semantic search on PostgreSQL measured).
//
// The corpus is section 4's (bench/query.bench.ts: createDocuments + saveIndex, one org with 60%
// of the chunks); each batch of documents then gets a seeded random 384-d unit vector per chunk,
// written through the VectorStageStore port's completeDocument as the vector stage writes them.
// The big org's chunks also get a second profile of clustered vectors (random centroids + noise,
// closer to how real embeddings spread), for a recall figure that means something: sign-bit
// prefilters find few true neighbours among uniformly random vectors, where every vector is
// about as far as any other.
//
// Queries go through the QueryService the HTTP route calls (modes, fusion, usage count), with an
// embedder that answers a precomputed seeded vector at once, so no provider time is in any figure.
// Exact top 10s for recall are computed here, in the bench, over every vector written to the big
// org, as the corpus grows.
import { loadavg } from 'node:os';
import { ALL_PARTITIONS } from '../src/domain/partitions.js';
import type { Embedder, EmbeddingProfile } from '../src/domain/ports.js';
import { type QueryMode, QueryService } from '../src/domain/query.js';
import { QueryEmbeddings } from '../src/domain/query-embeddings.js';
import { UsageService } from '../src/domain/usage.js';
import {
  type Benchmark,
  type BenchOptions,
  type BenchSection,
  fmt,
  median,
  percentile,
  seededRandom,
} from './lib.js';
import {
  type Backend,
  makeQueries,
  ORG_SHARES,
  pgMillionBudgetMs,
  postgresBackend,
  QueryCorpus,
  sqliteBackend,
  type Tenant,
} from './query.bench.js';

const DIMENSIONS = 384;
const TOP_K = 10;
const GOAL_SQLITE_OVERHEAD_P95_MS = 50;
const GOAL_PG_OVERHEAD_P95_MS = 100;
/** Clusters of the clustered profile, and how far a vector strays from its centroid. */
const CLUSTERS = 1_000;
const NOISE = 0.6;
/** Queries whose exact top 10 is tracked while the corpus grows (recall@10). */
const RECALL_QUERIES = 30;
const VECTOR_CONCURRENCY = 8;
const MIN_QUERIES = 20;

/** Seeded unit vectors: uniformly random, or near one of CLUSTERS centroids (fixed by `centroidSeed`). */
class VectorMaker {
  private random: () => number;
  private readonly centroids: Float32Array[] = [];
  private readonly clustered: boolean;

  constructor(seed: number, centroidSeed: number | null = null) {
    this.clustered = centroidSeed !== null;
    if (centroidSeed !== null) {
      this.random = seededRandom(centroidSeed);
      for (let c = 0; c < CLUSTERS; c++) this.centroids.push(this.gaussianUnit());
    }
    this.random = seededRandom(seed);
  }

  next(): Float32Array {
    if (!this.clustered) return this.gaussianUnit();
    const centroid = this.centroids[Math.floor(this.random() * CLUSTERS)]!;
    const noise = this.gaussianUnit();
    const v = new Float32Array(DIMENSIONS);
    for (let i = 0; i < DIMENSIONS; i++) v[i] = centroid[i]! + NOISE * noise[i]!;
    return unit(v);
  }

  private gaussianUnit(): Float32Array {
    const v = new Float32Array(DIMENSIONS);
    for (let i = 0; i < DIMENSIONS; i += 2) {
      // Box–Muller: two normal deviates from two uniform ones.
      const r = Math.sqrt(-2 * Math.log(1 - this.random()));
      const t = 2 * Math.PI * this.random();
      v[i] = r * Math.cos(t);
      if (i + 1 < DIMENSIONS) v[i + 1] = r * Math.sin(t);
    }
    return unit(v);
  }
}

function unit(v: Float32Array): Float32Array {
  let norm = 0;
  for (const x of v) norm += x * x;
  norm = Math.sqrt(norm);
  for (let i = 0; i < v.length; i++) v[i]! /= norm;
  return v;
}

/** The exact top 10 of each tracked query vector over every vector offered so far. */
class ExactTop {
  private readonly scores: Float64Array[];
  private readonly keys: string[][];

  constructor(private readonly queries: Float32Array[]) {
    this.scores = queries.map(() => new Float64Array(TOP_K).fill(Number.NEGATIVE_INFINITY));
    this.keys = queries.map(() => new Array<string>(TOP_K).fill(''));
  }

  offer(key: string, v: Float32Array): void {
    for (let q = 0; q < this.queries.length; q++) {
      const query = this.queries[q]!;
      let dot = 0;
      for (let i = 0; i < DIMENSIONS; i++) dot += query[i]! * v[i]!;
      const scores = this.scores[q]!;
      if (dot <= scores[TOP_K - 1]!) continue;
      const keys = this.keys[q]!;
      let at = TOP_K - 1;
      while (at > 0 && scores[at - 1]! < dot) {
        scores[at] = scores[at - 1]!;
        keys[at] = keys[at - 1]!;
        at--;
      }
      scores[at] = dot;
      keys[at] = key;
    }
  }

  top(q: number): Set<string> {
    return new Set(this.keys[q]!);
  }
}

/** An embedder that answers each query text's precomputed vector at once. */
function instantEmbedder(model: string, vectors: Map<string, Float32Array>): Embedder {
  return {
    provider: 'bench',
    model,
    dimensions: () => DIMENSIONS,
    embed: async (texts) =>
      texts.map((t) => {
        const v = vectors.get(t);
        if (!v) throw new Error(`no precomputed vector for ${JSON.stringify(t)}`);
        return v;
      }),
    close: async () => {},
  };
}

interface QuerySide {
  embedder: Embedder;
  vectors: Map<string, Float32Array>;
  exact: ExactTop;
  maker: VectorMaker;
}

/** `texts` first the timed queries (the first RECALL_QUERIES tracked for recall), then the rest. */
function querySide(model: string, texts: string[], maker: VectorMaker, queryMaker: VectorMaker): QuerySide {
  const vectors = new Map<string, Float32Array>();
  for (const t of texts) if (!vectors.has(t)) vectors.set(t, queryMaker.next());
  const tracked = texts.slice(0, RECALL_QUERIES).map((t) => vectors.get(t)!);
  return { embedder: instantEmbedder(model, vectors), vectors, exact: new ExactTop(tracked), maker };
}

interface Path {
  label: string;
  times: number[];
  hits: number[];
}

interface ScaleResult {
  chunks: number;
  buildMs: number;
  vectorMs: number;
  paths: Path[];
  /** Per query: hybrid − keyword, ms. */
  overhead: number[];
  recallRandom: number;
  recallClustered: number;
  /** `uptime`'s load averages when the scale's timing ended: the machine is shared. */
  load: string;
}

async function runBackend(
  backend: Backend,
  scales: number[],
  texts: { timed: string[]; warmUp: string[] },
  budgetMs: number,
  buildBudgetMs: number | null,
): Promise<{ results: ScaleResult[]; notes: string[] }> {
  const all = [...texts.timed, ...texts.warmUp];
  const random = querySide('random-384', all, new VectorMaker(21), new VectorMaker(22));
  // Clustered queries: near the corpus's centroids, with noise of their own.
  const clustered = querySide('clustered-384', all, new VectorMaker(23, 24), new VectorMaker(25, 24));

  const corpus = await QueryCorpus.open(backend, seededRandom(7));
  // One index in both setups: the vectors written as the stage writes them, then searched.
  const stageStore = corpus.runtime.vectorStageStore;
  const vectors = corpus.runtime.vectorSearch;
  const profileOf = (model: string): EmbeddingProfile => ({
    provider: 'bench',
    model,
    dimensions: DIMENSIONS,
  });
  const randomProfile = await stageStore.profileId(profileOf('random-384'));
  const clusteredProfile = await stageStore.profileId(profileOf('clustered-384'));
  const big = corpus.big;
  let vectorMs = 0;
  corpus.afterBatch = async (tenant: Tenant, ids: readonly string[], perDocument: number) => {
    const start = performance.now();
    let next = 0;
    const writer = async () => {
      while (next < ids.length) {
        const id = ids[next++]!;
        const now = new Date();
        const own = Array.from({ length: perDocument }, (_, chunkIndex) => ({
          documentId: id,
          chunkIndex,
          vector: random.maker.next(),
        }));
        if (tenant === big) {
          for (const v of own) random.exact.offer(`${id}#${v.chunkIndex}`, v.vector);
          const near = own.map((v) => ({ ...v, vector: clustered.maker.next() }));
          for (const v of near) clustered.exact.offer(`${id}#${v.chunkIndex}`, v.vector);
          if (!(await stageStore.completeDocument(id, tenant.orgId, clusteredProfile, near, now)))
            throw new Error(`completeDocument refused ${id}`);
        }
        if (!(await stageStore.completeDocument(id, tenant.orgId, randomProfile, own, now)))
          throw new Error(`completeDocument refused ${id}`);
      }
    };
    await Promise.all(Array.from({ length: VECTOR_CONCURRENCY }, writer));
    vectorMs += performance.now() - start;
  };

  const usage = new UsageService(corpus.runtime.usage, corpus.runtime.clock);
  const service = (side: QuerySide) =>
    new QueryService(corpus.runtime.keyword, usage, {
      embedder: side.embedder,
      embeddings: new QueryEmbeddings(side.embedder, 10_000),
      vectors,
      embeddingDeadlineMs: 60_000,
    });
  const onRandom = service(random);
  const onClustered = service(clustered);
  const ask = async (svc: QueryService, query: string, mode: QueryMode) => {
    const start = performance.now();
    const answer = await svc.query(big.orgId, ALL_PARTITIONS, {
      query,
      topK: TOP_K,
      filter: undefined,
      documentIds: null,
      mode,
    });
    return { ms: performance.now() - start, answer };
  };

  const results: ScaleResult[] = [];
  const notes: string[] = [];
  try {
    for (const scale of scales) {
      if (buildBudgetMs !== null && results.length > 0) {
        const last = results[results.length - 1]!;
        const projected = ((last.buildMs + last.vectorMs) / last.chunks) * (scale - last.chunks);
        if (projected > buildBudgetMs) {
          notes.push(
            `${backend.label} at ${scale.toLocaleString('en-US')} chunks: skipped — building ${last.chunks.toLocaleString('en-US')} with vectors took ${fmt((last.buildMs + last.vectorMs) / 1000)} s, so the rest would take ~${fmt(projected / 60_000)} min (budget ${fmt(buildBudgetMs / 60_000, 0)} min).`,
          );
          break;
        }
      }
      await corpus.grow(scale);
      await settle(backend);

      const paths: Array<{ label: string; run: (q: string) => Promise<{ ms: number; hits: number }> }> = [
        ['keyword', onRandom],
        ['semantic', onRandom],
        ['hybrid', onRandom],
      ]
        .map(([mode, svc]) => ({
          label: `${mode as string} (random vectors)`,
          run: async (q: string) => {
            const { ms, answer } = await ask(svc as QueryService, q, mode as QueryMode);
            return { ms, hits: answer.hits.length };
          },
        }))
        .concat([
          {
            label: 'semantic (clustered vectors)',
            run: async (q: string) => {
              const { ms, answer } = await ask(onClustered, q, 'semantic');
              return { ms, hits: answer.hits.length };
            },
          },
        ]);
      for (const q of texts.warmUp) for (const p of paths) await p.run(q);
      const timed: Path[] = paths.map((p) => ({ label: p.label, times: [], hits: [] }));
      const deadline = performance.now() + budgetMs;
      for (const [i, q] of texts.timed.entries()) {
        if (i >= MIN_QUERIES && performance.now() > deadline) break;
        const forward = paths.map((_, k) => k);
        for (const k of i % 2 === 0 ? forward : forward.reverse()) {
          const { ms, hits } = await paths[k]!.run(q);
          timed[k]!.times.push(ms);
          timed[k]!.hits.push(hits);
        }
      }
      const overhead = timed[2]!.times.map((ms, i) => ms - timed[0]!.times[i]!);

      const recall = async (svc: QueryService, side: QuerySide) => {
        let found = 0;
        for (let q = 0; q < RECALL_QUERIES; q++) {
          const truth = side.exact.top(q);
          const { answer } = await ask(svc, texts.timed[q]!, 'semantic');
          for (const h of answer.hits) if (truth.has(`${h.documentId}#${h.chunkIndex}`)) found++;
        }
        return found / (RECALL_QUERIES * TOP_K);
      };
      results.push({
        chunks: corpus.totalChunks,
        buildMs: corpus.buildMs - vectorMs,
        vectorMs,
        paths: timed,
        overhead,
        recallRandom: await recall(onRandom, random),
        recallClustered: await recall(onClustered, clustered),
        load: loadavg()
          .map((l) => fmt(l, 1))
          .join(' / '),
      });
    }
  } finally {
    await corpus.close();
    await backend.cleanup();
  }
  return { results, notes };
}

/**
 * PostgreSQL: VACUUM ANALYZE after the bulk load, as autovacuum would before long, so the planner
 * has statistics and index-only scans find the visibility map set.
 */
async function settle(backend: Backend): Promise<void> {
  const schema = backend.env.DATABASE_SCHEMA;
  if (!schema) return;
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: backend.env.DATABASE_URL });
  await client.connect();
  try {
    for (const table of ['documents', 'chunks', 'chunk_vectors']) {
      await client.query(`VACUUM ANALYZE "${schema}".${table}`);
    }
  } finally {
    await client.end();
  }
}

function table(label: string, results: ScaleResult[]): string[] {
  const lines: string[] = [];
  for (const r of results) {
    const rows: Array<{ label: string; times: number[]; hits: number[] | null }> = [
      ...r.paths,
      { label: '**hybrid − keyword** (paired, per query)', times: r.overhead, hits: null },
    ];
    for (const p of rows) {
      lines.push(
        `| ${label} | ${r.chunks.toLocaleString('en-US')} | ${p.label} | ${p.times.length} | ${fmt(percentile(p.times, 50), 2)} | ${fmt(percentile(p.times, 95), 2)} | ${fmt(Math.max(...p.times), 2)} | ${p.hits === null ? '' : median(p.hits)} |`,
      );
    }
  }
  return lines;
}

async function measure(which: 'sqlite' | 'postgres', options?: BenchOptions): Promise<BenchSection> {
  const quick = options?.quick ?? false;
  const scales = quick ? [10_000, 50_000] : [100_000, 1_000_000];
  const count = quick ? 40 : 200;
  const warmUpCount = quick ? 5 : 20;
  const budgetMs = quick ? 30_000 : 150_000;
  const queries = makeQueries(count + warmUpCount, seededRandom(31));
  const texts = { timed: queries.slice(warmUpCount), warmUp: queries.slice(0, warmUpCount) };

  const lines = [
    `Big org (${fmt(ORG_SHARES[0]! * 100, 0)}% of the chunks), top_k ${TOP_K}, no filter, through QueryService.query (the HTTP route's call: mode, fusion, usage count; no HTTP). Up to ${count} queries of 1–4 words, each run once per path with the paths interleaved (order alternating), after ${warmUpCount} warm-up queries; timing stops after ${fmt(budgetMs / 60_000, 1)} min per scale. Every chunk has a seeded random unit 384-d vector (profile "random"), written with VectorStageStore.completeDocument; the big org's chunks also have a clustered one (profile "clustered": ${CLUSTERS} random centroids + gaussian noise of norm ≈ ${NOISE}). The query's vector comes from an embedder that returns a precomputed seeded vector at once: no provider call in any figure. hybrid − keyword is each query's hybrid time minus its keyword time, then the percentiles of that difference. Recall@10: share of the exact top 10 (computed in the bench over every vector of the big org) that semantic mode returns, over ${RECALL_QUERIES} queries.`,
    '',
    '| backend | chunks | path | queries | p50 ms | p95 ms | max ms | median hits |',
    '|---|---:|---|---:|---:|---:|---:|---:|',
  ];
  const notes: string[] = [];
  const goals: string[] = [];
  const report = (label: string, results: ScaleResult[], goalMs: number) => {
    lines.push(...table(label, results));
    for (const r of results) {
      notes.push(
        `- ${label}, ${r.chunks.toLocaleString('en-US')} chunks: recall@10 **${fmt(r.recallRandom * 100, 0)}%** on random vectors, **${fmt(r.recallClustered * 100, 0)}%** on clustered vectors; build ${fmt(r.buildMs / 1000)} s chunks + ${fmt(r.vectorMs / 1000)} s vectors (cumulative); load average ${r.load}.`,
      );
    }
    const largest = results[results.length - 1];
    if (largest) {
      const p95 = percentile(largest.overhead, 95);
      goals.push(
        `- Goal: ${label}, hybrid − keyword p95 ≤ ${goalMs} ms at ${largest.chunks.toLocaleString('en-US')} chunks: **${fmt(p95, 1)} ms**, ${p95 <= goalMs ? 'met' : 'NOT met'}${quick ? ' (quick run: not the 1M goal scale)' : ''}.`,
      );
    }
  };
  if (which === 'sqlite') {
    const sqlite = await runBackend(sqliteBackend(), scales, texts, budgetMs, null);
    report('SQLite', sqlite.results, GOAL_SQLITE_OVERHEAD_P95_MS);
    notes.push(...sqlite.notes.map((n) => `- ${n}`));
  } else {
    const pg = await postgresBackend();
    if (pg === null) {
      notes.push('- PostgreSQL: skipped (DATABASE_URL not set or adapter missing).');
    } else {
      const pgRun = await runBackend(pg, scales, texts, budgetMs, quick ? null : pgMillionBudgetMs(25));
      report('PostgreSQL', pgRun.results, GOAL_PG_OVERHEAD_P95_MS);
      notes.push(...pgRun.notes.map((n) => `- ${n}`));
    }
  }
  return {
    title:
      which === 'sqlite'
        ? 'Semantic and hybrid query latency at 100k and 1M chunks (embedded)'
        : 'Semantic and hybrid query latency at 100k and 1M chunks (PostgreSQL)',
    lines: [...lines, '', ...notes, ...goals],
  };
}

/** The embedded backend; bench/hybrid-pg.bench.ts runs PostgreSQL as its own section. */
export const run: Benchmark = (options?: BenchOptions) => measure('sqlite', options);
export const runPostgres: Benchmark = (options?: BenchOptions) => measure('postgres', options);
