// JobQueue for embedded mode: the job of a document is its row in the documents table (job_*
// columns), leased on the shared lease-queue engine. Claims are single UPDATE … RETURNING
// statements, which SQLite runs under its one write lock, so consumers in several processes
// sharing the database file never take the same job. Times are the injected clock's, in ms.
import { type Clock, systemClock } from '../../domain/ports.js';
import { type ClaimTurn, type LeasedJob, LeaseQueue, type LeaseQueueOptions } from '../lease-queue/engine.js';
import { LANE_PREDICATE, type QueueLane } from '../sql-rows/document-row.js';
import type { Database } from './database.js';
import { SqliteRowJobs } from './row-jobs.js';
import { startProcessingSet } from './start-processing.js';

export type { QueueLane } from '../sql-rows/document-row.js';

/**
 * Pending jobs sit in one partial index per lane (migration 3), so a lane's claim walks only its
 * own jobs, not the other lane's backlog. SQLite uses a partial index only for a query whose WHERE
 * repeats the index's WHERE, hence these exact terms; 'any' looks in both.
 */
const PENDING_PARTITIONS: Record<QueueLane, readonly string[]> = {
  download: ['fetch_url IS NOT NULL'],
  process: ['fetch_url IS NULL'],
  any: ['fetch_url IS NULL', 'fetch_url IS NOT NULL'],
};

const pendingDue = (partition: string) =>
  `FROM documents WHERE job_state = 'pending' AND run_at <= @now AND ${partition}`;

/** Whether the lane has a due job: a lapsed lease or a pending job whose time has come. */
function dueSql(lane: QueueLane): string {
  // Leased jobs are few (at most every consumer's concurrency), so one index serves every lane.
  const leased = `EXISTS (SELECT 1 FROM documents WHERE job_state = 'leased' AND lease_until < @now${LANE_PREDICATE[lane]})`;
  const pending = PENDING_PARTITIONS[lane].map((p) => `EXISTS (SELECT 1 ${pendingDue(p)})`);
  return `SELECT ${[leased, ...pending].join(' OR ')}`;
}

/**
 * The CTEs that list, per partition of the lane, each org with a due pending job and that org's
 * oldest one (`heads`): orgs are walked one index seek at a time (the next org_id after the last),
 * so a backlog of one org costs one seek, not a walk through its jobs. Orgs in @skip are left out.
 */
function orgHeadsSql(lane: QueueLane): string {
  const partitions = PENDING_PARTITIONS[lane];
  const orgs = partitions.map((partition, i) => {
    const pending = `FROM documents WHERE job_state = 'pending' AND ${partition}`;
    return `orgs${i}(org) AS (
        SELECT (SELECT min(org_id) ${pending})
        UNION ALL
        SELECT (SELECT min(org_id) ${pending} AND org_id > orgs${i}.org) FROM orgs${i} WHERE orgs${i}.org IS NOT NULL
      )`;
  });
  const heads = partitions.map(
    (partition, i) =>
      `SELECT (SELECT id FROM documents WHERE job_state = 'pending' AND ${partition} AND org_id = orgs${i}.org
         AND run_at <= @now ORDER BY run_at LIMIT 1) AS id
       FROM orgs${i} WHERE orgs${i}.org IS NOT NULL AND orgs${i}.org NOT IN (SELECT value FROM json_each(@skip))`,
  );
  return `WITH RECURSIVE ${orgs.join(', ')}, heads(id) AS (${heads.join(' UNION ALL ')})`;
}

/**
 * The due pending job to run next, fair between orgs: the org with the fewest leased jobs in the
 * lane (across every consumer and process), then the org this consumer served least recently
 * (@recent, least recent first; an org not in it before any), then the org whose oldest due job
 * is oldest; that job. One org's backlog then waits behind another org's single document, not the other way.
 */
function fairPendingSql(lane: QueueLane): string {
  // Leased jobs are few (every consumer's concurrency), read from their own index: an org's
  // index would walk every document the org ever had.
  return `SELECT d.id FROM heads JOIN documents AS d ON d.id = heads.id
    LEFT JOIN (SELECT org_id, count(*) AS n FROM documents INDEXED BY documents_job_leased
               WHERE job_state = 'leased'${LANE_PREDICATE[lane]} GROUP BY org_id) AS busy
      ON busy.org_id = d.org_id
    ORDER BY coalesce(busy.n, 0),
      coalesce((SELECT key FROM json_each(@recent) WHERE value = d.org_id), -1),
      d.run_at
    LIMIT 1`;
}

const NO_TURN: ClaimTurn = { skip: [], recent: [] };

/**
 * Synchronous, as better-sqlite3 is: the engine awaits nothing but its own pauses. A document's
 * job is renewed, settled and released as any row job is; what the documents table adds is the
 * lanes, the claim that is fair between orgs and starts the processing, and a version's revival.
 */
export class SqliteJobRows extends SqliteRowJobs {
  private readonly lanePredicate: string;
  private readonly dueSql: string;
  private readonly claimSql: string;

  constructor(db: Database, lane: QueueLane, clock: Clock) {
    super(db, 'documents', clock);
    this.lanePredicate = LANE_PREDICATE[lane];
    this.dueSql = dueSql(lane);
    // The job is its document's row, so the claim also does what the processor's first step
    // would (DocumentStore.markProcessing) to a queued document: one commit per document fewer.
    this.claimSql = `${orgHeadsSql(lane)}
      UPDATE documents
      SET job_state = 'leased', lease_owner = @owner, lease_until = @leaseUntil, job_attempts = job_attempts + 1,
        ${startProcessingSet(true)}
      WHERE id = coalesce(
        (SELECT id FROM documents WHERE job_state = 'leased' AND lease_until < @now${this.lanePredicate}
         ORDER BY lease_until LIMIT 1),
        (${fairPendingSql(lane)}))
      RETURNING id, org_id AS orgId, job_attempts AS attempt, job_traceparent AS traceparent,
        run_at AS queuedAt`;
  }

  claim(owner: string, leaseMs: number, turn: ClaimTurn = NO_TURN): LeasedJob | null {
    const now = this.now();
    // A read first: idle polling then never takes the write lock other processes need.
    const due = this.sql.get<[{ now: number }], number>(this.dueSql).pluck().get({ now });
    if (!due) return null;
    const row = this.sql
      .get<[{ owner: string; leaseUntil: number; now: number; skip: string; recent: string }], LeasedJob>(
        this.claimSql,
      )
      .get({
        owner,
        leaseUntil: now + leaseMs,
        now,
        skip: JSON.stringify(turn.skip),
        recent: JSON.stringify(turn.recent),
      });
    return row ?? null;
  }

  override revive(documentIds: readonly string[]): void {
    const ids = JSON.stringify(documentIds);
    const condition = `id IN (SELECT value FROM json_each(?)) AND job_state = 'done' AND (status IN ('queued', 'processing') OR pending_status IN ('queued', 'processing'))`;
    // A read first: a fresh document's job is already pending, and an UPDATE finding nothing
    // would still cost every ingest a write transaction, waiting for the lock like one.
    const revivable = this.sql
      .get<[string], number>(`SELECT EXISTS (SELECT 1 FROM documents WHERE ${condition})`)
      .pluck()
      .get(ids);
    if (!revivable) return;
    this.sql
      .get(
        `UPDATE documents SET job_state = 'pending', run_at = ?, job_attempts = 0,
           lease_owner = NULL, lease_until = NULL
         WHERE ${condition}`,
      )
      .run(this.now(), ids);
  }

  override leasesStartingWith(prefix: string): Array<{ id: string; owner: string }> {
    return this.sql
      .get<[number, string], { id: string; owner: string }>(
        `SELECT id, lease_owner AS owner FROM documents
         WHERE job_state = 'leased' AND substr(lease_owner, 1, ?) = ?${this.lanePredicate}`,
      )
      .all(prefix.length, prefix);
  }
}

export interface SqliteTableQueueOptions extends LeaseQueueOptions {
  lane?: QueueLane;
  clock?: Clock;
}

export class SqliteTableQueue extends LeaseQueue {
  declare readonly rows: SqliteJobRows;

  constructor(db: Database, opts: SqliteTableQueueOptions = {}) {
    super(new SqliteJobRows(db, opts.lane ?? 'any', opts.clock ?? systemClock), {
      ...opts,
      pollMs: opts.pollMs ?? 200,
    });
  }
}
