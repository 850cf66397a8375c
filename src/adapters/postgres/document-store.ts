// DocumentStore on PostgreSQL: document records and their lifecycle. Chunks are the keyword
// index's, written through its writer port (KeywordIndexWriter, which start/ hands over) inside
// the records' transaction. The documents table also carries the job columns PgTableQueue leases,
// so with that queue creating a document is enqueuing its job in the same statement.
//
// The store is a composition of its parts in documents/, named as the SQLite store's are, each
// given the shared pieces (PgDocumentContext, context.ts) in its constructor: record-writes.ts
// (new documents, versions, metadata), reads.ts (records, chunks, partitions and their deletion
// marks), purges.ts (a document, an org, the marked rows) and job-writes.ts (a job's input and
// status writes, saveIndex, the counts of unfinished work; SQLite keeps saveIndex apart, in
// index-writes.ts, for its sliced writes and version swap).
import {
  type ChunkPage,
  type Clock,
  type DocumentChange,
  type DocumentStore,
  type IdempotentAnswer,
  type KeywordIndexWriter,
  systemClock,
} from '../../domain/ports.js';
import type {
  DocumentAccess,
  DocumentError,
  DocumentRecord,
  IndexResult,
  JobInput,
  JobRef,
  ListQuery,
  Metadata,
  NewDocument,
  NewVersion,
  PartitionSummary,
  StartedVersion,
  VersionsAsRead,
} from '../../domain/types.js';
import type { PgDatabase, Queryable } from './database.js';
import type { PgDocumentContext } from './documents/context.js';
import { PgJobWrites } from './documents/job-writes.js';
import { PgDocumentPurges } from './documents/purges.js';
import { PgDocumentReads } from './documents/reads.js';
import { PgRecordWrites } from './documents/record-writes.js';
import { PgWebhookOutbox } from './webhook-store.js';

export interface PgDocumentStoreOptions {
  /**
   * Whether PgTableQueue runs the jobs (a new document is then a pending job). With BullMQ the job
   * columns start 'done' so the table queue's partial indexes stay empty; if the deployment later
   * drops Redis, the reconciler finds those queued documents and revives their rows as jobs.
   */
  tableQueue?: boolean;
  /** The keyword index saveIndex writes, on the same database, in this store's transactions. */
  keyword: KeywordIndexWriter<Queryable, 'async'>;
  /** Writes webhook events in the transactions of the status changes (default: one on the same database). */
  outbox?: PgWebhookOutbox;
}

export class PgDocumentStore implements DocumentStore {
  private readonly records: PgRecordWrites;
  private readonly reads: PgDocumentReads;
  private readonly purges: PgDocumentPurges;
  private readonly jobWrites: PgJobWrites;

  constructor(db: PgDatabase, clock: Clock = systemClock, opts: PgDocumentStoreOptions) {
    const context: PgDocumentContext = {
      db,
      clock,
      documents: db.table('documents'),
      initialJobState: (opts.tableQueue ?? true) ? 'pending' : 'done',
      keyword: opts.keyword,
      outbox: opts.outbox ?? new PgWebhookOutbox(db),
    };
    this.records = new PgRecordWrites(context);
    this.reads = new PgDocumentReads(context);
    this.purges = new PgDocumentPurges(context);
    this.jobWrites = new PgJobWrites(context, this.purges);
  }

  // Records and their versions (documents/record-writes.ts).

  createDocuments(
    docs: NewDocument[],
    answer?: IdempotentAnswer<StartedVersion[]>,
  ): Promise<StartedVersion[]> {
    return this.records.createDocuments(docs, answer);
  }

  startVersion(
    orgId: string,
    id: string,
    version: NewVersion,
    answer?: IdempotentAnswer<StartedVersion>,
  ): Promise<StartedVersion | null> {
    return this.records.startVersion(orgId, id, version, answer);
  }

  startVersionIfSettled(
    orgId: string,
    id: string,
    version: NewVersion,
    asRead: VersionsAsRead,
    answer?: IdempotentAnswer<StartedVersion>,
  ): Promise<StartedVersion | 'in_flight' | null> {
    return this.records.startVersionIfSettled(orgId, id, version, asRead, answer);
  }

  updateMetadata(
    orgId: string,
    id: string,
    update: (current: Metadata) => Metadata,
    change?: DocumentChange,
  ): Promise<DocumentRecord | null> {
    return this.records.updateMetadata(orgId, id, update, change);
  }

  // Reads, and the partitions' deletion marks (documents/reads.ts).

  getDocument(orgId: string, id: string): Promise<DocumentRecord | null> {
    return this.reads.getDocument(orgId, id);
  }

  listDocuments(q: ListQuery): Promise<DocumentRecord[]> {
    return this.reads.listDocuments(q);
  }

  listChunks(
    orgId: string,
    id: string,
    page: { afterIndex: number; limit: number },
  ): Promise<ChunkPage | null> {
    return this.reads.listChunks(orgId, id, page);
  }

  listPartitions(orgId: string): Promise<PartitionSummary[]> {
    return this.reads.listPartitions(orgId);
  }

  markPartitionDeleting(orgId: string, name: string, at: Date): Promise<void> {
    return this.reads.markPartitionDeleting(orgId, name, at);
  }

  markedPartition(id: string): Promise<{ orgId: string; name: string } | null> {
    return this.reads.markedPartition(id);
  }

  unmarkPartitionDeleting(orgId: string, name: string): Promise<void> {
    return this.reads.unmarkPartitionDeleting(orgId, name);
  }

  // Deletes and purges (documents/purges.ts).

  deleteDocument(
    orgId: string,
    id: string,
    seenBy?: DocumentAccess,
  ): Promise<{ blobKey: string | null; pendingBlobKey: string | null } | null> {
    return this.purges.deleteDocument(orgId, id, seenBy);
  }

  finishDeletes(limit: number): Promise<number> {
    return this.purges.finishDeletes(limit);
  }

  purgeOrg(orgId: string): Promise<{ documents: number; chunks: number; blobKeys: string[] }> {
    return this.purges.purgeOrg(orgId);
  }

  // A job's reads and writes of its document (documents/job-writes.ts).

  loadJobInput(id: string): Promise<JobInput | null> {
    return this.jobWrites.loadJobInput(id);
  }

  markProcessing(id: string, version?: number): Promise<boolean> {
    return this.jobWrites.markProcessing(id, version);
  }

  markRetrying(id: string, error: DocumentError, version?: number): Promise<boolean> {
    return this.jobWrites.markRetrying(id, error, version);
  }

  saveIndex(id: string, result: IndexResult): Promise<boolean> {
    return this.jobWrites.saveIndex(id, result);
  }

  markFailed(id: string, error: DocumentError, version?: number): Promise<boolean> {
    return this.jobWrites.markFailed(id, error, version);
  }

  attachBlob(
    id: string,
    blob: { blobKey: string; contentType: string; bytes: number },
    version?: number,
  ): Promise<boolean> {
    return this.jobWrites.attachBlob(id, blob, version);
  }

  forgetBlob(id: string, blobKey: string): Promise<boolean> {
    return this.jobWrites.forgetBlob(id, blobKey);
  }

  countPending(): Promise<number> {
    return this.jobWrites.countPending();
  }

  listStaleQueued(olderThan: Date, limit: number): Promise<(JobRef & { needsDownload: boolean })[]> {
    return this.jobWrites.listStaleQueued(olderThan, limit);
  }
}
