// Versioned schema of the scale-out database, applied by `docindex migrate` and by every process on
// start. Several processes may start at once: a database-wide advisory lock makes one of them
// apply what is missing while the others wait, then find nothing left to do. The migrations
// themselves are in migrations/, listed in version order by migrations/index.ts.
import type { QueryResultRow } from 'pg';
import type { PgDatabase, Queryable } from './database.js';
import { MIGRATIONS } from './migrations/index.js';
import type { MigrateOptions } from './migrations/migration.js';

/** Every docindex process of every schema in this database takes the same lock (see ensureBtreeGin). */
const MIGRATION_LOCK_KEY = 'docindex:migrate';

/** The newest schema version this code knows. */
export const PG_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]?.version ?? 0;

/** Every version this code applies, in order (not necessarily consecutive). */
export const PG_SCHEMA_VERSIONS: readonly number[] = MIGRATIONS.map((m) => m.version);

/** Creates the schema if needed and applies every migration not yet recorded. */
export async function migratePostgres(
  db: PgDatabase,
  options: MigrateOptions = {},
): Promise<{ applied: number[] }> {
  const applied: number[] = [];
  const client = await db.connect();
  const tx: Queryable = {
    query: <R extends QueryResultRow>(sql: string, params?: unknown[]) => client.query<R>(sql, params),
  };
  let broken = false;
  try {
    // A session lock on a dedicated connection: it must span several transactions. One key for
    // the whole database because CREATE EXTENSION and CREATE SCHEMA race across schemas too.
    await client.query('SELECT pg_advisory_lock(hashtext($1))', [MIGRATION_LOCK_KEY]);
    try {
      // Checked first: CREATE SCHEMA IF NOT EXISTS still needs CREATE on the database, which a
      // role given a ready-made schema may not have.
      const exists = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [db.schema]);
      if (!exists.rowCount) await client.query(`CREATE SCHEMA ${db.quotedSchema}`);
      await client.query(`CREATE TABLE IF NOT EXISTS ${db.table('schema_migrations')} (
        version integer PRIMARY KEY,
        name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
      const done = new Set(
        (
          await client.query<{ version: number }>(`SELECT version FROM ${db.table('schema_migrations')}`)
        ).rows.map((r) => Number(r.version)),
      );
      for (const m of MIGRATIONS) {
        if (done.has(m.version) || (options.upTo !== undefined && m.version > options.upTo)) continue;
        await client.query('BEGIN');
        try {
          await m.apply(tx, db, options);
          await client.query(`INSERT INTO ${db.table('schema_migrations')} (version, name) VALUES ($1, $2)`, [
            m.version,
            m.name,
          ]);
          await client.query('COMMIT');
        } catch (error) {
          await client.query('ROLLBACK');
          throw error;
        }
        applied.push(m.version);
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock(hashtext($1))', [MIGRATION_LOCK_KEY]);
    }
  } catch (error) {
    broken = true;
    throw error;
  } finally {
    // A connection that failed mid-migration may still hold the lock: close it rather than reuse it.
    client.release(broken);
  }
  return { applied };
}
