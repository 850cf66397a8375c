// What the PostgreSQL contract files share: the server (DATABASE_URL), whether it has the rum
// extension, and a migrated schema of its own per test. The contracts are split over two files
// (postgres.test.ts, postgres-search.test.ts) so that the test run's two workers share them.
import { PgDatabase } from '../../src/adapters/postgres/database.js';
import { PgDocumentStore } from '../../src/adapters/postgres/document-store.js';
import { PgKeywordIndex } from '../../src/adapters/postgres/keyword/index.js';
import { migratePostgres } from '../../src/adapters/postgres/migrations.js';
import { checkServices, dropSchema, freshSchema, REQUIRED } from '../scale-out/services.js';
import type { DocumentStoreOptions } from './document-fixtures.js';

export const services = await checkServices(['DATABASE_URL']);
export const url = services.urls.DATABASE_URL ?? '';
/** Whether the server has the rum extension (installed or installable). */
export const rum = url ? await rumOnServer(url) : false;

async function rumOnServer(connectionString: string): Promise<boolean> {
  const db = new PgDatabase({ connectionString, schema: 'public', maxConnections: 1 });
  try {
    const { rows } = await db.query(`SELECT FROM pg_available_extensions WHERE name = 'rum'`);
    return rows.length > 0;
  } finally {
    await db.close();
  }
}

/**
 * A migrated schema of its own; close() drops it. `rum: false` leaves it on the GIN index as a
 * server without the rum extension does (the extension is database-wide, so a schema cannot lack
 * it; the migration's and the index's option are what a missing extension turns off).
 */
export async function freshDatabase(
  options: { rum?: boolean } = {},
): Promise<{ db: PgDatabase; close(): Promise<void> }> {
  const schema = freshSchema();
  const db = new PgDatabase({ connectionString: url, schema, maxConnections: 6 });
  await migratePostgres(db, options);
  return {
    db,
    async close() {
      await db.close();
      await dropSchema(url, schema);
    },
  };
}

/** Fails unless the schema's keyword search is on RUM: CI must test that path, never skip it. */
export async function expectRumIndex(db: PgDatabase): Promise<void> {
  const { rows } = await db.query<{ ready: boolean; indexed: boolean }>(
    `SELECT terms_ready AS ready, to_regclass($1) IS NOT NULL AS indexed FROM ${db.table('search_analysis')}`,
    [`${db.quotedSchema}.chunks_terms_rum`],
  );
  if (!rows[0]?.ready || !rows[0].indexed) {
    throw new Error('the rum extension is not available on this server: install postgresql-15-rum');
  }
}

/**
 * A document store with its keyword index on a fresh schema: RUM (the rum extension, required in
 * CI: REQUIRE_SCALE_OUT_TESTS fails the RUM suites when the server lacks it) or GIN.
 */
export const storesOn = (withRum: boolean) => async (options: DocumentStoreOptions) => {
  const { db, close } = await freshDatabase({ rum: withRum });
  if (withRum) await expectRumIndex(db);
  const open = (opts: DocumentStoreOptions) => {
    const index = new PgKeywordIndex(db, { ...opts, rum: withRum });
    return { store: new PgDocumentStore(db, undefined, { keyword: index }), index };
  };
  const setWrittenAnalysis = async (analysis: string) => {
    await db.query(`UPDATE ${db.table('search_analysis')} SET written = $1`, [analysis]);
  };
  return { ...open(options), reopen: open, setWrittenAnalysis, close };
};

/**
 * The stores most suites use: on RUM where the server has it. Without the extension the RUM
 * suite is skipped with a console line, but under REQUIRE_SCALE_OUT_TESTS=1 (CI) it runs and fails.
 */
export const stores = storesOn(rum || REQUIRED);
