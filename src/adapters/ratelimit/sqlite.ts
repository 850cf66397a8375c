// RateLimiter whose counters live in a SQLite file, for several processes on one host sharing a
// database (e.g. `docindex serve` next to `docindex worker`). rate-limiter-flexible's SQLite store
// counts with one INSERT … ON CONFLICT … RETURNING statement, which SQLite serialises under its
// write lock, so counts stay exact across processes.
import type BetterSqlite3 from 'better-sqlite3';
import { RateLimiterSQLite } from 'rate-limiter-flexible';
import {
  DEFAULT_WINDOW_SECONDS,
  type FixedWindowOptions,
  FixedWindowRateLimiter,
  UNREACHABLE_POINTS,
} from './fixed-window.js';

export interface SqliteRateLimiterOptions extends FixedWindowOptions {
  /** Letters, digits and underscores only (rate-limiter-flexible's rule). */
  tableName?: string;
}

const DEFAULT_TABLE = 'rate_limits';
const SWEEP_EVERY_MS = 5 * 60_000;
const KEEP_ENDED_MS = 60 * 60_000;

export class SqliteRateLimiter extends FixedWindowRateLimiter {
  private readonly sweep: NodeJS.Timeout;

  constructor(db: BetterSqlite3.Database, opts: SqliteRateLimiterOptions = {}) {
    const tableName = opts.tableName ?? DEFAULT_TABLE;
    if (!/^[A-Za-z0-9_]+$/.test(tableName)) throw new Error(`invalid rate limit table name: ${tableName}`);
    // The library would create its table asynchronously after construction and reject consumes
    // until then; creating it here (same schema as the library's) makes the limiter usable at once.
    db.exec(`CREATE TABLE IF NOT EXISTS ${tableName} (
      key TEXT PRIMARY KEY,
      points INTEGER NOT NULL DEFAULT 0,
      expire INTEGER
    )`);
    const limiter = new RateLimiterSQLite({
      storeClient: db,
      storeType: 'better-sqlite3',
      tableName,
      tableCreated: true,
      // Our own sweep below instead: the library's timer keeps running after the database is
      // closed and its failure would surface as an unhandled rejection.
      clearExpiredByTimeout: false,
      points: UNREACHABLE_POINTS,
      duration: opts.windowSeconds ?? DEFAULT_WINDOW_SECONDS,
    });
    super(limiter);
    this.sweep = setInterval(() => {
      try {
        if (db.open) db.prepare(`DELETE FROM ${tableName} WHERE expire < ?`).run(Date.now() - KEEP_ENDED_MS);
      } catch {
        // Busy or closed: ended windows are harmless and the next sweep retries.
      }
    }, SWEEP_EVERY_MS);
    this.sweep.unref();
  }

  async close(): Promise<void> {
    // The database belongs to the caller; only the sweep is ours to stop.
    clearInterval(this.sweep);
  }
}
