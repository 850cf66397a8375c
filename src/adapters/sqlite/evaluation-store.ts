// EvaluationStore on SQLite, and the evaluations' job queue: each evaluation's row is also its
// job (job_* columns, as a document's row is), leased on the shared lease-queue engine. Requests
// and results are JSON columns; times are the injected clock's, in ms.
import type {
  EvaluationError,
  EvaluationListing,
  EvaluationRecord,
  EvaluationReport,
  EvaluationStore,
  NewEvaluation,
  RunSummary,
} from '../../domain/evaluations.js';
import { type Clock, systemClock } from '../../domain/ports.js';
import {
  type ClaimTurn,
  type LeasedJob,
  LeaseQueue,
  type LeaseQueueOptions,
  type Settlement,
} from '../lease-queue/engine.js';
import type { Database } from './database.js';
import { HELD, SqliteRowJobs } from './row-jobs.js';
import { StatementCache } from './statements.js';

interface EvaluationRow {
  id: string;
  org_id: string;
  name: string | null;
  status: EvaluationRecord['status'];
  top_k: number;
  queries: string;
  query_count: number;
  runs: string;
  summary: string | null;
  report: string | null;
  error: string | null;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
}

const LIST_COLUMNS = `id, org_id, name, status, top_k, query_count, runs, summary, error,
  created_at, started_at, finished_at`;
const ALL_COLUMNS = `id, org_id, name, status, top_k, queries, query_count, runs, summary, report, error,
  created_at, started_at, finished_at`;

type ListingRow = Omit<EvaluationRow, 'queries' | 'report'>;

const date = (ms: number | null) => (ms === null ? null : new Date(ms));

function toListing(row: ListingRow): EvaluationListing {
  return {
    id: row.id,
    orgId: row.org_id,
    name: row.name,
    status: row.status,
    topK: row.top_k,
    queryCount: row.query_count,
    runs: JSON.parse(row.runs) as EvaluationRecord['runs'],
    summary: row.summary === null ? null : (JSON.parse(row.summary) as RunSummary[]),
    error: row.error === null ? null : (JSON.parse(row.error) as EvaluationError),
    createdAt: new Date(row.created_at),
    startedAt: date(row.started_at),
    finishedAt: date(row.finished_at),
  };
}

function toRecord(row: EvaluationRow): EvaluationRecord {
  return {
    ...toListing(row),
    queries: JSON.parse(row.queries) as EvaluationRecord['queries'],
    report: row.report === null ? null : (JSON.parse(row.report) as EvaluationReport),
  };
}

/** The error of an evaluation whose job ended without the evaluation finishing. */
const UNFINISHED_ERROR = JSON.stringify({ code: 'internal', message: 'the evaluation could not be run' });

export class SqliteEvaluationStore implements EvaluationStore {
  private readonly sql: StatementCache;

  constructor(
    db: Database,
    private readonly clock: Clock = systemClock,
  ) {
    this.sql = new StatementCache(db);
  }

  async create(e: NewEvaluation): Promise<void> {
    this.sql
      .get(
        `INSERT INTO evaluations (id, org_id, name, status, top_k, queries, query_count, runs, created_at, job_state, run_at)
         VALUES (@id, @orgId, @name, 'queued', @topK, @queries, @queryCount, @runs, @createdAt, 'pending', @runAt)`,
      )
      .run({
        id: e.id,
        orgId: e.orgId,
        name: e.name,
        topK: e.topK,
        queries: JSON.stringify(e.queries),
        queryCount: e.queries.length,
        runs: JSON.stringify(e.runs),
        createdAt: e.createdAt.getTime(),
        runAt: this.clock.now().getTime(),
      });
  }

  async get(orgId: string, id: string): Promise<EvaluationRecord | null> {
    const row = this.sql
      .get<[string, string], EvaluationRow>(
        `SELECT ${ALL_COLUMNS} FROM evaluations WHERE id = ? AND org_id = ?`,
      )
      .get(id, orgId);
    return row ? toRecord(row) : null;
  }

  async list(
    orgId: string,
    page: { limit: number; after: { createdAt: Date; id: string } | null },
  ): Promise<EvaluationListing[]> {
    const after = page.after;
    const rows =
      after === null
        ? this.sql
            .get<[string, number], ListingRow>(
              `SELECT ${LIST_COLUMNS} FROM evaluations WHERE org_id = ?
               ORDER BY created_at DESC, id DESC LIMIT ?`,
            )
            .all(orgId, page.limit)
        : this.sql
            .get<[string, number, string, number], ListingRow>(
              `SELECT ${LIST_COLUMNS} FROM evaluations WHERE org_id = ? AND (created_at, id) < (?, ?)
               ORDER BY created_at DESC, id DESC LIMIT ?`,
            )
            .all(orgId, after.createdAt.getTime(), after.id, page.limit);
    return rows.map(toListing);
  }

  async load(id: string): Promise<EvaluationRecord | null> {
    const row = this.sql
      .get<[string], EvaluationRow>(`SELECT ${ALL_COLUMNS} FROM evaluations WHERE id = ?`)
      .get(id);
    return row ? toRecord(row) : null;
  }

  async markRunning(id: string, at: Date): Promise<boolean> {
    return (
      this.sql
        .get(
          `UPDATE evaluations SET status = 'running', started_at = ?
           WHERE id = ? AND status IN ('queued', 'running')`,
        )
        .run(at.getTime(), id).changes > 0
    );
  }

  async complete(id: string, summary: RunSummary[], report: EvaluationReport, at: Date): Promise<boolean> {
    return (
      this.sql
        .get(
          `UPDATE evaluations SET status = 'done', summary = ?, report = ?, error = NULL, finished_at = ?
           WHERE id = ? AND status = 'running'`,
        )
        .run(JSON.stringify(summary), JSON.stringify(report), at.getTime(), id).changes > 0
    );
  }

  async fail(id: string, error: EvaluationError, at: Date): Promise<boolean> {
    return (
      this.sql
        .get(
          `UPDATE evaluations SET status = 'failed', error = ?, finished_at = ?
           WHERE id = ? AND status IN ('queued', 'running')`,
        )
        .run(JSON.stringify(error), at.getTime(), id).changes > 0
    );
  }

  async purgeOrg(orgId: string): Promise<number> {
    return this.sql.get('DELETE FROM evaluations WHERE org_id = ?').run(orgId).changes;
  }
}

const NO_TURN: ClaimTurn = { skip: [], recent: [] };

/** The evaluations' job rows: few and long, so a claim takes the org with the fewest running first. */
export class SqliteEvaluationJobRows extends SqliteRowJobs {
  constructor(db: Database, clock: Clock) {
    super(db, 'evaluations', clock);
  }

  claim(owner: string, leaseMs: number, turn: ClaimTurn = NO_TURN): LeasedJob | null {
    const now = this.now();
    const due = this.sql
      .get<[{ now: number }], number>(
        `SELECT EXISTS (SELECT 1 FROM evaluations WHERE job_state = 'leased' AND lease_until < @now)
             OR EXISTS (SELECT 1 FROM evaluations WHERE job_state = 'pending' AND run_at <= @now)`,
      )
      .pluck()
      .get({ now });
    if (!due) return null;
    const row = this.sql
      .get<[{ owner: string; leaseUntil: number; now: number; skip: string }], LeasedJob>(
        `UPDATE evaluations
         SET job_state = 'leased', lease_owner = @owner, lease_until = @leaseUntil, job_attempts = job_attempts + 1
         WHERE id = coalesce(
           (SELECT id FROM evaluations WHERE job_state = 'leased' AND lease_until < @now ORDER BY lease_until LIMIT 1),
           (SELECT e.id FROM evaluations AS e
            WHERE e.job_state = 'pending' AND e.run_at <= @now
              AND e.org_id NOT IN (SELECT value FROM json_each(@skip))
            ORDER BY (SELECT count(*) FROM evaluations AS b WHERE b.job_state = 'leased' AND b.org_id = e.org_id),
              e.run_at
            LIMIT 1))
         RETURNING id, org_id AS orgId, job_attempts AS attempt`,
      )
      .get({ owner, leaseUntil: now + leaseMs, now, skip: JSON.stringify(turn.skip) });
    return row ?? null;
  }

  /**
   * A job that ends for good while its evaluation is still queued or running (its handler could
   * not record the outcome) fails the evaluation in the same write: none stays `running`.
   */
  override settle(owner: string, job: LeasedJob, next: Settlement): void {
    this.sql
      .get(
        `UPDATE evaluations SET job_state = @state, run_at = coalesce(@runAt, run_at), lease_owner = NULL,
           lease_until = NULL,
           error = CASE WHEN @state = 'done' AND status IN ('queued', 'running') THEN @unfinished ELSE error END,
           finished_at = CASE WHEN @state = 'done' AND status IN ('queued', 'running') THEN @now ELSE finished_at END,
           status = CASE WHEN @state = 'done' AND status IN ('queued', 'running') THEN 'failed' ELSE status END
         WHERE id = @id AND ${HELD}`,
      )
      .run({
        state: next.state,
        runAt: next.state === 'pending' ? this.now() + next.delayMs : null,
        unfinished: UNFINISHED_ERROR,
        now: this.now(),
        id: job.id,
        owner,
        attempt: job.attempt,
      });
  }
}

export interface SqliteEvaluationQueueOptions extends LeaseQueueOptions {
  clock?: Clock;
}

/** The evaluations' queue: their rows, leased on the engine the document queues run on. */
export class SqliteEvaluationQueue extends LeaseQueue {
  constructor(db: Database, opts: SqliteEvaluationQueueOptions = {}) {
    super(new SqliteEvaluationJobRows(db, opts.clock ?? systemClock), {
      ...opts,
      pollMs: opts.pollMs ?? 500,
    });
  }
}
