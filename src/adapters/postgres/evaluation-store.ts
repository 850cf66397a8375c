// EvaluationStore on PostgreSQL, and the evaluations' job queue: each evaluation's row is also its
// job (job_* columns), leased on the shared lease-queue engine whether or not documents' jobs go
// through Redis. Claims use FOR UPDATE SKIP LOCKED; lease times are the database's clock.
import type {
  EvaluationError,
  EvaluationListing,
  EvaluationRecord,
  EvaluationReport,
  EvaluationStore,
  NewEvaluation,
  RunSummary,
} from '../../domain/evaluations.js';
import { cleanText } from '../../domain/text.js';
import {
  type ClaimTurn,
  type LeasedJob,
  LeaseQueue,
  type LeaseQueueOptions,
  type Settlement,
} from '../lease-queue/engine.js';
import type { PgDatabase } from './database.js';
import { PgRowJobs } from './row-jobs.js';

interface EvaluationRow {
  id: string;
  org_id: string;
  name: string | null;
  status: EvaluationRecord['status'];
  top_k: number;
  queries: EvaluationRecord['queries'];
  query_count: number;
  runs: EvaluationRecord['runs'];
  summary: RunSummary[] | null;
  report: EvaluationReport | null;
  error: EvaluationError | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

type ListingRow = Omit<EvaluationRow, 'queries' | 'report'>;

const LIST_COLUMNS = `id, org_id, name, status, top_k, query_count, runs, summary, error,
  created_at, started_at, finished_at`;
const ALL_COLUMNS = `id, org_id, name, status, top_k, queries, query_count, runs, summary, report, error,
  created_at, started_at, finished_at`;

function toListing(row: ListingRow): EvaluationListing {
  return {
    id: row.id,
    orgId: row.org_id,
    name: row.name,
    status: row.status,
    topK: row.top_k,
    queryCount: row.query_count,
    runs: row.runs,
    summary: row.summary,
    error: row.error,
    createdAt: row.created_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
  };
}

function toRecord(row: EvaluationRow): EvaluationRecord {
  return { ...toListing(row), queries: row.queries, report: row.report };
}

/** JSON text for a jsonb parameter (the domain cleaned its texts of NUL, which jsonb refuses). */
const json = (value: unknown) => JSON.stringify(value);

export class PgEvaluationStore implements EvaluationStore {
  private readonly evaluations: string;

  constructor(private readonly db: PgDatabase) {
    this.evaluations = db.table('evaluations');
  }

  async create(e: NewEvaluation): Promise<void> {
    await this.db.query(
      `INSERT INTO ${this.evaluations} (id, org_id, name, status, top_k, queries, query_count, runs, created_at, job_state, run_at)
       VALUES ($1, $2, $3, 'queued', $4, $5, $8, $6, $7, 'pending', now())`,
      [e.id, e.orgId, e.name, e.topK, json(e.queries), json(e.runs), e.createdAt, e.queries.length],
    );
  }

  async get(orgId: string, id: string): Promise<EvaluationRecord | null> {
    const { rows } = await this.db.query<EvaluationRow>(
      `SELECT ${ALL_COLUMNS} FROM ${this.evaluations} WHERE id = $1 AND org_id = $2`,
      [cleanText(id), cleanText(orgId)],
    );
    return rows[0] ? toRecord(rows[0]) : null;
  }

  async list(
    orgId: string,
    page: { limit: number; after: { createdAt: Date; id: string } | null },
  ): Promise<EvaluationListing[]> {
    const { after } = page;
    const { rows } =
      after === null
        ? await this.db.query<ListingRow>(
            `SELECT ${LIST_COLUMNS} FROM ${this.evaluations} WHERE org_id = $1
             ORDER BY created_at DESC, id DESC LIMIT $2`,
            [cleanText(orgId), page.limit],
          )
        : await this.db.query<ListingRow>(
            `SELECT ${LIST_COLUMNS} FROM ${this.evaluations} WHERE org_id = $1 AND (created_at, id) < ($3, $4)
             ORDER BY created_at DESC, id DESC LIMIT $2`,
            [cleanText(orgId), page.limit, after.createdAt, cleanText(after.id)],
          );
    return rows.map(toListing);
  }

  async load(id: string): Promise<EvaluationRecord | null> {
    const { rows } = await this.db.query<EvaluationRow>(
      `SELECT ${ALL_COLUMNS} FROM ${this.evaluations} WHERE id = $1`,
      [id],
    );
    return rows[0] ? toRecord(rows[0]) : null;
  }

  async markRunning(id: string, at: Date): Promise<boolean> {
    const r = await this.db.query(
      `UPDATE ${this.evaluations} SET status = 'running', started_at = $2
       WHERE id = $1 AND status IN ('queued', 'running')`,
      [id, at],
    );
    return (r.rowCount ?? 0) > 0;
  }

  async complete(id: string, summary: RunSummary[], report: EvaluationReport, at: Date): Promise<boolean> {
    const r = await this.db.query(
      `UPDATE ${this.evaluations} SET status = 'done', summary = $2, report = $3, error = NULL, finished_at = $4
       WHERE id = $1 AND status = 'running'`,
      [id, json(summary), json(report), at],
    );
    return (r.rowCount ?? 0) > 0;
  }

  async fail(id: string, error: EvaluationError, at: Date): Promise<boolean> {
    const r = await this.db.query(
      `UPDATE ${this.evaluations} SET status = 'failed', error = $2, finished_at = $3
       WHERE id = $1 AND status IN ('queued', 'running')`,
      [id, json(error), at],
    );
    return (r.rowCount ?? 0) > 0;
  }

  async purgeOrg(orgId: string): Promise<number> {
    const r = await this.db.query(`DELETE FROM ${this.evaluations} WHERE org_id = $1`, [cleanText(orgId)]);
    return r.rowCount ?? 0;
  }
}

const NO_TURN: ClaimTurn = { skip: [], recent: [] };

/** The error of an evaluation whose job ended without the evaluation finishing. */
const UNFINISHED_ERROR = json({ code: 'internal', message: 'the evaluation could not be run' });

class PgEvaluationJobRows extends PgRowJobs {
  constructor(db: PgDatabase) {
    super(db, 'evaluations');
  }

  async claim(owner: string, leaseMs: number, turn: ClaimTurn = NO_TURN): Promise<LeasedJob | null> {
    const t = this.table;
    // A lapsed lease first; else the due job of the org with the fewest running, oldest first.
    const { rows } = await this.db.query<LeasedJob>(
      `WITH lapsed AS (
         SELECT id FROM ${t} WHERE job_state = 'leased' AND lease_until < now()
         ORDER BY lease_until LIMIT 1 FOR UPDATE SKIP LOCKED
       ), pending AS (
         SELECT e.id FROM ${t} AS e
         WHERE e.job_state = 'pending' AND e.run_at <= now() AND e.org_id <> ALL ($3::text[])
         ORDER BY (SELECT count(*) FROM ${t} AS b WHERE b.job_state = 'leased' AND b.org_id = e.org_id), e.run_at
         LIMIT 1 FOR UPDATE OF e SKIP LOCKED
       ), next AS (
         SELECT id FROM (SELECT id, 0 AS rank FROM lapsed UNION ALL SELECT id, 1 FROM pending) AS c
         ORDER BY rank LIMIT 1
       )
       UPDATE ${t} AS e
       SET job_state = 'leased', lease_owner = $1, lease_until = now() + $2 * interval '1 millisecond',
           job_attempts = e.job_attempts + 1
       FROM next WHERE e.id = next.id
       RETURNING e.id, e.org_id AS "orgId", e.job_attempts AS attempt`,
      [owner, leaseMs, turn.skip],
    );
    return rows[0] ?? null;
  }

  /**
   * A job that ends for good while its evaluation is still queued or running (its handler could
   * not record the outcome) fails the evaluation in the same statement: none stays `running`.
   */
  override async settle(owner: string, job: LeasedJob, next: Settlement): Promise<void> {
    await this.db.query(
      `UPDATE ${this.table}
       SET job_state = $1,
           run_at = CASE WHEN $2::int IS NULL THEN run_at ELSE now() + $2::int * interval '1 millisecond' END,
           lease_owner = NULL, lease_until = NULL,
           error = CASE WHEN $1 = 'done' AND status IN ('queued', 'running') THEN $6::jsonb ELSE error END,
           finished_at = CASE WHEN $1 = 'done' AND status IN ('queued', 'running') THEN now() ELSE finished_at END,
           status = CASE WHEN $1 = 'done' AND status IN ('queued', 'running') THEN 'failed' ELSE status END
       WHERE id = $3 AND job_state = 'leased' AND lease_owner = $4 AND job_attempts = $5`,
      [
        next.state,
        next.state === 'pending' ? next.delayMs : null,
        job.id,
        owner,
        job.attempt,
        UNFINISHED_ERROR,
      ],
    );
  }
}

/** The evaluations' queue: their rows, leased on the engine the document table queues run on. */
export class PgEvaluationQueue extends LeaseQueue {
  constructor(db: PgDatabase, opts: LeaseQueueOptions = {}) {
    super(new PgEvaluationJobRows(db), { ...opts, pollMs: opts.pollMs ?? 500 });
  }
}
