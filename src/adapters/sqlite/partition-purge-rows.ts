// The partition-purge queue's rows on SQLite: a partition's mark for deletion (partition_deletions)
// is its purge's job, leased on the lease-queue engine, so one process purges a partition at a
// time and a purge whose process died is taken up again once its lease lapses. A row exists only
// while its purge is unfinished (the purge deletes it with the last document).
import { type Clock, systemClock } from '../../domain/ports.js';
import type { LeasedJob } from '../lease-queue/engine.js';
import type { Database } from './database.js';
import { SqliteRowJobs } from './row-jobs.js';

export class SqlitePartitionPurgeRows extends SqliteRowJobs {
  constructor(db: Database, clock: Clock = systemClock) {
    super(db, 'partition_deletions', clock);
  }

  claim(owner: string, leaseMs: number): LeasedJob | null {
    return this.claimOldest(owner, leaseMs);
  }

  /** Every row is an unfinished purge: a finished job whose row is still there runs again. */
  override revive(ids: readonly string[]): void {
    this.sql
      .get(
        `UPDATE partition_deletions SET job_state = 'pending', run_at = ?, job_attempts = 0, lease_owner = NULL,
           lease_until = NULL
         WHERE id IN (SELECT value FROM json_each(?)) AND job_state = 'done'`,
      )
      .run(this.now(), JSON.stringify(ids));
  }
}
