// What the PostgreSQL migration files share: a migration's shape, the options of a run, and the
// name of the table migration 1 creates for the rate limiter's store, which rate-limiter.ts reads.
import type { PgDatabase, Queryable } from '../database.js';

export interface Migration {
  version: number;
  name: string;
  apply(tx: Queryable, db: PgDatabase, options: MigrateOptions): Promise<void>;
}

export interface MigrateOptions {
  /** Whether to use RUM when the server has it (default true); false keeps keyword search on GIN. */
  rum?: boolean;
  /** Stop after this version (tests of a migration over data written by the versions before it). */
  upTo?: number;
}

/** Table of rate-limiter-flexible's PostgreSQL store (same columns as the library creates). */
export const RATE_LIMIT_TABLE = 'rate_limits';
