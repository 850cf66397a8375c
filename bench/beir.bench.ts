// Ranking quality on every BEIR-layout collection in ../shared/benchmarks/beir/ (SciFact, XQuAD in
// several languages, and any other set placed there): each collection ingested through the public
// API of a real server (title + "\n\n" + text, one document each, default chunking), its judged
// queries run with top_k 100, the chunk results turned into a document ranking (first hit counts),
// scored with nDCG@10 and Recall@100. One default configuration for every set; the ablation runs
// switch one ranking feature at a time and report its effect on each set. Published Lucene BM25
// figures are printed beside docindex's where they exist; PostgreSQL runs the default too when
// DATABASE_URL is set.
import { randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { analyzer } from '../src/domain/search-words.js';
import { chunkForIndex } from '../src/pipeline/chunk/for-index.js';
import { type BeirScores, type BeirSet, beirFolder, firstHits, loadBeir, score } from './beir.js';
import { type Benchmark, dropPostgresSchema, fmt, median, percentile, projectRoot } from './lib.js';
import { callApi, type DocindexServer, type IngestAck, startDocindex, waitUntilDone } from './server.js';

const BATCH = 50;
const INGESTS_IN_FLIGHT = 4;
const TOP_K = 100;

/**
 * Published Lucene BM25 flat figures (nDCG@10, Recall@100) by BEIR collection folder name, from
 * Pyserini's BEIR regressions as ../shared/benchmarks/beir/README.md lists them.
 */
const LUCENE_FLAT: Readonly<Record<string, [number, number]>> = {
  scifact: [0.6789, 0.9253],
  nfcorpus: [0.3218, 0.2457],
  fiqa: [0.2361, 0.5395],
  scidocs: [0.149, 0.3477],
  'trec-covid': [0.5947, 0.1091],
  quora: [0.7886, 0.9733],
  'webis-touche2020': [0.4422, 0.5822],
};

/** A configuration: the default (no variables) or one feature switched. */
interface Variant {
  label: string;
  /** What the ablation row says is switched. */
  feature: string;
  env: Record<string, string>;
}

const DEFAULT: Variant = { label: 'default', feature: '—', env: {} };
const ABLATIONS: readonly Variant[] = [
  {
    label: 'no stemming (`SEARCH_LANGUAGE=none`)',
    feature: 'stemming in each document’s language',
    env: { SEARCH_LANGUAGE: 'none' },
  },
  {
    label: 'every document English (`SEARCH_LANGUAGE=en`)',
    feature: 'language detection',
    env: { SEARCH_LANGUAGE: 'en' },
  },
  {
    label: 'proximity bonus on (`SEARCH_PROXIMITY=true`)',
    feature: 'term-proximity bonus (off by default)',
    env: { SEARCH_PROXIMITY: 'true' },
  },
];

interface Measured extends BeirScores {
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
        { documents: batch.map((d) => ({ text: d.title === '' ? d.text : `${d.title}\n\n${d.text}` })) },
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

async function measure(
  set: BeirSet,
  env: Record<string, string>,
  cleanup?: () => Promise<void>,
): Promise<Measured> {
  const server = await startDocindex({ env, timeoutMs: 120_000 });
  try {
    const started = performance.now();
    const beirIdOf = await ingestSet(server, set);
    const ingestSeconds = (performance.now() - started) / 1000;
    // Once to warm caches, then the measured run (the rankings are the same both times).
    await runQueries(server, set, beirIdOf);
    const { rankings, times } = await runQueries(server, set, beirIdOf);
    return {
      ...score(set, rankings),
      ingestSeconds,
      queryP50Ms: median(times),
      queryP95Ms: percentile(times, 95),
    };
  } finally {
    await server.stop();
    await cleanup?.();
  }
}

async function measurePostgres(set: BeirSet): Promise<Measured | null> {
  const url = process.env.DATABASE_URL;
  if (!url) return null;
  const schema = `bench_beir_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  return measure(set, { DATABASE_URL: url, DATABASE_SCHEMA: schema }, () => dropPostgresSchema(url, schema));
}

/** Every collection folder beside the project, SciFact first, then by name. */
function collections(): string[] {
  const root = path.join(projectRoot(), '..', 'shared', 'benchmarks', 'beir');
  let names: string[];
  try {
    names = readdirSync(root, { withFileTypes: true })
      .filter((e) => e.isDirectory() && beirFolder(e.name) !== null)
      .map((e) => e.name);
  } catch {
    return [];
  }
  return names.sort((a, b) => (a === 'scifact' ? -1 : b === 'scifact' ? 1 : a.localeCompare(b)));
}

/** --quick: a tenth of the queries over their judged documents and a few hundred others. */
function reduced(full: BeirSet): BeirSet {
  const queries = full.queries.slice(0, Math.max(20, Math.ceil(full.queries.length / 10)));
  const keep = new Set(queries.flatMap((q) => [...full.relevant.get(q.id)!]));
  const documents = full.documents.filter((d, i) => keep.has(d.id) || i < 300);
  return { ...full, queries, documents };
}

/**
 * How fast a chunking thread turns English text into chunks and words with each document's
 * language told (the default) against one fixed English analysis: alternating rounds, medians.
 */
function analysisThroughput(texts: readonly string[]): { auto: number; english: number; rounds: number } {
  const options = { chunkSize: 512, chunkOverlap: 64 };
  const english = analyzer('en');
  const timed = (run: (text: string) => unknown) => {
    const started = performance.now();
    for (const text of texts) run(text);
    return performance.now() - started;
  };
  const rounds = 7;
  const auto: number[] = [];
  const fixed: number[] = [];
  timed((t) => chunkForIndex(t, options, { given: null, configured: 'auto' }));
  for (let i = 0; i < rounds; i++) {
    auto.push(timed((t) => chunkForIndex(t, options, { given: null, configured: 'auto' })));
    fixed.push(timed((t) => chunkForIndex(t, options, english)));
  }
  return { auto: median(auto), english: median(fixed), rounds };
}

export const run: Benchmark = async (options) => {
  const title = 'Ranking quality: BEIR collections in several languages, nDCG@10 and Recall@100';
  const names = collections();
  if (names.length === 0) {
    return { title, lines: ['- skipped: ../shared/benchmarks/beir is not beside the project.'] };
  }
  const sets = await Promise.all(
    names.map(async (name) => {
      const full = await loadBeir(name, beirFolder(name)!);
      return options?.quick ? reduced(full) : full;
    }),
  );
  const loadBefore = loadavg();
  const byVariant = new Map<Variant, Map<string, Measured>>();
  for (const variant of [DEFAULT, ...ABLATIONS]) {
    const results = new Map<string, Measured>();
    for (const set of sets) results.set(set.name, await measure(set, variant.env));
    byVariant.set(variant, results);
  }
  const postgres = new Map<string, Measured>();
  for (const set of sets) {
    const measured = await measurePostgres(set);
    if (measured) postgres.set(set.name, measured);
  }
  const englishTexts = sets
    .find((s) => s.name === 'scifact')
    ?.documents.slice(0, 2000)
    .map((d) => `${d.title}\n\n${d.text}`);
  const throughput = englishTexts ? analysisThroughput(englishTexts) : null;

  const defaults = byVariant.get(DEFAULT)!;
  const lines: string[] = [
    `Collections: ${sets.map((s) => `${s.name} (${s.documents.length.toLocaleString('en-US')} documents, ${s.queries.length.toLocaleString('en-US')} queries)`).join(', ')}. Each document is ingested as title + "\\n\\n" + text through \`POST /v1/ingest\` (default chunking, no \`language\` given: told from the text), each query runs through \`POST /v1/query\` (keyword mode, top_k ${TOP_K}); chunk results become a document ranking by first hit. One default configuration for every collection.`,
    '',
    '| collection | nDCG@10 | Recall@100 | Lucene BM25 flat (published) | × English nDCG@10 | PostgreSQL nDCG@10 / Recall@100 |',
    '|---|---:|---:|---|---:|---|',
  ];
  const english = defaults.get('xquad-en');
  for (const set of sets) {
    const m = defaults.get(set.name)!;
    const lucene = LUCENE_FLAT[set.name];
    const pg = postgres.get(set.name);
    const ratio = set.name.startsWith('xquad-') && english ? fmt(m.ndcg10 / english.ndcg10, 3) : '–';
    lines.push(
      `| ${set.name} | **${fmt(m.ndcg10, 4)}** | **${fmt(m.recall100, 4)}** | ${lucene ? `${fmt(lucene[0], 4)} / ${fmt(lucene[1], 4)}` : '–'} | ${ratio} | ${pg ? `${fmt(pg.ndcg10, 4)} / ${fmt(pg.recall100, 4)}` : 'not run'} |`,
    );
  }
  lines.push(
    '',
    'Ablation: each row switches one ranking feature against the default, Δ nDCG@10 on each collection (Δ Recall@100 in brackets), same run.',
    '',
    `| switched | feature | ${sets.map((s) => s.name).join(' | ')} | mean Δ nDCG@10 |`,
    `|---|---|${sets.map(() => '---:').join('|')}|---:|`,
  );
  for (const variant of ABLATIONS) {
    const results = byVariant.get(variant)!;
    const deltas = sets.map((s) => results.get(s.name)!.ndcg10 - defaults.get(s.name)!.ndcg10);
    const cells = sets.map((s, i) => {
      const recall = results.get(s.name)!.recall100 - defaults.get(s.name)!.recall100;
      return `${signed(deltas[i]!)} (${signed(recall)})`;
    });
    lines.push(
      `| ${variant.label} | ${variant.feature} | ${cells.join(' | ')} | ${signed(deltas.reduce((a, b) => a + b, 0) / deltas.length)} |`,
    );
  }
  lines.push(
    '',
    '| collection | ingest (s), default | docs/s | query p50 (ms) | query p95 (ms) |',
    '|---|---:|---:|---:|---:|',
    ...sets.map((s) => {
      const m = defaults.get(s.name)!;
      return `| ${s.name} | ${fmt(m.ingestSeconds, 1)} | ${fmt(s.documents.length / m.ingestSeconds, 0)} | ${fmt(m.queryP50Ms, 1)} | ${fmt(m.queryP95Ms, 1)} |`;
    }),
    '',
  );
  if (throughput) {
    lines.push(
      `- Analysis throughput (chunking and words of 2,000 SciFact abstracts in one thread, ${throughput.rounds} alternating rounds, medians): language told per document ${fmt(throughput.auto, 0)} ms against one fixed English analysis ${fmt(throughput.english, 0)} ms: **${fmt(throughput.english / throughput.auto, 2)}×** English-only throughput (goal ≥ 0.9×).`,
    );
  }
  const scifact = defaults.get('scifact');
  if (scifact) {
    lines.push(
      `- Goal, SciFact keyword mode at or above Lucene BM25 flat: nDCG@10 ${fmt(scifact.ndcg10, 4)} (Lucene 0.6789, kept goal 0.690) — **${scifact.ndcg10 >= 0.6789 ? 'met' : 'not met'}** against Lucene, **${scifact.ndcg10 >= 0.69 ? 'met' : 'not met'}** against 0.690; Recall@100 ${fmt(scifact.recall100, 4)} (goal ≥ 0.9253) — **${scifact.recall100 >= 0.9253 ? 'met' : 'not met'}**.`,
    );
  }
  if (english) {
    const worst = sets
      .filter((s) => s.name.startsWith('xquad-'))
      .map((s) => ({ name: s.name, ratio: defaults.get(s.name)!.ndcg10 / english.ndcg10 }))
      .sort((a, b) => a.ratio - b.ratio)[0];
    if (worst) {
      lines.push(
        `- Goal, every XQuAD language ≥ 0.95 × English nDCG@10: lowest ${worst.name} at ${fmt(worst.ratio, 3)}× — **${worst.ratio >= 0.95 ? 'met' : 'not met'}**.`,
      );
    }
  }
  if (postgres.size === 0) lines.push('- PostgreSQL: not run (DATABASE_URL not set).');
  const load = (l: number[]) => l.map((x) => fmt(x, 2)).join(' / ');
  lines.push(
    `- Machine load (1 / 5 / 15-minute average, 2 CPUs shared with other work): ${load(loadBefore)} before, ${load(loadavg())} after; latencies, ingest and throughput move with it, the scores do not.`,
  );
  return { title, lines };
};

function signed(x: number): string {
  return `${x >= 0 ? '+' : '−'}${fmt(Math.abs(x), 4)}`;
}
