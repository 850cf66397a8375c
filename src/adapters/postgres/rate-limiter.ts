// RateLimiter whose counters live in PostgreSQL: the limiter of a scale-out deployment without
// Redis. rate-limiter-flexible's PostgreSQL store counts with one INSERT … ON CONFLICT … RETURNING
// per request, which the row lock serialises, so counts stay exact across every API process.
import { RateLimiterPostgres } from 'rate-limiter-flexible';
import {
  type CountingStore,
  DEFAULT_WINDOW_SECONDS,
  type FixedWindowOptions,
  FixedWindowRateLimiter,
  UNREACHABLE_POINTS,
} from '../ratelimit/fixed-window.js';
import { type PgDatabase, toStoreError } from './database.js';
import { RATE_LIMIT_TABLE } from './migrations/migration.js';

const SWEEP_EVERY_MS = 5 * 60_000;
const KEEP_ENDED_MS = 60 * 60_000;

export class PgRateLimiter extends FixedWindowRateLimiter {
  private readonly sweep: NodeJS.Timeout;

  constructor(db: PgDatabase, opts: FixedWindowOptions = {}) {
    const limiter = new RateLimiterPostgres({
      storeClient: db.pool,
      storeType: 'pool',
      schemaName: db.schema,
      tableName: RATE_LIMIT_TABLE,
      // The migration created the table; the library would otherwise create it asynchronously
      // and reject consumes until then.
      tableCreated: true,
      // Our own sweep below instead: the library's timer outlives a closed pool.
      clearExpiredByTimeout: false,
      points: UNREACHABLE_POINTS,
      duration: opts.windowSeconds ?? DEFAULT_WINDOW_SECONDS,
    });
    const store: CountingStore = {
      async consume(key, points) {
        try {
          return await limiter.consume(key, points);
        } catch (rejection) {
          // Errors are store failures (an outage becomes a 503); anything else is the library's
          // result object, which FixedWindowRateLimiter reads.
          throw rejection instanceof Error ? toStoreError(rejection) : rejection;
        }
      },
    };
    super(store);
    const table = db.table(RATE_LIMIT_TABLE);
    this.sweep = setInterval(() => {
      db.query(`DELETE FROM ${table} WHERE expire < $1`, [Date.now() - KEEP_ENDED_MS]).catch(() => {
        // Unreachable or closed: ended windows are harmless and the next sweep retries.
      });
    }, SWEEP_EVERY_MS);
    this.sweep.unref();
  }

  async close(): Promise<void> {
    // The pool belongs to the caller; only the sweep is ours to stop.
    clearInterval(this.sweep);
  }
}
