// A source and a run as the API shows them: never the credentials, only whether there are some.
import type { SourceRecord, SourceRun } from '../../../domain/sources.js';

export function toSourceJson(source: SourceRecord) {
  return {
    id: source.id,
    org_id: source.orgId,
    type: source.type,
    name: source.name,
    config: source.config,
    has_credentials: source.sealedCredentials !== null,
    schedule: source.schedule,
    next_run_at: source.nextRunAt?.toISOString() ?? null,
    partition: source.partition,
    metadata: source.metadata,
    access: source.access,
    created_at: source.createdAt.toISOString(),
    updated_at: source.updatedAt.toISOString(),
  };
}

export function toRunJson(run: SourceRun) {
  return {
    run_id: run.id,
    status: run.status,
    started_at: run.startedAt?.toISOString() ?? null,
    finished_at: run.finishedAt?.toISOString() ?? null,
    added: run.added,
    updated: run.updated,
    deleted: run.deleted,
    unchanged: run.unchanged,
    failed: run.failed,
    errors: run.errors,
  };
}

/** The `data` of a `source.sync.completed` / `source.sync.failed` webhook event. */
export function toRunEventJson(run: SourceRun) {
  return { source_id: run.sourceId, org_id: run.orgId, ...toRunJson(run) };
}
