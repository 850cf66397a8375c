// An experiment, not a section of `npm run bench`: PostgreSQL keyword search on a corpus already
// built in a schema (section 4's generator, bench/query.bench.ts), on the RUM path and the GIN
// path side by side, with section 4's two query sets. Building 1M chunks takes section 4 most of
// its half hour; this reuses one, so each design change is measured in minutes.
//   node dist/bench/pg-keyword.experiment.js <schema> <big org id> <small org id> [queries]
// DATABASE_URL names the database. Each query runs once per path, paths interleaved, after 30
// warm-up queries; the figures are store.search() times (no HTTP).
import { PgDatabase } from '../src/adapters/postgres/database.js';
import { PgKeywordIndex } from '../src/adapters/postgres/keyword-index.js';
import { fmt, median, percentile, seededRandom } from './lib.js';
import { makeLongQueries, makeQueries } from './query.bench.js';

const WARM_UP = 30;
const TOP_K = 10;

async function main(): Promise<void> {
  const [schema, bigOrg, smallOrg, countArg] = process.argv.slice(2);
  const url = process.env.DATABASE_URL;
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
    for (const [orgLabel, orgId] of [
      ['big (60%)', bigOrg],
      ['small (10%)', smallOrg],
    ] as const) {
      const times = new Map(paths.map((p) => [p.label, [] as number[]]));
      const hits = new Map(paths.map((p) => [p.label, [] as number[]]));
      for (const [i, text] of set.queries.entries()) {
        for (const path of i % 2 === 0 ? paths : [...paths].reverse()) {
          const started = performance.now();
          const found = await path.index.search({
            orgId,
            query: text,
            topK: TOP_K,
            filter: null,
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
