// Prepared-statement cache shared by the SQLite stores: better-sqlite3 statements are reusable,
// and preparing on every call would re-parse the SQL on the hot query and ingest paths.
import type BetterSqlite3 from 'better-sqlite3';
import type { Database } from './database.js';

export class StatementCache {
  private readonly cache = new Map<string, BetterSqlite3.Statement<unknown[], unknown>>();

  constructor(private readonly db: Database) {}

  get<P extends unknown[] = unknown[], R = unknown>(sql: string): BetterSqlite3.Statement<P, R> {
    let stmt = this.cache.get(sql);
    if (!stmt) {
      stmt = this.db.prepare<unknown[], unknown>(sql);
      this.cache.set(sql, stmt);
    }
    return stmt as unknown as BetterSqlite3.Statement<P, R>;
  }
}
