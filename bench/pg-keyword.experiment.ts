// An experiment, not a section of `npm run bench`: PostgreSQL keyword search on a corpus already
// built in a schema (section 4's generator, bench/query.bench.ts), on the RUM path and the GIN
// path side by side, with section 4's two query sets, unfiltered and with section 4's range
// filters. Building 1M chunks takes section 4 most of its half hour; this builds one once and
// keeps it, so each design change is measured in minutes.
//   node dist/bench/pg-keyword.experiment.js build <schema> [chunks]   (prints the org ids)
//   node dist/bench/pg-keyword.experiment.js <schema> <big org id> <small org id> [queries]
// DATABASE_URL names the database. Each query runs once per path, paths interleaved, after 30
// warm-up queries; the figures are store.search() times (no HTTP). PATHS=RUM or PATHS=GIN
// measures one path alone; FILTERS=0 leaves the filtered rows out.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PgDatabase } from '../src/adapters/postgres/database.js';
import { PgKeywordIndex } from '../src/adapters/postgres/keyword/index.js';
import { type Filter, parseFilter } from '../src/domain/filter.js';
import { fmt, median, percentile, seededRandom } from './lib.js';
import { makeLongQueries, makeQueries, QueryCorpus } from './query.bench.js';

/** Section 4's range filters: `shelf` runs "000" to "999" over the documents in turn. */
const FILTERS: { label: string; filter: Filter | null }[] = [
  { label: 'no filter', filter: null },
  { label: 'filter 1%', filter: parseFilter({ shelf: { $lt: '010' } }, '/filter') },
  { label: 'filter 50%', filter: parseFilter({ shelf: { $lt: '500' } }, '/filter') },
];

/** Builds section 4's corpus of `chunks` chunks into `schema` and leaves it there. */
async function build(url: string, schema: string, chunks: number): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'docindex-pg-experiment-'));
  const corpus = await QueryCorpus.open(
    {
      label: 'PostgreSQL',
      env: { DATABASE_URL: url, DATABASE_SCHEMA: schema, DATA_DIR: dir },
      size: () => null,
      cleanup: async () => {},
    },
    seededRandom(7),
  );
  try {
    await corpus.grow(chunks);
    console.log(
      `built ${corpus.totalChunks} chunks in ${fmt(corpus.buildMs / 1000, 1)} s; big org ${corpus.big.orgId}, small org ${corpus.small.orgId}`,
    );
  } finally {
    await corpus.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const WARM_UP = 30;
const TOP_K = 10;

async function main(): Promise<void> {
  const url = process.env.DATABASE_URL;
  if (process.argv[2] === 'build' && url && process.argv[3]) {
    return build(url, process.argv[3], Number(process.argv[4] ?? 1_000_000));
  }
  const [schema, bigOrg, smallOrg, countArg] = process.argv.slice(2);
  if (!schema || !bigOrg || !smallOrg || !url) {
    throw new Error(
      'usage: DATABASE_URL=… node pg-keyword.experiment.js <schema> <big org> <small org> [count]',
    );
  }
  const count = Number(countArg ?? 300);
  const db = new PgDatabase({ connectionString: url, schema, maxConnections: 4 });
  // PATHS=RUM or PATHS=GIN measures one path alone.
  const only = process.env.PATHS;
  const paths = [
    { label: 'RUM', index: new PgKeywordIndex(db) },
    { label: 'GIN', index: new PgKeywordIndex(db, { rum: false }) },
  ].filter((p) => !only || p.label === only);
  const sets = [
    { label: '1–4 words', queries: makeQueries(count + WARM_UP, seededRandom(11)) },
    { label: '12–30 words', queries: makeLongQueries(count + WARM_UP, seededRandom(13)) },
  ];
  console.log('| path | org | queries | n | p50 ms | p95 ms | p99 ms | max ms | median hits |');
  console.log('|---|---|---|---:|---:|---:|---:|---:|---:|');
  for (const set of sets) {
    const cases = [
      { orgLabel: 'small (10%)', orgId: smallOrg, filter: null as Filter | null },
      ...FILTERS.filter((f) => f.filter === null || process.env.FILTERS !== '0').map((f) => ({
        orgLabel: `big (60%), ${f.label}`,
        orgId: bigOrg,
        filter: f.filter,
      })),
    ];
    for (const { orgLabel, orgId, filter } of cases) {
      const times = new Map(paths.map((p) => [p.label, [] as number[]]));
      const hits = new Map(paths.map((p) => [p.label, [] as number[]]));
      for (const [i, text] of set.queries.entries()) {
        for (const path of i % 2 === 0 ? paths : [...paths].reverse()) {
          const started = performance.now();
          const found = await path.index.search({
            orgId,
            query: text,
            topK: TOP_K,
            filter,
            documentIds: null,
          });
          const ms = performance.now() - started;
          if (i < WARM_UP) continue;
          times.get(path.label)?.push(ms);
          hits.get(path.label)?.push(found.length);
        }
      }
      for (const path of paths) {
        const t = times.get(path.label) ?? [];
        console.log(
          `| ${path.label} | ${orgLabel} | ${set.label} | ${t.length} | ${fmt(median(t), 2)} | ${fmt(percentile(t, 95), 2)} | ${fmt(percentile(t, 99), 2)} | ${fmt(Math.max(...t), 2)} | ${median(hits.get(path.label) ?? [])} |`,
        );
      }
    }
  }
  await db.close();
}

await main();
