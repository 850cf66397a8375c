// Sources, their items and runs on PostgreSQL (SourceStore), and the run rows as a job table for
// the lease-queue engine (PgSourceRunRows), as in SQLite: a run is queued by the INSERT that
// creates it, claims take FOR UPDATE SKIP LOCKED, and lease times are the database's clock.
import { prefixedId } from '../../domain/ids-and-hashes.js';
import {
  RUN_ERRORS_KEPT,
  type RunError,
  type SourceChanges,
  type SourceItem,
  type SourceRecord,
  type SourceRun,
  type SourceStore,
  type SourceTypeName,
} from '../../domain/sources.js';
import type { LeasedJob } from '../lease-queue/engine.js';
import type { PgDatabase } from './database.js';
import { PgRowJobs } from './row-jobs.js';
import { NEW_MESSAGE_ID, outboxChannel } from './webhook-store.js';

interface SourceRow {
  id: string;
  org_id: string;
  type: string;
  name: string;
  config: Record<string, unknown>;
  credentials: string | null;
  schedule: string;
  schedule_ms: string | null;
  next_run_at: Date | null;
  partition: string | null;
  metadata: Record<string, string>;
  access: string[] | null;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

interface RunRow {
  id: string;
  source_id: string;
  org_id: string;
  status: string;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  added: number;
  updated: number;
  deleted: number;
  unchanged: number;
  failed: number;
  errors: RunError[];
}

function toSource(r: SourceRow): SourceRecord {
  return {
    id: r.id,
    orgId: r.org_id,
    type: r.type as SourceTypeName,
    name: r.name,
    config: r.config,
    sealedCredentials: r.credentials,
    schedule: r.schedule,
    scheduleMs: r.schedule_ms === null ? null : Number(r.schedule_ms),
    nextRunAt: r.next_run_at,
    partition: r.partition,
    metadata: r.metadata,
    access: r.access,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    deletedAt: r.deleted_at,
  };
}

function toRun(r: RunRow): SourceRun {
  return {
    id: r.id,
    sourceId: r.source_id,
    orgId: r.org_id,
    status: r.status as SourceRun['status'],
    createdAt: r.created_at,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    added: r.added,
    updated: r.updated,
    deleted: r.deleted,
    unchanged: r.unchanged,
    failed: r.failed,
    errors: r.errors,
  };
}

const RUN_COLUMNS =
  'id, source_id, org_id, status, created_at, started_at, finished_at, added, updated, deleted, unchanged, failed, errors';
const ACTIVE = `status IN ('queued', 'running')`;

export class PgSourceStore implements SourceStore {
  private readonly sources: string;
  private readonly items: string;
  private readonly runs: string;
  private readonly messages: string;
  private readonly endpoints: string;

  constructor(private readonly db: PgDatabase) {
    this.sources = db.table('sources');
    this.items = db.table('source_items');
    this.runs = db.table('source_runs');
    this.messages = db.table('webhook_messages');
    this.endpoints = db.table('webhook_endpoints');
  }

  async createSource(s: SourceRecord): Promise<void> {
    await this.db.query(
      `INSERT INTO ${this.sources} (id, org_id, type, name, config, credentials, schedule, schedule_ms, next_run_at,
         partition, metadata, access, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
      [
        s.id,
        s.orgId,
        s.type,
        s.name,
        JSON.stringify(s.config),
        s.sealedCredentials,
        s.schedule,
        s.scheduleMs,
        s.nextRunAt,
        s.partition,
        JSON.stringify(s.metadata),
        s.access === null ? null : JSON.stringify(s.access),
        s.createdAt,
        s.updatedAt,
      ],
    );
  }

  async getSource(orgId: string, id: string): Promise<SourceRecord | null> {
    const { rows } = await this.db.query<SourceRow>(
      `SELECT * FROM ${this.sources} WHERE id = $1 AND org_id = $2 AND deleted_at IS NULL`,
      [id, orgId],
    );
    return rows[0] ? toSource(rows[0]) : null;
  }

  async loadSource(id: string): Promise<SourceRecord | null> {
    const { rows } = await this.db.query<SourceRow>(`SELECT * FROM ${this.sources} WHERE id = $1`, [id]);
    return rows[0] ? toSource(rows[0]) : null;
  }

  async listSources(orgId: string): Promise<SourceRecord[]> {
    const { rows } = await this.db.query<SourceRow>(
      `SELECT * FROM ${this.sources} WHERE org_id = $1 AND deleted_at IS NULL ORDER BY created_at, id`,
      [orgId],
    );
    return rows.map(toSource);
  }

  async updateSource(orgId: string, id: string, c: SourceChanges): Promise<SourceRecord | null> {
    const params: unknown[] = [id, orgId, c.updatedAt];
    const sets = ['updated_at = $3'];
    const set = (column: string, value: unknown) => {
      params.push(value);
      sets.push(`${column} = $${params.length}`);
    };
    if (c.name !== undefined) set('name', c.name);
    if (c.schedule !== undefined) {
      set('schedule', c.schedule);
      set('schedule_ms', c.scheduleMs ?? null);
      set('next_run_at', c.nextRunAt ?? null);
    }
    if (c.metadata !== undefined) set('metadata', JSON.stringify(c.metadata));
    if (c.config !== undefined) set('config', JSON.stringify(c.config));
    if (c.sealedCredentials !== undefined) set('credentials', c.sealedCredentials);
    const { rows } = await this.db.query<SourceRow>(
      `UPDATE ${this.sources} SET ${sets.join(', ')} WHERE id = $1 AND org_id = $2 AND deleted_at IS NULL RETURNING *`,
      params,
    );
    return rows[0] ? toSource(rows[0]) : null;
  }

  async markDeleted(orgId: string, id: string, at: Date): Promise<boolean> {
    const { rowCount } = await this.db.query(
      `UPDATE ${this.sources} SET deleted_at = $3 WHERE id = $1 AND org_id = $2 AND deleted_at IS NULL`,
      [id, orgId, at],
    );
    return (rowCount ?? 0) > 0;
  }

  async removeSource(id: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.query(`DELETE FROM ${this.items} WHERE source_id = $1`, [id]);
      await tx.query(`DELETE FROM ${this.runs} WHERE source_id = $1`, [id]);
      await tx.query(`DELETE FROM ${this.sources} WHERE id = $1`, [id]);
    });
  }

  async createRun(run: {
    id: string;
    sourceId: string;
    orgId: string;
    createdAt: Date;
  }): Promise<SourceRun | null> {
    const { rows } = await this.db.query<RunRow>(
      `INSERT INTO ${this.runs} (id, source_id, org_id, status, created_at)
       VALUES ($1, $2, $3, 'queued', $4)
       ON CONFLICT (source_id) WHERE ${ACTIVE} DO NOTHING
       RETURNING ${RUN_COLUMNS}`,
      [run.id, run.sourceId, run.orgId, run.createdAt],
    );
    return rows[0] ? toRun(rows[0]) : null;
  }

  async getRun(id: string): Promise<SourceRun | null> {
    const { rows } = await this.db.query<RunRow>(`SELECT ${RUN_COLUMNS} FROM ${this.runs} WHERE id = $1`, [
      id,
    ]);
    return rows[0] ? toRun(rows[0]) : null;
  }

  async listRuns(sourceId: string, limit: number): Promise<SourceRun[]> {
    const { rows } = await this.db.query<RunRow>(
      `SELECT ${RUN_COLUMNS} FROM ${this.runs} WHERE source_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2`,
      [sourceId, limit],
    );
    return rows.map(toRun);
  }

  async markRunning(runId: string, at: Date): Promise<SourceRun | null> {
    const { rows } = await this.db.query<RunRow>(
      `UPDATE ${this.runs} SET status = 'running', started_at = coalesce(started_at, $2)
       WHERE id = $1 AND ${ACTIVE} RETURNING ${RUN_COLUMNS}`,
      [runId, at],
    );
    return rows[0] ? toRun(rows[0]) : null;
  }

  async listItems(sourceId: string): Promise<SourceItem[]> {
    const { rows } = await this.db.query<{
      key: string;
      etag: string;
      document_id: string;
      changed_by_run: string | null;
      links: string[] | null;
    }>(
      `SELECT key, etag, document_id, changed_by_run, links FROM ${this.items} WHERE source_id = $1 ORDER BY key`,
      [sourceId],
    );
    return rows.map((r) => ({
      key: r.key,
      etag: r.etag,
      documentId: r.document_id,
      changedByRun: r.changed_by_run,
      links: r.links,
    }));
  }

  async recordItem(
    runId: string,
    sourceId: string,
    item: SourceItem,
    outcome: 'added' | 'updated',
  ): Promise<void> {
    const column = outcome === 'added' ? 'added' : 'updated';
    await this.db.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO ${this.items} (source_id, key, etag, document_id, changed_by_run, links) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (source_id, key) DO UPDATE SET etag = excluded.etag, document_id = excluded.document_id,
           changed_by_run = excluded.changed_by_run, links = excluded.links`,
        [
          sourceId,
          item.key,
          item.etag,
          item.documentId,
          item.changedByRun,
          item.links === null ? null : JSON.stringify(item.links),
        ],
      );
      await tx.query(`UPDATE ${this.runs} SET ${column} = ${column} + 1 WHERE id = $1`, [runId]);
    });
  }

  async forgetItem(runId: string | null, sourceId: string, key: string): Promise<void> {
    await this.db.query(
      `WITH gone AS (DELETE FROM ${this.items} WHERE source_id = $2 AND key = $3 RETURNING 1)
       UPDATE ${this.runs} SET deleted = deleted + 1 WHERE id = $1 AND EXISTS (SELECT 1 FROM gone)`,
      [runId, sourceId, key],
    );
  }

  async recordItemError(runId: string, error: RunError): Promise<void> {
    // One statement: the count and the list move together; the same item's error is counted once.
    await this.db.query(
      `UPDATE ${this.runs}
       SET failed = failed + 1,
           errors = CASE WHEN jsonb_array_length(errors) < $3 THEN errors || jsonb_build_array($2::jsonb) ELSE errors END
       WHERE id = $1 AND NOT errors @> jsonb_build_array(jsonb_build_object('item', ($2::jsonb)->'item'))`,
      [runId, JSON.stringify(error), RUN_ERRORS_KEPT],
    );
  }

  async finishRun(
    runId: string,
    end: { status: 'completed' | 'failed'; unchanged: number; finishedAt: Date; error?: RunError },
    event: (run: SourceRun) => unknown,
  ): Promise<SourceRun | null> {
    return this.db.transaction(async (tx) => {
      const { rows } = await tx.query<RunRow>(
        `UPDATE ${this.runs}
         SET status = $2, unchanged = $3, finished_at = $4, started_at = coalesce(started_at, $4),
             errors = CASE WHEN $5::jsonb IS NULL THEN errors
                           ELSE (SELECT coalesce(jsonb_agg(e ORDER BY n), '[]'::jsonb) FROM (
                                   SELECT e, n FROM jsonb_array_elements(jsonb_build_array($5::jsonb) || errors)
                                     WITH ORDINALITY AS x(e, n) WHERE n <= $6) AS kept) END
         WHERE id = $1 AND ${ACTIVE}
         RETURNING ${RUN_COLUMNS}`,
        [
          runId,
          end.status,
          end.unchanged,
          end.finishedAt,
          end.error ? JSON.stringify(end.error) : null,
          RUN_ERRORS_KEPT,
        ],
      );
      const row = rows[0];
      if (!row) return null;
      const run = toRun(row);
      const type = end.status === 'completed' ? 'source.sync.completed' : 'source.sync.failed';
      await tx.query(
        `INSERT INTO ${this.messages} (id, endpoint_id, org_id, event_type, document_id, payload, created_at, next_attempt_at)
         SELECT ${NEW_MESSAGE_ID}, e.id, e.org_id, $2, NULL, $3::jsonb, now(), now()
         FROM ${this.endpoints} e
         WHERE e.org_id = $1 AND e.disabled_at IS NULL AND position(',' || $2 || ',' in ',' || e.events || ',') > 0
         RETURNING pg_notify($4, '')`,
        [run.orgId, type, JSON.stringify(event(run)), outboxChannel(this.db)],
      );
      return run;
    });
  }

  async startDueRuns(now: Date, limit: number): Promise<Array<{ runId: string; orgId: string }>> {
    return this.db.transaction(async (tx) => {
      // SKIP LOCKED: of processes looking at once, each due source is decided by one of them.
      const { rows } = await tx.query<{ id: string; org_id: string; schedule_ms: string }>(
        `SELECT id, org_id, schedule_ms FROM ${this.sources}
         WHERE next_run_at IS NOT NULL AND deleted_at IS NULL AND next_run_at <= $1
         ORDER BY next_run_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
        [now, limit],
      );
      const started: Array<{ runId: string; orgId: string }> = [];
      for (const source of rows) {
        await tx.query(`UPDATE ${this.sources} SET next_run_at = $2 WHERE id = $1`, [
          source.id,
          new Date(now.getTime() + Number(source.schedule_ms)),
        ]);
        const runId = prefixedId('run');
        const created = await tx.query(
          `INSERT INTO ${this.runs} (id, source_id, org_id, status, created_at) VALUES ($1, $2, $3, 'queued', $4)
           ON CONFLICT (source_id) WHERE ${ACTIVE} DO NOTHING`,
          [runId, source.id, source.org_id, now],
        );
        if ((created.rowCount ?? 0) > 0) started.push({ runId, orgId: source.org_id });
      }
      return started;
    });
  }

  async replaceCredentials(id: string, sealed: string): Promise<void> {
    await this.db.query(`UPDATE ${this.sources} SET credentials = $2 WHERE id = $1`, [id, sealed]);
  }

  async purgeOrg(orgId: string): Promise<number> {
    return this.db.transaction(async (tx) => {
      await tx.query(
        `DELETE FROM ${this.items} WHERE source_id IN (SELECT id FROM ${this.sources} WHERE org_id = $1)`,
        [orgId],
      );
      await tx.query(`DELETE FROM ${this.runs} WHERE org_id = $1`, [orgId]);
      return (await tx.query(`DELETE FROM ${this.sources} WHERE org_id = $1`, [orgId])).rowCount ?? 0;
    });
  }

  async listActiveRuns(limit: number): Promise<Array<{ runId: string; orgId: string }>> {
    const { rows } = await this.db.query<{ runId: string; orgId: string }>(
      `SELECT id AS "runId", org_id AS "orgId" FROM ${this.runs} WHERE ${ACTIVE} ORDER BY created_at LIMIT $1`,
      [limit],
    );
    return rows;
  }

  async listDeletedWithoutRun(limit: number): Promise<Array<{ id: string; orgId: string }>> {
    const { rows } = await this.db.query<{ id: string; orgId: string }>(
      `SELECT s.id, s.org_id AS "orgId" FROM ${this.sources} s
       WHERE s.deleted_at IS NOT NULL
         AND NOT EXISTS (SELECT 1 FROM ${this.runs} r WHERE r.source_id = s.id AND r.${ACTIVE})
       ORDER BY s.deleted_at LIMIT $1`,
      [limit],
    );
    return rows;
  }
}

/** The run rows as the lease-queue engine's jobs (a run's job id is the run's id). */
export class PgSourceRunRows extends PgRowJobs {
  constructor(db: PgDatabase) {
    super(db, 'source_runs');
  }

  claim(owner: string, leaseMs: number): Promise<LeasedJob | null> {
    return this.claimOldest(owner, leaseMs);
  }
}
