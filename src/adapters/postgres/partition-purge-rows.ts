// The partition-purge queue's rows on PostgreSQL: a partition's mark for deletion
// (partition_deletions) is its purge's job, leased on the lease-queue engine, so one process of
// the deployment purges a partition at a time and a purge whose process died is taken up again
// once its lease lapses. A row exists only while its purge is unfinished.
import type { LeasedJob } from '../lease-queue/engine.js';
import type { PgDatabase } from './database.js';
import { PgRowJobs } from './row-jobs.js';

export class PgPartitionPurgeRows extends PgRowJobs {
  constructor(db: PgDatabase) {
    super(db, 'partition_deletions');
  }

  claim(owner: string, leaseMs: number): Promise<LeasedJob | null> {
    return this.claimOldest(owner, leaseMs);
  }

  /** Every row is an unfinished purge: a finished job whose row is still there runs again. */
  override async revive(ids: readonly string[]): Promise<void> {
    await this.db.query(
      `UPDATE ${this.table} SET job_state = 'pending', run_at = now(), job_attempts = 0,
         lease_owner = NULL, lease_until = NULL
       WHERE id = ANY($1::text[]) AND job_state = 'done'`,
      [[...ids]],
    );
  }
}
