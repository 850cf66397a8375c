// Tables whose rows are their own jobs (a document, an evaluation, a source run): the job columns
// (`job_state`, `run_at`, `lease_owner`, `lease_until`, `job_attempts`) sit beside the record's
// `status`, which is `queued` or `running` while the work is unfinished. The lease-queue engine
// reads them through JobRows; this holds what every such table does alike, and each table's class
// says how it is claimed (and, where it must, how a job is settled).
import type { ClaimTurn, JobRows, LeasedJob, Settlement } from '../lease-queue/engine.js';
import type { PgDatabase } from './database.js';

export abstract class PgRowJobs implements JobRows {
  /** The table's qualified name. */
  protected readonly table: string;

  constructor(
    protected readonly db: PgDatabase,
    name: string,
  ) {
    this.table = db.table(name);
  }

  abstract claim(owner: string, leaseMs: number, turn?: ClaimTurn): Promise<LeasedJob | null>;

  /** A claim without turns between orgs: a lapsed lease first, else the job due longest. */
  protected async claimOldest(owner: string, leaseMs: number): Promise<LeasedJob | null> {
    const { rows } = await this.db.query<LeasedJob>(
      `WITH lapsed AS (
         SELECT id FROM ${this.table} WHERE job_state = 'leased' AND lease_until < now()
         ORDER BY lease_until LIMIT 1 FOR UPDATE SKIP LOCKED
       ), due AS (
         SELECT id FROM ${this.table} WHERE job_state = 'pending' AND run_at <= now()
         ORDER BY run_at LIMIT 1 FOR UPDATE SKIP LOCKED
       ), next AS (
         SELECT id FROM (SELECT id, 0 AS rank FROM lapsed UNION ALL SELECT id, 1 FROM due) AS candidates
         ORDER BY rank LIMIT 1)
       UPDATE ${this.table} r SET job_state = 'leased', lease_owner = $1,
         lease_until = now() + $2 * interval '1 millisecond', job_attempts = r.job_attempts + 1
       FROM next WHERE r.id = next.id
       RETURNING r.id, r.org_id AS "orgId", r.job_attempts AS attempt`,
      [owner, leaseMs],
    );
    return rows[0] ?? null;
  }

  async renew(owner: string, jobs: readonly LeasedJob[], leaseMs: number): Promise<Set<string>> {
    const { rows } = await this.db.query<{ id: string }>(
      `UPDATE ${this.table} AS j SET lease_until = now() + $1 * interval '1 millisecond'
       FROM unnest($2::text[], $3::int[]) AS held (id, attempts)
       WHERE j.id = held.id AND j.job_attempts = held.attempts AND j.job_state = 'leased' AND j.lease_owner = $4
       RETURNING j.id`,
      [leaseMs, jobs.map((j) => j.id), jobs.map((j) => j.attempt), owner],
    );
    const held = new Set(rows.map((r) => r.id));
    return new Set(jobs.map((j) => j.id).filter((id) => !held.has(id)));
  }

  async settle(owner: string, job: LeasedJob, next: Settlement): Promise<void> {
    await this.db.query(
      `UPDATE ${this.table} SET job_state = $4,
         run_at = CASE WHEN $5::float8 IS NULL THEN run_at ELSE now() + $5::float8 * interval '1 millisecond' END,
         lease_owner = NULL, lease_until = NULL
       WHERE id = $1 AND job_state = 'leased' AND lease_owner = $2 AND job_attempts = $3`,
      [job.id, owner, job.attempt, next.state, next.state === 'pending' ? next.delayMs : null],
    );
  }

  /** Makes the finished jobs of rows whose work is unfinished (`queued`, `running`) pending again. */
  async revive(ids: readonly string[]): Promise<void> {
    await this.db.query(
      `UPDATE ${this.table} SET job_state = 'pending', run_at = now(), job_attempts = 0,
         lease_owner = NULL, lease_until = NULL
       WHERE id = ANY($1::text[]) AND job_state = 'done' AND status IN ('queued', 'running')`,
      [[...ids]],
    );
  }

  async waiting(id: string): Promise<boolean> {
    const { rows } = await this.db.query<{ job_state: string }>(
      `SELECT job_state FROM ${this.table} WHERE id = $1`,
      [id],
    );
    const state = rows[0]?.job_state;
    return state === 'pending' || state === 'leased';
  }

  async leasesStartingWith(prefix: string): Promise<Array<{ id: string; owner: string }>> {
    const { rows } = await this.db.query<{ id: string; owner: string }>(
      `SELECT id, lease_owner AS owner FROM ${this.table}
       WHERE job_state = 'leased' AND starts_with(lease_owner, $1)`,
      [prefix],
    );
    return rows;
  }

  async release(id: string, owner: string): Promise<void> {
    await this.db.query(
      `UPDATE ${this.table} SET job_state = 'pending', run_at = now(), lease_owner = NULL, lease_until = NULL
       WHERE id = $1 AND job_state = 'leased' AND lease_owner = $2`,
      [id, owner],
    );
  }
}
