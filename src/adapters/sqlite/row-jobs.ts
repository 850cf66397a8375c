// Tables whose rows are their own jobs (a document, an evaluation, a source run): the job columns
// (`job_state`, `run_at`, `lease_owner`, `lease_until`, `job_attempts`) sit beside the record's
// `status`, which is `queued` or `running` while the work is unfinished. The lease-queue engine
// reads them through JobRows; this holds what every such table does alike, and each table's class
// says how it is claimed (and, where it must, how a job is settled).
import { type Clock, systemClock } from '../../domain/ports.js';
import type { ClaimTurn, JobRows, LeasedJob, Settlement } from '../lease-queue/engine.js';
import type { Database } from './database.js';
import { StatementCache } from './statements.js';

/** The row is still leased by the caller, in the attempt it claimed. */
export const HELD = `job_state = 'leased' AND lease_owner = @owner AND job_attempts = @attempt`;

export abstract class SqliteRowJobs implements JobRows {
  protected readonly sql: StatementCache;

  constructor(
    db: Database,
    /** The table's name (a constant of the subclass, never input). */
    protected readonly table: string,
    protected readonly clock: Clock = systemClock,
  ) {
    this.sql = new StatementCache(db);
  }

  protected now(): number {
    return this.clock.now().getTime();
  }

  abstract claim(owner: string, leaseMs: number, turn?: ClaimTurn): LeasedJob | null;

  /** A claim without turns between orgs: a lapsed lease first, else the job due longest. */
  protected claimOldest(owner: string, leaseMs: number): LeasedJob | null {
    const now = this.now();
    const due = this.sql
      .get<[number, number], number>(
        `SELECT EXISTS (SELECT 1 FROM ${this.table} WHERE job_state = 'leased' AND lease_until < ?)
           OR EXISTS (SELECT 1 FROM ${this.table} WHERE job_state = 'pending' AND run_at <= ?)`,
      )
      .pluck()
      .get(now, now);
    if (!due) return null;
    const row = this.sql
      .get<[{ owner: string; leaseUntil: number; now: number }], LeasedJob>(
        `UPDATE ${this.table} SET job_state = 'leased', lease_owner = @owner, lease_until = @leaseUntil,
           job_attempts = job_attempts + 1
         WHERE id = coalesce(
           (SELECT id FROM ${this.table} WHERE job_state = 'leased' AND lease_until < @now ORDER BY lease_until LIMIT 1),
           (SELECT id FROM ${this.table} WHERE job_state = 'pending' AND run_at <= @now ORDER BY run_at LIMIT 1))
         RETURNING id, org_id AS orgId, job_attempts AS attempt`,
      )
      .get({ owner, leaseUntil: now + leaseMs, now });
    return row ?? null;
  }

  renew(owner: string, jobs: readonly LeasedJob[], leaseMs: number): Set<string> {
    const renew = this.sql.get(
      `UPDATE ${this.table} SET lease_until = @leaseUntil WHERE id = @id AND ${HELD}`,
    );
    const leaseUntil = this.now() + leaseMs;
    const lost = new Set<string>();
    for (const job of jobs) {
      if (renew.run({ leaseUntil, id: job.id, owner, attempt: job.attempt }).changes === 0) lost.add(job.id);
    }
    return lost;
  }

  settle(owner: string, job: LeasedJob, next: Settlement): void {
    this.sql
      .get(
        `UPDATE ${this.table} SET job_state = @state, run_at = coalesce(@runAt, run_at), lease_owner = NULL,
           lease_until = NULL
         WHERE id = @id AND ${HELD}`,
      )
      .run({
        state: next.state,
        runAt: next.state === 'pending' ? this.now() + next.delayMs : null,
        id: job.id,
        owner,
        attempt: job.attempt,
      });
  }

  /** Makes the finished jobs of rows whose work is unfinished (`queued`, `running`) pending again. */
  revive(ids: readonly string[]): void {
    this.sql
      .get(
        `UPDATE ${this.table} SET job_state = 'pending', run_at = ?, job_attempts = 0, lease_owner = NULL,
           lease_until = NULL
         WHERE id IN (SELECT value FROM json_each(?)) AND job_state = 'done' AND status IN ('queued', 'running')`,
      )
      .run(this.now(), JSON.stringify(ids));
  }

  waiting(id: string): boolean {
    const state = this.sql
      .get<[string], string>(`SELECT job_state FROM ${this.table} WHERE id = ?`)
      .pluck()
      .get(id);
    return state === 'pending' || state === 'leased';
  }

  leasesStartingWith(prefix: string): Array<{ id: string; owner: string }> {
    return this.sql
      .get<[number, string], { id: string; owner: string }>(
        `SELECT id, lease_owner AS owner FROM ${this.table}
         WHERE job_state = 'leased' AND substr(lease_owner, 1, ?) = ?`,
      )
      .all(prefix.length, prefix);
  }

  release(id: string, owner: string): void {
    this.sql
      .get(
        `UPDATE ${this.table} SET job_state = 'pending', run_at = ?, lease_owner = NULL, lease_until = NULL
         WHERE id = ? AND job_state = 'leased' AND lease_owner = ?`,
      )
      .run(this.now(), id, owner);
  }
}
