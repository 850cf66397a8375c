// A source's run, as the job handler of the run queue: list the collection, compare each item's
// change token with the one recorded for it, and make the documents follow — a new item is
// ingested as an uploaded file is, a changed one becomes a new version of its document (same
// external_id), a gone one is deleted, an unchanged one costs its listing entry only. Every
// change is recorded with its item in one step, so a run cut off (kill -9) and run again resumes:
// what it did is already recorded, so nothing is ingested twice as a new document and no deletion
// is lost. A deleted source's run removes its documents instead.

import { basename } from 'node:path';
import type { DocumentService } from './documents.js';
import { ApiError } from './errors.js';
import type { IngestionService } from './ingestion.js';
import { ALL_PARTITIONS } from './partitions.js';
import type { Clock, JobContext } from './ports.js';
import type { SecretBox } from './secrets.js';
import {
  type ListedItem,
  openCredentials,
  type RunError,
  type SourceConnection,
  type SourceItem,
  type SourceRecord,
  type SourceRun,
  type SourceStore,
  type SourceType,
  type SourceTypeName,
} from './sources.js';

/** How many items between two looks at whether the source was deleted meanwhile. */
const DELETED_CHECK_EVERY = 50;
/**
 * Items read and staged at once: an item's time is mostly waiting (its bytes from the bucket,
 * its file staged, its rows committed), so one at a time leaves the server idle between items.
 */
const ITEMS_AT_ONCE = 4;

export interface SourceSyncDeps {
  store: SourceStore;
  types: ReadonlyMap<SourceTypeName, SourceType>;
  secrets: SecretBox | null;
  ingestion: IngestionService;
  documents: DocumentService;
  clock: Clock;
  /** The webhook payload of a finished run (the API's JSON of it). */
  renderRun: (run: SourceRun) => unknown;
  onFinished?: (run: SourceRun, source: SourceRecord) => void;
  /** An error that ended a run's last try outside its listing, for the log. */
  onEscaped?: (runId: string, error: unknown) => void;
}

/** Thrown when the source was deleted during the run: the run turns to removing its documents. */
class SourceDeleted extends Error {}

export class SourceSync {
  constructor(private readonly deps: SourceSyncDeps) {}

  readonly handle = async (job: JobContext): Promise<void> => {
    try {
      await this.attempt(job);
    } catch (error) {
      // Stopped (shutdown, lost lease), or tries left: the queue runs it again.
      if (job.signal.aborted || job.attempt < job.maxAttempts) throw error;
      this.deps.onEscaped?.(job.documentId, error);
      // The last try failed outside the listing (recording a step, removing a deleted source's
      // documents): the run ends failed rather than being revived again and again.
      await this.failRun(
        job.documentId,
        error instanceof ApiError
          ? runError(null, error)
          : {
              item: null,
              code: 'internal',
              message: `the run failed on each of its ${job.maxAttempts} tries; the server log has the reason`,
            },
      );
    }
  };

  private async attempt(job: JobContext): Promise<void> {
    const { store, clock } = this.deps;
    const run = await store.getRun(job.documentId);
    if (!run || run.status === 'completed' || run.status === 'failed') return;
    if (job.attempt > job.maxAttempts) {
      // Claimed again after its last try died with its process: nothing is left to retry.
      await this.failRun(run.id, {
        item: null,
        code: 'interrupted',
        message: 'the run was interrupted on each of its tries',
      });
      return;
    }
    const source = await store.loadSource(run.sourceId);
    if (!source) return;
    if (source.deletedAt !== null) {
      await this.removeSource(source, job.signal);
      return;
    }
    await store.markRunning(run.id, clock.now());
    try {
      const unchanged = await this.sync(source, run.id, job.signal);
      await this.finish(run.id, source, { status: 'completed', unchanged });
    } catch (error) {
      if (error instanceof SourceDeleted) {
        await this.removeSource(source, job.signal);
        return;
      }
      // Stopped (shutdown, lost lease): the next holder of the run resumes it.
      if (job.signal.aborted) throw error;
      // A listing that failed (unreachable, refused) may work on the next try; after the last,
      // the run fails with the reason.
      if (job.attempt < job.maxAttempts) throw error;
      await this.finish(run.id, source, { status: 'failed', unchanged: 0, error: runError(null, error) });
    }
  }

  /** Ends the run failed with `error` (when it is still under way). */
  private async failRun(runId: string, error: RunError): Promise<void> {
    const run = await this.deps.store.getRun(runId);
    if (!run || run.status === 'completed' || run.status === 'failed') return;
    const source = await this.deps.store.loadSource(run.sourceId);
    const finished = await this.deps.store.finishRun(
      runId,
      { status: 'failed', unchanged: run.unchanged, finishedAt: this.deps.clock.now(), error },
      this.deps.renderRun,
    );
    if (finished && source) this.deps.onFinished?.(finished, source);
  }

  private async finish(
    runId: string,
    source: SourceRecord,
    end: { status: 'completed' | 'failed'; unchanged: number; error?: RunError },
  ): Promise<void> {
    const finished = await this.deps.store.finishRun(
      runId,
      { ...end, finishedAt: this.deps.clock.now() },
      this.deps.renderRun,
    );
    if (finished) this.deps.onFinished?.(finished, source);
  }

  /** The run's changes; returns how many listed items it found unchanged. */
  private async sync(source: SourceRecord, runId: string, signal: AbortSignal): Promise<number> {
    const { store, types, secrets } = this.deps;
    const type = types.get(source.type);
    if (!type) throw new Error(`no source type ${source.type} in this process`);
    const { credentials, stale } = openCredentials(secrets, source.sealedCredentials);
    if (stale && credentials !== null && secrets !== null) {
      // Sealed under SECRETS_KEY_PREVIOUS: seal again under the current key.
      await store.replaceCredentials(source.id, secrets.seal(JSON.stringify(credentials)));
    }
    const connection = type.connect(source.config, credentials);
    try {
      const known = new Map((await store.listItems(source.id)).map((item) => [item.key, item]));
      // The whole listing first: a listing that fails half-way must delete nothing.
      const listed = new Map<string, ListedItem>();
      for await (const item of connection.list(signal, known)) listed.set(item.key, item);
      const unchanged = await this.ingestChanges(source, runId, listed, known, connection, signal);
      let seen = listed.size;
      for (const item of known.values()) {
        if (listed.has(item.key)) continue;
        signal.throwIfAborted();
        if (++seen % DELETED_CHECK_EVERY === 0) await this.checkNotDeleted(source.id);
        await this.deleteDocument(source.orgId, item.documentId);
        await store.forgetItem(runId, source.id, item.key);
      }
      return unchanged;
    } finally {
      connection.close();
    }
  }

  /** Ingests the new and changed items, several at once; returns how many were unchanged. */
  private async ingestChanges(
    source: SourceRecord,
    runId: string,
    listed: ReadonlyMap<string, ListedItem>,
    known: ReadonlyMap<string, SourceItem>,
    connection: SourceConnection,
    signal: AbortSignal,
  ): Promise<number> {
    const { store } = this.deps;
    const ingesting = new ItemsAtOnce(ITEMS_AT_ONCE);
    let unchanged = 0;
    let seen = 0;
    try {
      for (const [key, entry] of listed) {
        signal.throwIfAborted();
        ingesting.throwIfFailed();
        if (++seen % DELETED_CHECK_EVERY === 0) await this.checkNotDeleted(source.id);
        if (entry.failure !== undefined) {
          // Could not be read this time: an error of the run; its document stays as it is.
          await store.recordItemError(runId, { item: key, ...entry.failure });
          continue;
        }
        const item = known.get(key);
        if (item && item.etag === entry.etag) {
          // Changed by this same run before it was cut off: counted then already.
          if (item.changedByRun !== runId) unchanged += 1;
          continue;
        }
        await ingesting.add(() =>
          this.ingestItem(source, runId, entry, item ?? null, connection.open.bind(connection), signal),
        );
      }
    } finally {
      // Also when stopped early (the run aborted, the source deleted, an item failed): the items
      // under way finish before the connection closes under them, and before any deletion.
      await ingesting.settled();
    }
    ingesting.throwIfFailed();
    return unchanged;
  }

  private async ingestItem(
    source: SourceRecord,
    runId: string,
    listed: ListedItem,
    known: SourceItem | null,
    open: (key: string, signal: AbortSignal) => Promise<import('node:stream').Readable>,
    signal: AbortSignal,
  ): Promise<void> {
    const { ingestion, store } = this.deps;
    const metadata = { ...source.metadata, source_id: source.id, source_key: listed.key };
    let documentId: string;
    try {
      const stream = await open(listed.key, signal);
      // The same external_id: a changed item becomes a new version of its document, and an item
      // ingested by a run cut off before it recorded it is versioned, not duplicated.
      // Sources are made by keys that see every document (the routes refuse others); the
      // source's access list is each document's, set again on every new version.
      const ack = await ingestion.withStagedFile(
        { stream, filename: listed.filename ?? (basename(listed.key) || null) },
        async () => metadata,
        (staged) =>
          ingestion.commitFile(source.orgId, ALL_PARTITIONS, staged, {
            externalId: `${source.id}:${listed.key}`,
            ...(source.partition === null ? {} : { partition: source.partition }),
            access: source.access,
          }),
      );
      documentId = ack.document_ids[0] as string;
    } catch (error) {
      // Backpressure or an outage: the run stops here and is tried again later.
      if (signal.aborted || (error instanceof ApiError && error.status >= 500)) throw error;
      await store.recordItemError(runId, runError(listed.key, error));
      return;
    }
    await store.recordItem(
      runId,
      source.id,
      { key: listed.key, etag: listed.etag, documentId, changedByRun: runId, links: listed.links ?? null },
      known === null ? 'added' : 'updated',
    );
  }

  private async checkNotDeleted(sourceId: string): Promise<void> {
    const current = await this.deps.store.loadSource(sourceId);
    if (!current || current.deletedAt !== null) throw new SourceDeleted();
  }

  /** Deletes every document of a deleted source, then the source itself. */
  private async removeSource(source: SourceRecord, signal: AbortSignal): Promise<void> {
    const { store } = this.deps;
    for (const item of await store.listItems(source.id)) {
      signal.throwIfAborted();
      await this.deleteDocument(source.orgId, item.documentId);
      await store.forgetItem(null, source.id, item.key);
    }
    await store.removeSource(source.id);
  }

  private async deleteDocument(orgId: string, documentId: string): Promise<void> {
    try {
      await this.deps.documents.delete(orgId, ALL_PARTITIONS, documentId);
    } catch (error) {
      // Deleted already (by the API, or by this run before it was cut off).
      if (!(error instanceof ApiError && error.code === 'not_found')) throw error;
    }
  }
}

/** A per-item (or whole-run) error as a run records it: a stable code and a message without secrets. */
function runError(item: string | null, error: unknown): RunError {
  if (error instanceof ApiError) {
    const code =
      error.code === 'unsupported_media_type'
        ? 'unsupported_format'
        : error.code === 'payload_too_large'
          ? 'too_large'
          : error.code;
    return { item, code, message: error.detail };
  }
  const named = error as { name?: unknown; message?: unknown; $metadata?: { httpStatusCode?: number } };
  const status = named?.$metadata?.httpStatusCode;
  if (
    status === 403 ||
    status === 401 ||
    named?.name === 'AccessDenied' ||
    named?.name === 'InvalidAccessKeyId'
  ) {
    return { item, code: 'access_denied', message: 'the source refused access (check the credentials)' };
  }
  if (status === 404 || named?.name === 'NoSuchBucket' || named?.name === 'NoSuchKey') {
    return { item, code: 'not_found', message: item === null ? 'no such bucket' : 'the item disappeared' };
  }
  if (named?.name === 'SecretsKeyError') {
    return { item, code: 'secrets_unavailable', message: String(named.message) };
  }
  // The URL fetcher's failures (a refused address, a timeout, too many redirects) keep their code.
  if (named?.name === 'FetchError' && typeof (named as { code?: unknown }).code === 'string') {
    return { item, code: (named as { code: string }).code, message: String(named.message).slice(0, 300) };
  }
  return {
    item,
    code: 'source_unreachable',
    message:
      typeof named?.message === 'string' ? named.message.slice(0, 300) : 'the source could not be read',
  };
}

/**
 * Runs up to `limit` items at once. Each item is a step of its own (ingested, then recorded with
 * its item), so they may finish in any order: a run cut off resumes from what was recorded. The
 * first error (backpressure, an outage, the run stopped) ends the run once the items under way
 * have finished.
 */
class ItemsAtOnce {
  private readonly running = new Set<Promise<void>>();
  private failed: { error: unknown } | null = null;

  constructor(private readonly limit: number) {}

  /** Starts `step`, once fewer than `limit` are under way. */
  async add(step: () => Promise<void>): Promise<void> {
    while (this.running.size >= this.limit) await Promise.race(this.running);
    this.throwIfFailed();
    const running: Promise<void> = step()
      .catch((error: unknown) => {
        this.failed ??= { error };
      })
      .finally(() => this.running.delete(running));
    this.running.add(running);
  }

  throwIfFailed(): void {
    if (this.failed) throw this.failed.error;
  }

  /** Waits for the items under way; never throws. */
  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.race(this.running);
  }
}
