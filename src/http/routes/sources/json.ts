// A source and a run as the API shows them: never the credentials, only whether there are some.
import type { Static } from '@sinclair/typebox';
import type { SourceRecord, SourceRun } from '../../../domain/sources.js';
import type { RunSchema, SourceSchema } from '../../../wire/index.js';

export function toSourceJson(source: SourceRecord): Static<typeof SourceSchema> {
  return {
    id: source.id,
    org_id: source.orgId,
    type: source.type,
    name: source.name,
    // The type's configuration as its schema accepted it, less the credentials.
    config: source.config as Static<typeof SourceSchema>['config'],
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

export function toRunJson(run: SourceRun): Static<typeof RunSchema> {
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
