// Sources, their items and runs on SQLite (SourceStore), and the run rows as a job table for the
// lease-queue engine (SqliteSourceRunRows): a run is queued by the INSERT that creates it. Times
// are the injected clock's, in ms.

import { prefixedId } from '../../domain/ids-and-hashes.js';
import { type Clock, systemClock } from '../../domain/ports.js';
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
import type { Database } from './database.js';
import { SqliteRowJobs } from './row-jobs.js';
import { StatementCache } from './statements.js';

interface SourceRow {
  id: string;
  org_id: string;
  type: string;
  name: string;
  config: string;
  credentials: string | null;
  schedule: string;
  schedule_ms: number | null;
  next_run_at: number | null;
  partition: string | null;
  metadata: string;
  access: string | null;
  created_at: number;
  updated_at: number;
  deleted_at: number | null;
}

interface RunRow {
  id: string;
  source_id: string;
  org_id: string;
  status: string;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
  added: number;
  updated: number;
  deleted: number;
  unchanged: number;
  failed: number;
  errors: string;
}

const date = (ms: number | null): Date | null => (ms === null ? null : new Date(ms));

function toSource(r: SourceRow): SourceRecord {
  return {
    id: r.id,
    orgId: r.org_id,
    type: r.type as SourceTypeName,
    name: r.name,
    config: JSON.parse(r.config) as Record<string, unknown>,
    sealedCredentials: r.credentials,
    schedule: r.schedule,
    scheduleMs: r.schedule_ms,
    nextRunAt: date(r.next_run_at),
    partition: r.partition,
    metadata: JSON.parse(r.metadata) as Record<string, string>,
    access: r.access === null ? null : (JSON.parse(r.access) as string[]),
    createdAt: new Date(r.created_at),
    updatedAt: new Date(r.updated_at),
    deletedAt: date(r.deleted_at),
  };
}

function toRun(r: RunRow): SourceRun {
  return {
    id: r.id,
    sourceId: r.source_id,
    orgId: r.org_id,
    status: r.status as SourceRun['status'],
    createdAt: new Date(r.created_at),
    startedAt: date(r.started_at),
    finishedAt: date(r.finished_at),
    added: r.added,
    updated: r.updated,
    deleted: r.deleted,
    unchanged: r.unchanged,
    failed: r.failed,
    errors: JSON.parse(r.errors) as RunError[],
  };
}

const RUN_COLUMNS =
  'id, source_id, org_id, status, created_at, started_at, finished_at, added, updated, deleted, unchanged, failed, errors';
const NEW_MESSAGE_ID = `'msg_' || lower(hex(randomblob(16)))`;

export class SqliteSourceStore implements SourceStore {
  private readonly sql: StatementCache;

  constructor(
    private readonly db: Database,
    private readonly clock: Clock = systemClock,
  ) {
    this.sql = new StatementCache(db);
  }

  async createSource(s: SourceRecord): Promise<void> {
    this.sql
      .get(
        `INSERT INTO sources (id, org_id, type, name, config, credentials, schedule, schedule_ms, next_run_at,
           partition, metadata, access, created_at, updated_at, deleted_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)`,
      )
      .run(
        s.id,
        s.orgId,
        s.type,
        s.name,
        JSON.stringify(s.config),
        s.sealedCredentials,
        s.schedule,
        s.scheduleMs,
        s.nextRunAt?.getTime() ?? null,
        s.partition,
        JSON.stringify(s.metadata),
        s.access === null ? null : JSON.stringify(s.access),
        s.createdAt.getTime(),
        s.updatedAt.getTime(),
      );
  }

  async getSource(orgId: string, id: string): Promise<SourceRecord | null> {
    const row = this.sql
      .get<[string, string], SourceRow>(
        'SELECT * FROM sources WHERE id = ? AND org_id = ? AND deleted_at IS NULL',
      )
      .get(id, orgId);
    return row ? toSource(row) : null;
  }

  async loadSource(id: string): Promise<SourceRecord | null> {
    const row = this.sql.get<[string], SourceRow>('SELECT * FROM sources WHERE id = ?').get(id);
    return row ? toSource(row) : null;
  }

  async listSources(orgId: string): Promise<SourceRecord[]> {
    return this.sql
      .get<[string], SourceRow>(
        'SELECT * FROM sources WHERE org_id = ? AND deleted_at IS NULL ORDER BY created_at, id',
      )
      .all(orgId)
      .map(toSource);
  }

  async updateSource(orgId: string, id: string, c: SourceChanges): Promise<SourceRecord | null> {
    const sets: string[] = ['updated_at = @updatedAt'];
    const params: Record<string, unknown> = { id, orgId, updatedAt: c.updatedAt.getTime() };
    if (c.name !== undefined) {
      sets.push('name = @name');
      params.name = c.name;
    }
    if (c.schedule !== undefined) {
      sets.push('schedule = @schedule, schedule_ms = @scheduleMs, next_run_at = @nextRunAt');
      params.schedule = c.schedule;
      params.scheduleMs = c.scheduleMs ?? null;
      params.nextRunAt = c.nextRunAt?.getTime() ?? null;
    }
    if (c.metadata !== undefined) {
      sets.push('metadata = @metadata');
      params.metadata = JSON.stringify(c.metadata);
    }
    if (c.config !== undefined) {
      sets.push('config = @config');
      params.config = JSON.stringify(c.config);
    }
    if (c.sealedCredentials !== undefined) {
      sets.push('credentials = @credentials');
      params.credentials = c.sealedCredentials;
    }
    const row = this.db
      .prepare<[Record<string, unknown>], SourceRow>(
        `UPDATE sources SET ${sets.join(', ')} WHERE id = @id AND org_id = @orgId AND deleted_at IS NULL RETURNING *`,
      )
      .get(params);
    return row ? toSource(row) : null;
  }

  async markDeleted(orgId: string, id: string, at: Date): Promise<boolean> {
    return (
      this.sql
        .get('UPDATE sources SET deleted_at = ? WHERE id = ? AND org_id = ? AND deleted_at IS NULL')
        .run(at.getTime(), id, orgId).changes > 0
    );
  }

  async removeSource(id: string): Promise<void> {
    this.db.transaction(() => {
      this.sql.get('DELETE FROM source_items WHERE source_id = ?').run(id);
      this.sql.get('DELETE FROM source_runs WHERE source_id = ?').run(id);
      this.sql.get('DELETE FROM sources WHERE id = ?').run(id);
    })();
  }

  async createRun(run: {
    id: string;
    sourceId: string;
    orgId: string;
    createdAt: Date;
  }): Promise<SourceRun | null> {
    const row = this.sql
      .get<[string, string, string, number, number], RunRow>(
        `INSERT INTO source_runs (id, source_id, org_id, status, created_at, run_at)
         VALUES (?, ?, ?, 'queued', ?, ?)
         ON CONFLICT (source_id) WHERE status IN ('queued', 'running') DO NOTHING
         RETURNING ${RUN_COLUMNS}`,
      )
      .get(run.id, run.sourceId, run.orgId, run.createdAt.getTime(), this.clock.now().getTime());
    return row ? toRun(row) : null;
  }

  async getRun(id: string): Promise<SourceRun | null> {
    const row = this.sql.get<[string], RunRow>(`SELECT ${RUN_COLUMNS} FROM source_runs WHERE id = ?`).get(id);
    return row ? toRun(row) : null;
  }

  async listRuns(sourceId: string, limit: number): Promise<SourceRun[]> {
    return this.sql
      .get<[string, number], RunRow>(
        `SELECT ${RUN_COLUMNS} FROM source_runs WHERE source_id = ? ORDER BY created_at DESC, id DESC LIMIT ?`,
      )
      .all(sourceId, limit)
      .map(toRun);
  }

  async markRunning(runId: string, at: Date): Promise<SourceRun | null> {
    const row = this.sql
      .get<[number, string], RunRow>(
        `UPDATE source_runs SET status = 'running', started_at = coalesce(started_at, ?)
         WHERE id = ? AND status IN ('queued', 'running') RETURNING ${RUN_COLUMNS}`,
      )
      .get(at.getTime(), runId);
    return row ? toRun(row) : null;
  }

  async listItems(sourceId: string): Promise<SourceItem[]> {
    return this.sql
      .get<
        [string],
        {
          key: string;
          etag: string;
          document_id: string;
          changed_by_run: string | null;
          links: string | null;
        }
      >(
        'SELECT key, etag, document_id, changed_by_run, links FROM source_items WHERE source_id = ? ORDER BY key',
      )
      .all(sourceId)
      .map((r) => ({
        key: r.key,
        etag: r.etag,
        documentId: r.document_id,
        changedByRun: r.changed_by_run,
        links: r.links === null ? null : (JSON.parse(r.links) as string[]),
      }));
  }

  async recordItem(
    runId: string,
    sourceId: string,
    item: SourceItem,
    outcome: 'added' | 'updated',
  ): Promise<void> {
    this.db.transaction(() => {
      this.sql
        .get(
          `INSERT INTO source_items (source_id, key, etag, document_id, changed_by_run, links) VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (source_id, key) DO UPDATE SET etag = excluded.etag, document_id = excluded.document_id,
             changed_by_run = excluded.changed_by_run, links = excluded.links`,
        )
        .run(
          sourceId,
          item.key,
          item.etag,
          item.documentId,
          item.changedByRun,
          item.links === null ? null : JSON.stringify(item.links),
        );
      const column = outcome === 'added' ? 'added' : 'updated';
      this.sql.get(`UPDATE source_runs SET ${column} = ${column} + 1 WHERE id = ?`).run(runId);
    })();
  }

  async forgetItem(runId: string | null, sourceId: string, key: string): Promise<void> {
    this.db.transaction(() => {
      const gone = this.sql
        .get('DELETE FROM source_items WHERE source_id = ? AND key = ?')
        .run(sourceId, key);
      if (gone.changes > 0 && runId !== null)
        this.sql.get('UPDATE source_runs SET deleted = deleted + 1 WHERE id = ?').run(runId);
    })();
  }

  async recordItemError(runId: string, error: RunError): Promise<void> {
    this.db.transaction(() => {
      const row = this.sql
        .get<[string], { errors: string }>('SELECT errors FROM source_runs WHERE id = ?')
        .get(runId);
      if (!row) return;
      const errors = JSON.parse(row.errors) as RunError[];
      // A resumed run meeting the same item's error again: counted once.
      if (errors.some((e) => e.item === error.item)) return;
      if (errors.length < RUN_ERRORS_KEPT) errors.push(error);
      this.sql
        .get('UPDATE source_runs SET failed = failed + 1, errors = ? WHERE id = ?')
        .run(JSON.stringify(errors), runId);
    })();
  }

  async finishRun(
    runId: string,
    end: { status: 'completed' | 'failed'; unchanged: number; finishedAt: Date; error?: RunError },
    event: (run: SourceRun) => unknown,
  ): Promise<SourceRun | null> {
    return this.db
      .transaction(() => {
        const current = this.sql
          .get<[string], RunRow>(
            `SELECT ${RUN_COLUMNS} FROM source_runs WHERE id = ? AND status IN ('queued', 'running')`,
          )
          .get(runId);
        if (!current) return null;
        const errors = JSON.parse(current.errors) as RunError[];
        if (end.error) errors.unshift(end.error);
        const row = this.sql
          .get<[string, number, number, string, string], RunRow>(
            `UPDATE source_runs SET status = ?, unchanged = ?, finished_at = ?, errors = ?,
               started_at = coalesce(started_at, finished_at)
             WHERE id = ? RETURNING ${RUN_COLUMNS}`,
          )
          .get(
            end.status,
            end.unchanged,
            end.finishedAt.getTime(),
            JSON.stringify(errors.slice(0, RUN_ERRORS_KEPT)),
            runId,
          );
        if (!row) return null;
        const run = toRun(row);
        const type = end.status === 'completed' ? 'source.sync.completed' : 'source.sync.failed';
        this.sql
          .get(
            `INSERT INTO webhook_messages (id, endpoint_id, org_id, event_type, document_id, payload, created_at, next_attempt_at)
             SELECT ${NEW_MESSAGE_ID}, e.id, e.org_id, @type, NULL, @payload, @now, @now
             FROM webhook_endpoints e
             WHERE e.org_id = @org AND e.disabled_at IS NULL AND instr(',' || e.events || ',', ',' || @type || ',') > 0`,
          )
          .run({
            type,
            payload: JSON.stringify(event(run)),
            now: this.clock.now().getTime(),
            org: run.orgId,
          });
        return run;
      })
      .immediate();
  }

  async startDueRuns(now: Date, limit: number): Promise<Array<{ runId: string; orgId: string }>> {
    const t = now.getTime();
    return this.db
      .transaction(() => {
        const due = this.sql
          .get<[number, number], { id: string; org_id: string; schedule_ms: number }>(
            `SELECT id, org_id, schedule_ms FROM sources
             WHERE next_run_at IS NOT NULL AND deleted_at IS NULL AND next_run_at <= ?
             ORDER BY next_run_at LIMIT ?`,
          )
          .all(t, limit);
        const started: Array<{ runId: string; orgId: string }> = [];
        for (const source of due) {
          this.sql
            .get('UPDATE sources SET next_run_at = ? WHERE id = ?')
            .run(t + source.schedule_ms, source.id);
          const runId = prefixedId('run');
          const created = this.sql
            .get(
              `INSERT INTO source_runs (id, source_id, org_id, status, created_at, run_at)
               VALUES (?, ?, ?, 'queued', ?, ?)
               ON CONFLICT (source_id) WHERE status IN ('queued', 'running') DO NOTHING`,
            )
            .run(runId, source.id, source.org_id, t, this.clock.now().getTime());
          if (created.changes > 0) started.push({ runId, orgId: source.org_id });
        }
        return started;
      })
      .immediate();
  }

  async replaceCredentials(id: string, sealed: string): Promise<void> {
    this.sql.get('UPDATE sources SET credentials = ? WHERE id = ?').run(sealed, id);
  }

  async purgeOrg(orgId: string): Promise<number> {
    return this.db.transaction(() => {
      const select = `SELECT id FROM sources WHERE org_id = ?`;
      this.sql.get(`DELETE FROM source_items WHERE source_id IN (${select})`).run(orgId);
      this.sql.get('DELETE FROM source_runs WHERE org_id = ?').run(orgId);
      return this.sql.get('DELETE FROM sources WHERE org_id = ?').run(orgId).changes;
    })();
  }

  async listActiveRuns(limit: number): Promise<Array<{ runId: string; orgId: string }>> {
    return this.sql
      .get<[number], { runId: string; orgId: string }>(
        `SELECT id AS runId, org_id AS orgId FROM source_runs WHERE status IN ('queued', 'running')
         ORDER BY created_at LIMIT ?`,
      )
      .all(limit);
  }

  async listDeletedWithoutRun(limit: number): Promise<Array<{ id: string; orgId: string }>> {
    return this.sql
      .get<[number], { id: string; orgId: string }>(
        `SELECT s.id, s.org_id AS orgId FROM sources s
         WHERE s.deleted_at IS NOT NULL
           AND NOT EXISTS (SELECT 1 FROM source_runs r WHERE r.source_id = s.id AND r.status IN ('queued', 'running'))
         ORDER BY s.deleted_at LIMIT ?`,
      )
      .all(limit);
  }
}

/** The run rows as the lease-queue engine's jobs (a run's job id is the run's id). */
export class SqliteSourceRunRows extends SqliteRowJobs {
  constructor(db: Database, clock: Clock = systemClock) {
    super(db, 'source_runs', clock);
  }

  claim(owner: string, leaseMs: number): LeasedJob | null {
    return this.claimOldest(owner, leaseMs);
  }
}
