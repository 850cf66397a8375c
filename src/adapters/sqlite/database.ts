// Opens the embedded-mode SQLite database and keeps its schema current. One file holds the
// records, the full-text index and the job queue, so every process sharing it (server, worker)
// opens it through here and gets the same pragmas and the same migrated schema. The migrations
// themselves are in migrations/, listed in version order by migrations/index.ts.
import BetterSqlite3 from 'better-sqlite3';
import { MIGRATIONS } from './migrations/index.js';

export type Database = BetterSqlite3.Database;

/** Opens (creating if needed) a database file, or ':memory:', and migrates it. */
export function openSqlite(file: string): Database {
  const db = new BetterSqlite3(file, { timeout: 5000 });
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('busy_timeout = 5000');
    db.pragma('foreign_keys = ON');
    migrateSqlite(db);
  } catch (err) {
    db.close();
    throw err;
  }
  return db;
}

/** Applies every migration not yet recorded. Safe to run concurrently from several processes. */
export function migrateSqlite(db: Database): { applied: number[] } {
  const applied: number[] = [];
  // IMMEDIATE takes the write lock before reading the version list, so two processes starting on
  // one file cannot both decide to apply the same migration.
  db.transaction(() => {
    db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER PRIMARY KEY,
      name TEXT NOT NULL,
      applied_at INTEGER NOT NULL
    ) STRICT`);
    const done = new Set(
      db
        .prepare<[], number>('SELECT version FROM schema_migrations')
        .pluck()
        .all()
        .map((v) => Number(v)),
    );
    const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
    for (const m of MIGRATIONS) {
      if (done.has(m.version)) continue;
      db.exec(m.sql);
      record.run(m.version, m.name, Date.now());
      applied.push(m.version);
    }
  }).immediate();
  return { applied };
}

/** The newest schema version this code knows. */
export const SQLITE_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]?.version ?? 0;

/** Every version this code applies, in order (not necessarily consecutive). */
export const SQLITE_SCHEMA_VERSIONS: readonly number[] = MIGRATIONS.map((m) => m.version);
