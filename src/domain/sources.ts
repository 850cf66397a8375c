// Sources: buckets (and, by the same port, other collections) kept in sync with an org's
// documents. This module holds the records, the two ports a source needs — the store of sources,
// their items and runs (SourceStore), and a source type (SourceType: list the items with a change
// token, open one) — and SourceService, which the routes call. The sync itself is
// source-sync.ts; each type lives in its own folder under src/adapters/sources/.
import type { Readable } from 'node:stream';
import { ApiError, ERRORS } from './errors.js';
import { prefixedId } from './ids-and-hashes.js';
import { cleanMetadata, METADATA_MAX_KEYS, type Metadata } from './metadata.js';
import { checkPartitionName } from './partitions.js';
import type { Clock, JobQueue } from './ports.js';
import { checkPrincipals } from './principals.js';
import { type SecretBox, SecretsKeyError } from './secrets.js';

export const SOURCE_TYPES = ['s3', 'web'] as const;
export type SourceTypeName = (typeof SOURCE_TYPES)[number];

export const SOURCE_NAME_MAX_LENGTH = 200;
/** The most pages (and linked documents) a `web` source may have. */
export const WEB_MAX_PAGES = 10_000;
/** The longest chain of links a `web` source follows from a start URL. */
export const WEB_MAX_DEPTH = 50;
/** `schedule` is "manual" or an ISO-8601 duration of at least this long. */
export const MIN_SCHEDULE_MS = 5 * 60_000;
/** Per-item errors a run keeps (the `failed` count goes on past it). */
export const RUN_ERRORS_KEPT = 100;
/** Metadata keys a sync sets on every document it makes; a source's own metadata may not use them. */
export const SOURCE_METADATA_KEYS = ['source_id', 'source_key'] as const;

export interface SourceRecord {
  /** `src_…` */
  id: string;
  orgId: string;
  type: SourceTypeName;
  name: string;
  /** The type's configuration without its credentials. */
  config: Record<string, unknown>;
  /** The credentials, sealed by SecretBox; null when the source has none. */
  sealedCredentials: string | null;
  /** "manual" or an ISO-8601 duration. */
  schedule: string;
  /** The schedule's interval; null for manual. */
  scheduleMs: number | null;
  /** When the schedule next starts a run; null for manual. */
  nextRunAt: Date | null;
  partition: string | null;
  metadata: Metadata;
  access: string[] | null;
  createdAt: Date;
  updatedAt: Date;
  /** Set by DELETE: the source is gone for the API, its documents are being removed. */
  deletedAt: Date | null;
}

export type RunStatus = 'queued' | 'running' | 'completed' | 'failed';

export interface RunError {
  /** The item's key; null for an error of the whole run (the listing failed). */
  item: string | null;
  code: string;
  message: string;
}

export interface SourceRun {
  /** `run_…` */
  id: string;
  sourceId: string;
  orgId: string;
  status: RunStatus;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  added: number;
  updated: number;
  deleted: number;
  unchanged: number;
  failed: number;
  errors: RunError[];
}

/** What the last run that saw an item recorded of it. */
export interface SourceItem {
  key: string;
  /** The change token the item had when its document was made from it (an ETag for s3). */
  etag: string;
  documentId: string;
  /** The run that last added or updated it: a resumed run does not count it again. */
  changedByRun: string | null;
  /**
   * What the type keeps of the item for the next run besides its token: a web page's links, so a
   * page answered "not modified" is still followed. null when the type keeps nothing.
   */
  links: string[] | null;
}

export interface SourceChanges {
  name?: string;
  schedule?: string;
  scheduleMs?: number | null;
  nextRunAt?: Date | null;
  metadata?: Metadata;
  config?: Record<string, unknown>;
  /** undefined: keep the stored credentials. */
  sealedCredentials?: string | null;
  updatedAt: Date;
}

/**
 * Sources, their items and their runs. A run row is also the run's job (the lease-queue engine's
 * JobRows over the same table), so a run is queued in the transaction that creates it.
 */
export interface SourceStore {
  createSource(source: SourceRecord): Promise<void>;
  /** null when missing, deleted, or another org's. */
  getSource(orgId: string, id: string): Promise<SourceRecord | null>;
  /** The worker's read: deleted sources too, any org. */
  loadSource(id: string): Promise<SourceRecord | null>;
  /** The org's sources that are not deleted, oldest first. */
  listSources(orgId: string): Promise<SourceRecord[]>;
  /** null when missing, deleted, or another org's. */
  updateSource(orgId: string, id: string, changes: SourceChanges): Promise<SourceRecord | null>;
  /** Marks the source deleted (gone for every read of the API); false when there was none. */
  markDeleted(orgId: string, id: string, at: Date): Promise<boolean>;
  /** Removes the source with its items and runs. */
  removeSource(id: string): Promise<void>;
  /**
   * Creates the run, queued, unless the source has a run queued or running (then null): one run
   * per source at a time, across every process.
   */
  createRun(run: { id: string; sourceId: string; orgId: string; createdAt: Date }): Promise<SourceRun | null>;
  getRun(id: string): Promise<SourceRun | null>;
  /** The source's runs, newest first. */
  listRuns(sourceId: string, limit: number): Promise<SourceRun[]>;
  /** queued → running with its start time (a resumed run keeps its first start and its counts). */
  markRunning(runId: string, at: Date): Promise<SourceRun | null>;
  listItems(sourceId: string): Promise<SourceItem[]>;
  /** One transaction: the item as the run made it, and the run's `added` or `updated` + 1. */
  recordItem(runId: string, sourceId: string, item: SourceItem, outcome: 'added' | 'updated'): Promise<void>;
  /** One transaction: the item forgotten, and the run's `deleted` + 1 (null: no run counts it). */
  forgetItem(runId: string | null, sourceId: string, key: string): Promise<void>;
  /** The run's `failed` + 1 and the error kept (up to RUN_ERRORS_KEPT), unless this item's error is kept already. */
  recordItemError(runId: string, error: RunError): Promise<void>;
  /**
   * Ends the run (completed or failed) with its unchanged count and, for a failed run, its error;
   * in the same transaction, a `source.sync.completed` or `source.sync.failed` message for every
   * webhook endpoint of the org subscribed to it, whose payload is `event(run as finished)`.
   * null when the run is gone or already finished.
   */
  finishRun(
    runId: string,
    end: { status: 'completed' | 'failed'; unchanged: number; finishedAt: Date; error?: RunError },
    event: (run: SourceRun) => unknown,
  ): Promise<SourceRun | null>;
  /**
   * Scheduled sources whose next run is due at `now`: each gets a run (unless one is under way)
   * and its next time moves on by its interval, decided once across every process.
   */
  startDueRuns(now: Date, limit: number): Promise<Array<{ runId: string; orgId: string }>>;
  /** Seals the credentials again (under a new key). */
  replaceCredentials(id: string, sealed: string): Promise<void>;
  /** Runs queued or running, oldest first (the queue revives any whose job ended without them). */
  listActiveRuns(limit: number): Promise<Array<{ runId: string; orgId: string }>>;
  /** Removes every source of the org with its items and runs (its documents are the caller's); how many. */
  purgeOrg(orgId: string): Promise<number>;
  /** Deleted sources whose removal has no run under way (a process died before it started one). */
  listDeletedWithoutRun(limit: number): Promise<Array<{ id: string; orgId: string }>>;
}

/** One item of a listing: its key and its change token. */
export interface ListedItem {
  key: string;
  etag: string;
  /** Kept with the item when its document is made (see SourceItem.links). */
  links?: string[];
  /** The name format detection sees (default: the key's last path segment). */
  filename?: string;
  /**
   * The item exists but could not be read this time (a server error, a timeout): the run records
   * the error and keeps its document as it is.
   */
  failure?: { code: string; message: string };
}

/** What the last runs recorded of an item, as a listing may use it (conditional requests). */
export interface KnownItem {
  etag: string;
  links: string[] | null;
}

/** A connection to one source's collection, made for one run. */
export interface SourceConnection {
  /**
   * Every item, page after page; a failure of the listing fails the run (nothing is deleted).
   * `known` is what earlier runs recorded, by key.
   */
  list(signal: AbortSignal, known: ReadonlyMap<string, KnownItem>): AsyncIterable<ListedItem>;
  /** The item's bytes. */
  open(key: string, signal: AbortSignal): Promise<Readable>;
  close(): void;
}

/** A source type: a module under src/adapters/sources/<type>/. */
export interface SourceType {
  name: SourceTypeName;
  /**
   * Splits a configuration the schema accepted into what is stored and shown, the credentials
   * (null: none) and the URLs it will connect to (screened by the URL-ingest address rules), each
   * with the JSON pointer of its field.
   * Throws ApiError for a configuration the schema cannot judge.
   */
  prepare(config: Record<string, unknown>): {
    config: Record<string, unknown>;
    credentials: Record<string, string> | null;
    urls: Array<{ url: string; pointer: string }>;
  };
  connect(config: Record<string, unknown>, credentials: Record<string, string> | null): SourceConnection;
}

export interface NewSourceInput {
  type: SourceTypeName;
  name: string;
  config: Record<string, unknown>;
  schedule?: string;
  partition?: string;
  metadata?: Metadata;
  access?: string[];
}

export interface SourcePatch {
  name?: string;
  config?: Record<string, unknown>;
  schedule?: string;
  metadata?: Metadata;
}

export interface SourceServiceDeps {
  store: SourceStore;
  /** Run jobs: the run rows' lease queue. */
  queue: JobQueue;
  types: ReadonlyMap<SourceTypeName, SourceType>;
  /** null while SECRETS_KEY is unset: sources with credentials are refused. */
  secrets: SecretBox | null;
  /** The URL-ingest address rules: the reason a URL may not be connected to, or null. */
  screenUrl: (url: string) => string | null;
  clock: Clock;
}

export class SourceService {
  constructor(private readonly deps: SourceServiceDeps) {}

  async create(orgId: string, input: NewSourceInput): Promise<SourceRecord> {
    const type = this.type(input.type);
    const prepared = this.prepare(type, input.config);
    const schedule = parseSchedule(input.schedule ?? 'manual', '/schedule');
    checkPartition(input.partition);
    checkAccess(input.access);
    const metadata = checkSourceMetadata(input.metadata ?? {});
    const now = this.deps.clock.now();
    const source: SourceRecord = {
      id: prefixedId('src'),
      orgId,
      type: input.type,
      name: checkName(input.name),
      config: prepared.config,
      sealedCredentials: prepared.sealed,
      schedule: schedule.text,
      scheduleMs: schedule.ms,
      nextRunAt: schedule.ms === null ? null : new Date(now.getTime() + schedule.ms),
      partition: input.partition ?? null,
      metadata,
      access: input.access ?? null,
      createdAt: now,
      updatedAt: now,
      deletedAt: null,
    };
    await this.deps.store.createSource(source);
    return source;
  }

  list(orgId: string): Promise<SourceRecord[]> {
    return this.deps.store.listSources(orgId);
  }

  async get(orgId: string, id: string): Promise<SourceRecord> {
    const source = await this.deps.store.getSource(orgId, id);
    if (!source) throw sourceNotFound(id);
    return source;
  }

  async update(orgId: string, id: string, patch: SourcePatch): Promise<SourceRecord> {
    const current = await this.get(orgId, id);
    const now = this.deps.clock.now();
    const changes: SourceChanges = { updatedAt: now };
    if (patch.name !== undefined) changes.name = checkName(patch.name);
    if (patch.metadata !== undefined) changes.metadata = checkSourceMetadata(patch.metadata);
    if (patch.schedule !== undefined) {
      const schedule = parseSchedule(patch.schedule, '/schedule');
      changes.schedule = schedule.text;
      changes.scheduleMs = schedule.ms;
      changes.nextRunAt = schedule.ms === null ? null : new Date(now.getTime() + schedule.ms);
    }
    if (patch.config !== undefined) {
      const prepared = this.prepare(this.type(current.type), patch.config);
      changes.config = prepared.config;
      // Credentials left out of a new configuration are kept.
      if (prepared.sealed !== null) changes.sealedCredentials = prepared.sealed;
    }
    const updated = await this.deps.store.updateSource(orgId, id, changes);
    if (!updated) throw sourceNotFound(id);
    return updated;
  }

  /**
   * The source disappears at once; its documents are deleted by a run in the background (or by
   * the run under way, which notices), which resumes after a crash like any run.
   */
  async delete(orgId: string, id: string): Promise<void> {
    const { store, clock } = this.deps;
    if (!(await store.markDeleted(orgId, id, clock.now()))) throw sourceNotFound(id);
    await this.queueRun(id, orgId);
  }

  /** Queues a run; 409 `sync_in_progress` while one is queued or running. */
  async sync(orgId: string, id: string): Promise<SourceRun> {
    await this.get(orgId, id);
    const run = await this.queueRun(id, orgId);
    if (!run) throw syncInProgress(id);
    return run;
  }

  async runs(orgId: string, id: string, limit: number): Promise<SourceRun[]> {
    await this.get(orgId, id);
    return this.deps.store.listRuns(id, limit);
  }

  /** Runs for scheduled sources that are due, and removals a crash left without a run. */
  async startDue(limit = 100): Promise<number> {
    const { store, queue, clock } = this.deps;
    const due = await store.startDueRuns(clock.now(), limit);
    let started = due.length;
    for (const removal of await store.listDeletedWithoutRun(limit)) {
      if (await this.queueRun(removal.id, removal.orgId, false)) started += 1;
    }
    // Due runs are pending jobs already (this only wakes consumers); a run whose job ended while
    // the run did not (its last try failed to record its end) is made pending again.
    const runs = [...due, ...(await store.listActiveRuns(limit))];
    if (runs.length > 0) await queue.enqueue(runs.map((r) => ({ documentId: r.runId, orgId: r.orgId })));
    return started;
  }

  private async queueRun(sourceId: string, orgId: string, wake = true): Promise<SourceRun | null> {
    const run = await this.deps.store.createRun({
      id: prefixedId('run'),
      sourceId,
      orgId,
      createdAt: this.deps.clock.now(),
    });
    if (run && wake) await this.deps.queue.enqueue([{ documentId: run.id, orgId }], { created: true });
    return run;
  }

  private type(name: SourceTypeName): SourceType {
    const type = this.deps.types.get(name);
    if (!type) {
      throw ERRORS.invalid(`Unknown source type ${JSON.stringify(name)}.`, [
        { pointer: '/type', message: `one of ${[...this.deps.types.keys()].join(', ')}` },
      ]);
    }
    return type;
  }

  private prepare(type: SourceType, raw: Record<string, unknown>) {
    const prepared = type.prepare(raw);
    for (const { url, pointer } of prepared.urls) {
      const reason = this.deps.screenUrl(url);
      if (reason !== null) {
        const field = pointer.replace(/^\/config\//, '').replaceAll('/', '.');
        throw ERRORS.invalid(`config.${field} may not be connected to: ${reason}.`, [
          { pointer, message: reason },
        ]);
      }
    }
    let sealed: string | null = null;
    if (prepared.credentials !== null) {
      if (this.deps.secrets === null) {
        throw new ApiError(
          'secrets_key_unset',
          'This server cannot store credentials: it runs without SECRETS_KEY. Set SECRETS_KEY (32 bytes, hex or base64) on the server, or leave the credentials out to use its own (e.g. an instance role).',
        );
      }
      sealed = this.deps.secrets.seal(JSON.stringify(prepared.credentials));
    }
    return { config: prepared.config, sealed };
  }
}

/** A source's credentials, opened; null when it has none. */
export function openCredentials(
  secrets: SecretBox | null,
  sealed: string | null,
): { credentials: Record<string, string> | null; stale: boolean } {
  if (sealed === null) return { credentials: null, stale: false };
  if (secrets === null) {
    throw new SecretsKeyError('the source has credentials but the server runs without SECRETS_KEY');
  }
  const { plain, stale } = secrets.open(sealed);
  return { credentials: JSON.parse(plain) as Record<string, string>, stale };
}

export function sourceNotFound(id: string): ApiError {
  return new ApiError('not_found', `No source with id ${id}.`);
}

function syncInProgress(id: string): ApiError {
  return new ApiError(
    'sync_in_progress',
    `Source ${id} has a run queued or running; GET /v1/sources/${id}/runs shows it. Sync again once it has finished.`,
  );
}

function checkName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === '' || trimmed.length > SOURCE_NAME_MAX_LENGTH) {
    throw ERRORS.invalid(`A source's name is 1 to ${SOURCE_NAME_MAX_LENGTH} characters.`, [
      { pointer: '/name', message: `1 to ${SOURCE_NAME_MAX_LENGTH} characters` },
    ]);
  }
  return trimmed;
}

function checkPartition(partition: string | undefined): void {
  if (partition !== undefined) checkPartitionName(partition, '/partition');
}

function checkAccess(access: string[] | undefined): void {
  if (access !== undefined) checkPrincipals(access, '/access', 1);
}

function checkSourceMetadata(metadata: Metadata): Metadata {
  const cleaned = cleanMetadata(metadata);
  for (const key of SOURCE_METADATA_KEYS) {
    if (key in cleaned) {
      throw ERRORS.invalid(`Metadata key ${key} is set by the sync on every document of the source.`, [
        { pointer: `/metadata/${key}`, message: 'reserved for the sync' },
      ]);
    }
  }
  // The sync adds its own keys to every document.
  const room = METADATA_MAX_KEYS - SOURCE_METADATA_KEYS.length;
  if (Object.keys(cleaned).length > room) {
    throw ERRORS.invalid(`A source's metadata has at most ${room} keys.`, [
      { pointer: '/metadata', message: `at most ${room} keys` },
    ]);
  }
  return cleaned;
}

const DURATION = /^P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/;

/**
 * "manual", or an ISO-8601 duration in weeks, days, hours, minutes and seconds (`PT1H`, `P1D`,
 * `PT90M`) of at least PT5M. Years and months are refused: their length varies.
 */
export function parseSchedule(text: string, pointer: string): { text: string; ms: number | null } {
  if (text === 'manual') return { text, ms: null };
  const match = DURATION.exec(text);
  const invalid = (message: string) =>
    ERRORS.invalid(`schedule ${JSON.stringify(text)}: ${message}.`, [{ pointer, message }]);
  if (!match || text === 'P' || text.endsWith('T')) {
    throw invalid(
      '"manual" or an ISO-8601 duration such as PT1H or P1D (weeks, days, hours, minutes, seconds)',
    );
  }
  const [weeks, days, hours, minutes, seconds] = match.slice(1).map((n) => Number(n ?? 0)) as [
    number,
    number,
    number,
    number,
    number,
  ];
  const ms = ((((weeks * 7 + days) * 24 + hours) * 60 + minutes) * 60 + seconds) * 1000;
  if (ms < MIN_SCHEDULE_MS) throw invalid('at least PT5M');
  if (!Number.isSafeInteger(ms)) throw invalid('too long');
  return { text, ms };
}
