// JobQueue for a scale-out deployment without Redis: the job of a document is its row in the
// PostgreSQL documents table (job_* columns), leased on the shared lease-queue engine as in the
// embedded SQLite queue. Claims use FOR UPDATE SKIP LOCKED (never the same row twice, never
// waiting on each other). Lease times come from the database clock, so hosts with skewed clocks
// agree on when a lease has ended.
//
// Two lanes share the rows, as in embedded mode: URL documents waiting for their download, and
// the rest. PgDocumentStore.attachBlob turns a finished download into a pending job of the
// process lane in the same statement, so the hand-over can neither be lost nor run twice.
import { type ClaimTurn, type LeasedJob, LeaseQueue, type LeaseQueueOptions } from '../lease-queue/engine.js';
import { LANE_PREDICATE, type QueueLane } from '../sql-rows/document-row.js';
import type { PgDatabase } from './database.js';
import { schemaChannel } from './notifications.js';
import { PgRowJobs } from './row-jobs.js';

const NO_TURN: ClaimTurn = { skip: [], recent: [] };

/**
 * A document's job is renewed, settled and released as any row job is; what the documents table
 * adds is the lanes, the claim that is fair between orgs, and a version's revival.
 */
class PgJobRows extends PgRowJobs {
  private readonly lanePredicate: string;
  private readonly channel: string;

  constructor(db: PgDatabase, lane: QueueLane) {
    super(db, 'documents');
    this.lanePredicate = LANE_PREDICATE[lane];
    // Both lanes share it: a consumer woken for the other lane's job looks and finds nothing.
    this.channel = schemaChannel('jobs', db.schema);
  }

  /** NOTIFY is sent at commit: here at once, the enqueued rows having committed before. */
  async announce(): Promise<void> {
    await this.db.query(`SELECT pg_notify($1, '')`, [this.channel]);
  }

  onAnnounced(listener: () => void): () => void {
    return this.db.listen(this.channel, listener);
  }

  async claim(owner: string, leaseMs: number, turn: ClaimTurn = NO_TURN): Promise<LeasedJob | null> {
    // Fair between orgs: of the orgs with a due pending job (walked one index seek each, from one
    // org_id to the next), the one with the fewest leased jobs in the lane, then the one this
    // consumer served least recently ($4, least recent first), then the one waiting longest,
    // gives its oldest due job. SKIP LOCKED: rows another consumer is claiming at this
    // instant are passed over rather than waited for, so concurrent claimers each get a different
    // row (the next org's, or when one org alone waits, its next job by age: `due`).
    const lane = this.lanePredicate;
    const docs = this.table;
    const { rows } = await this.db.query<LeasedJob>(
      `WITH RECURSIVE orgs AS (
         (SELECT org_id FROM ${docs} WHERE job_state = 'pending'${lane} ORDER BY org_id LIMIT 1)
         UNION ALL
         SELECT (SELECT later.org_id FROM ${docs} AS later WHERE later.job_state = 'pending'${lane}
                   AND later.org_id > orgs.org_id ORDER BY later.org_id LIMIT 1)
         FROM orgs WHERE orgs.org_id IS NOT NULL
       ), busy AS (
         SELECT org_id, count(*) AS n FROM ${docs} WHERE job_state = 'leased'${lane} GROUP BY org_id
       ), heads AS (
         SELECT head.id, coalesce(busy.n, 0) AS n, coalesce(array_position($4::text[], orgs.org_id), 0) AS served,
           head.run_at
         FROM orgs
         CROSS JOIN LATERAL (
           SELECT id, run_at FROM ${docs}
           WHERE job_state = 'pending'${lane} AND org_id = orgs.org_id AND run_at <= now()
           ORDER BY run_at LIMIT 1
         ) AS head
         LEFT JOIN busy ON busy.org_id = orgs.org_id
         WHERE orgs.org_id IS NOT NULL AND orgs.org_id <> ALL ($3::text[])
       ), fair AS (
         SELECT d.id FROM ${docs} AS d JOIN heads ON d.id = heads.id
         WHERE d.job_state = 'pending'
         ORDER BY heads.n, heads.served, heads.run_at LIMIT 1 FOR UPDATE OF d SKIP LOCKED
       ), lapsed AS (
         SELECT id FROM ${docs} WHERE job_state = 'leased' AND lease_until < now()${lane}
         ORDER BY lease_until LIMIT 1 FOR UPDATE SKIP LOCKED
       ), due AS (
         SELECT id FROM ${docs} WHERE job_state = 'pending' AND run_at <= now()${lane}
           AND org_id <> ALL ($3::text[])
         ORDER BY run_at LIMIT 1 FOR UPDATE SKIP LOCKED
       ), next AS (
         SELECT id FROM (
           SELECT id, 0 AS rank FROM lapsed UNION ALL SELECT id, 1 FROM fair UNION ALL SELECT id, 2 FROM due
         ) AS candidates
         ORDER BY rank LIMIT 1
       )
       UPDATE ${docs} AS d
       SET job_state = 'leased', lease_owner = $1, lease_until = now() + $2 * interval '1 millisecond',
           job_attempts = d.job_attempts + 1
       FROM next WHERE d.id = next.id
       RETURNING d.id, d.org_id AS "orgId", d.job_attempts AS attempt, d.job_traceparent AS traceparent,
         (extract(epoch FROM d.run_at) * 1000)::float8 AS "queuedAt"`,
      [owner, leaseMs, turn.skip, turn.recent],
    );
    return rows[0] ?? null;
  }

  override async revive(documentIds: readonly string[]): Promise<void> {
    await this.db.query(
      `UPDATE ${this.table} SET job_state = 'pending', run_at = now(), job_attempts = 0,
         lease_owner = NULL, lease_until = NULL
       WHERE id = ANY($1::text[]) AND job_state = 'done'
         AND (status IN ('queued', 'processing') OR pending_status IN ('queued', 'processing'))`,
      [documentIds],
    );
  }

  override async leasesStartingWith(prefix: string): Promise<Array<{ id: string; owner: string }>> {
    const { rows } = await this.db.query<{ id: string; owner: string }>(
      `SELECT id, lease_owner AS owner FROM ${this.table}
       WHERE job_state = 'leased' AND starts_with(lease_owner, $1)${this.lanePredicate}`,
      [prefix],
    );
    return rows;
  }
}

export interface PgTableQueueOptions extends LeaseQueueOptions {
  lane?: QueueLane;
}

export class PgTableQueue extends LeaseQueue {
  constructor(db: PgDatabase, opts: PgTableQueueOptions = {}) {
    super(new PgJobRows(db, opts.lane ?? 'any'), opts);
  }
}
