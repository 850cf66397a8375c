// Ranking quality on BEIR SciFact (../shared/benchmarks/beir/scifact): every abstract ingested
// through the public API of a real server (title + "\n\n" + text, one document each, default
// chunking), the 300 test queries run with top_k 100, the chunk results turned into a document
// ranking (first hit counts), scored with nDCG@10 and Recall@100. Published figures of other
// systems on the same set are printed beside docindex's. The previous analysis (no stemming,
// SEARCH_LANGUAGE=none) and BM25 without the proximity bonus (SEARCH_PROXIMITY=false) are
// measured in the same run as references; PostgreSQL runs too when DATABASE_URL is set, with and
// without the bonus.
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { type BeirScores, type BeirSet, beirFolder, firstHits, loadBeir, score } from './beir.js';
import { type Benchmark, type BenchSection, dropPostgresSchema, fmt, median, percentile } from './lib.js';
import { callApi, type DocindexServer, type IngestAck, startDocindex, waitUntilDone } from './server.js';

const BATCH = 50;
const INGESTS_IN_FLIGHT = 4;
const TOP_K = 100;

/** Published SciFact figures (../shared/benchmarks/beir/README.md lists where each is from). */
const REFERENCES: readonly [string, number, number | null][] = [
  ['BM25 flat (Anserini, Lucene, Porter stemmer)', 0.679, 0.925],
  ['BM25 multifield (Anserini)', 0.665, 0.908],
  ['SPLADE++ ED', 0.704, null],
  ['all-MiniLM-L6-v2', 0.645, 0.925],
  ['e5-small-v2', 0.689, 0.928],
  ['bge-small-en-v1.5', 0.713, 0.945],
  ['BGE-base-en-v1.5', 0.741, null],
  ['text-embedding-3-small', 0.734, null],
];
const GOAL_NDCG = 0.69;
const GOAL_RECALL = 0.925;

interface Variant {
  label: string;
  env: Record<string, string>;
  cleanup?: () => Promise<void>;
}

interface Measured extends BeirScores {
  label: string;
  ingestSeconds: number;
  queryP50Ms: number;
  queryP95Ms: number;
}

export async function ingestSet(server: DocindexServer, set: BeirSet): Promise<Map<string, string>> {
  const beirIdOf = new Map<string, string>();
  let next = 0;
  const worker = async () => {
    while (next < set.documents.length) {
      const batch = set.documents.slice(next, next + BATCH);
      next += BATCH;
      const ack = await callApi<IngestAck>(
        server,
        'POST',
        '/v1/ingest',
        { documents: batch.map((d) => ({ text: `${d.title}\n\n${d.text}` })) },
        202,
      );
      for (const [i, id] of ack.document_ids.entries()) beirIdOf.set(id, batch[i]!.id);
    }
  };
  await Promise.all(Array.from({ length: INGESTS_IN_FLIGHT }, worker));
  const { done } = await waitUntilDone(server, () => [...beirIdOf.keys()], {
    expected: set.documents.length,
    timeoutMs: 30 * 60_000,
    intervalMs: 200,
  });
  const failed = [...done.values()].filter((d) => d.status !== 'ready');
  if (failed.length > 0)
    throw new Error(`${failed.length} documents failed, e.g. ${JSON.stringify(failed[0])}`);
  return beirIdOf;
}

export async function runQueries(
  server: DocindexServer,
  set: BeirSet,
  beirIdOf: ReadonlyMap<string, string>,
): Promise<{ rankings: Map<string, string[]>; times: number[] }> {
  const rankings = new Map<string, string[]>();
  const times: number[] = [];
  for (const q of set.queries) {
    const started = performance.now();
    const { results } = await callApi<{ results: { document_id: string }[] }>(server, 'POST', '/v1/query', {
      query: q.text,
      top_k: TOP_K,
    });
    times.push(performance.now() - started);
    rankings.set(q.id, firstHits(results.map((r) => beirIdOf.get(r.document_id) ?? r.document_id)));
  }
  return { rankings, times };
}

async function measure(set: BeirSet, variant: Variant): Promise<Measured> {
  const server = await startDocindex({ env: variant.env, timeoutMs: 120_000 });
  try {
    const started = performance.now();
    const beirIdOf = await ingestSet(server, set);
    const ingestSeconds = (performance.now() - started) / 1000;
    // Once to warm caches, then the measured run (the rankings are the same both times).
    await runQueries(server, set, beirIdOf);
    const { rankings, times } = await runQueries(server, set, beirIdOf);
    return {
      label: variant.label,
      ...score(set, rankings),
      ingestSeconds,
      queryP50Ms: median(times),
      queryP95Ms: percentile(times, 95),
    };
  } finally {
    await server.stop();
    await variant.cleanup?.();
  }
}

function postgresVariant(proximity: boolean): Variant | null {
  const url = process.env.DATABASE_URL;
  if (!url) return null;
  const schema = `bench_beir_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  return {
    label: proximity
      ? 'docindex keyword, PostgreSQL (`english`)'
      : 'docindex keyword, PostgreSQL (`english`), `SEARCH_PROXIMITY=false`',
    env: { DATABASE_URL: url, DATABASE_SCHEMA: schema, SEARCH_PROXIMITY: String(proximity) },
    cleanup: () => dropPostgresSchema(url, schema),
  };
}

export const run: Benchmark = async (options) => {
  const title = 'Ranking quality: BEIR SciFact, nDCG@10 and Recall@100';
  const folder = beirFolder('scifact');
  if (folder === null) {
    return { title, lines: ['- skipped: ../shared/benchmarks/beir/scifact is not beside the project.'] };
  }
  const full = loadBeir('scifact', folder);
  // --quick: a tenth of the queries over their judged documents and as many others.
  const set: BeirSet = options?.quick
    ? (() => {
        const queries = full.queries.slice(0, 30);
        const keep = new Set(queries.flatMap((q) => [...full.relevant.get(q.id)!]));
        const documents = full.documents.filter((d, i) => keep.has(d.id) || i < 500);
        return { ...full, queries, documents };
      })()
    : full;
  const variants: Variant[] = [
    {
      label: 'docindex keyword, embedded, `SEARCH_LANGUAGE=none` (no stemming: before)',
      env: { SEARCH_LANGUAGE: 'none' },
    },
    { label: 'docindex keyword, embedded (`english`, the default)', env: {} },
    {
      label: 'docindex keyword, embedded (`english`), `SEARCH_PROXIMITY=false` (BM25 alone: before)',
      env: { SEARCH_PROXIMITY: 'false' },
    },
  ];
  // PostgreSQL with the default only: its ingest alone takes minutes, and the bonus is computed
  // above the index, the same on both backends (the embedded pair measures it).
  const pg = postgresVariant(true);
  if (pg) variants.push(pg);
  const measured: Measured[] = [];
  const loadBefore = loadavg();
  for (const variant of variants) measured.push(await measure(set, variant));
  const load = (l: number[]) => l.map((x) => fmt(x, 2)).join(' / ');
  const lines = report(set, measured, pg === null);
  lines.push(
    `- Machine load (1 / 5 / 15-minute average, 2 CPUs shared with other work): ${load(loadBefore)} before, ${load(loadavg())} after; latencies and ingest times move with it, the scores do not.`,
  );
  return { title, lines };
};

function report(set: BeirSet, measured: Measured[], noPostgres: boolean): string[] {
  const embedded = measured[1]!;
  const lines: BenchSection['lines'] = [
    `SciFact test set: ${set.documents.length} documents, ${set.queries.length} queries with judgements. Each document is ingested as title + "\\n\\n" + text through \`POST /v1/ingest\` (default chunking), each query runs through \`POST /v1/query\` with top_k ${TOP_K}; chunk results become a document ranking by first hit. Docindex figures are measured here; the others are published (../shared/benchmarks/beir/README.md).`,
    '',
    '| system | nDCG@10 | Recall@100 |',
    '|---|---|---|',
    ...measured.map((m) => `| **${m.label}** | **${fmt(m.ndcg10, 4)}** | **${fmt(m.recall100, 4)}** |`),
    ...REFERENCES.map(
      ([name, ndcg, recall]) => `| ${name} | ${fmt(ndcg, 3)} | ${recall === null ? '–' : fmt(recall, 3)} |`,
    ),
    '',
    '| docindex run | ingest (s) | docs/s | query p50 (ms) | query p95 (ms) |',
    '|---|---|---|---|---|',
    ...measured.map(
      (m) =>
        `| ${m.label} | ${fmt(m.ingestSeconds, 1)} | ${fmt(set.documents.length / m.ingestSeconds, 0)} | ${fmt(m.queryP50Ms, 1)} | ${fmt(m.queryP95Ms, 1)} |`,
    ),
    '',
    `- Proximity bonus (BM25TP, \`domain/proximity.ts\`), embedded, same run: nDCG@10 ${fmt(measured[2]!.ndcg10, 4)} → ${fmt(embedded.ndcg10, 4)}, Recall@100 ${fmt(measured[2]!.recall100, 4)} → ${fmt(embedded.recall100, 4)}.`,
    `- Goal (issue 15), keyword mode embedded: nDCG@10 ≥ ${GOAL_NDCG} — **${embedded.ndcg10 >= GOAL_NDCG ? 'met' : 'not met'}** (${fmt(embedded.ndcg10, 4)}); Recall@100 ≥ ${GOAL_RECALL} — **${embedded.recall100 >= GOAL_RECALL ? 'met' : 'not met'}** (${fmt(embedded.recall100, 4)}).`,
  ];
  if (noPostgres) lines.push('- PostgreSQL: skipped (DATABASE_URL not set).');
  return lines;
}
