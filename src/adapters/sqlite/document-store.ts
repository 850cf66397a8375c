// DocumentStore on SQLite: document records and their lifecycle. Chunks and their words are the
// keyword index's, written through its writer port (SlicedKeywordIndexWriter, which start/ hands
// over) inside the records' transactions. The documents table also carries the job columns that
// SqliteTableQueue leases, so creating a document is enqueuing its job in the same transaction.
//
// The store hands each call to one of its parts under documents/, which share one statement cache,
// one group commit, the clock, the keyword writer and the outbox (documents/context.ts):
// record-writes.ts (new documents, versions, metadata), reads.ts (records, chunks, partitions),
// purges.ts (deletes and purges), index-writes.ts (saveIndex and the version swap) and
// job-writes.ts (a job's input and progress, what the reconciler counts).
import {
  type ChunkPage,
  type Clock,
  type DocumentChange,
  type DocumentStore,
  type IdempotentAnswer,
  type SlicedKeywordIndexWriter,
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
import type { Database } from './database.js';
import type { SqliteDocumentContext } from './documents/context.js';
import { IndexWrites } from './documents/index-writes.js';
import { JobWrites } from './documents/job-writes.js';
import { DocumentPurges } from './documents/purges.js';
import { DocumentReads } from './documents/reads.js';
import { RecordWrites } from './documents/record-writes.js';
import { GroupCommit } from './group-commit.js';
import { StatementCache } from './statements.js';
import { SqliteWebhookOutbox } from './webhook-store.js';

export { INDEX_SLICE_CHARS } from './documents/index-writes.js';

export interface SqliteDocumentStoreOptions {
  clock?: Clock;
  /**
   * The keyword index saveIndex writes, on the same database: its statements join this store's
   * transactions.
   */
  keyword: SlicedKeywordIndexWriter<void, 'sync'>;
  /** Writes webhook events in the transactions of the status changes (default: one on the same database). */
  outbox?: SqliteWebhookOutbox;
}

export class SqliteDocumentStore implements DocumentStore {
  private readonly records: RecordWrites;
  private readonly reads: DocumentReads;
  private readonly purges: DocumentPurges;
  private readonly index: IndexWrites;
  private readonly jobs: JobWrites;

  constructor(db: Database, opts: SqliteDocumentStoreOptions) {
    const clock = opts.clock ?? systemClock;
    const context: SqliteDocumentContext = {
      db,
      sql: new StatementCache(db),
      commits: new GroupCommit(db),
      now: () => clock.now().getTime(),
      keyword: opts.keyword,
      outbox: opts.outbox ?? new SqliteWebhookOutbox(db, clock),
    };
    this.records = new RecordWrites(context);
    this.reads = new DocumentReads(context);
    this.purges = new DocumentPurges(context);
    this.index = new IndexWrites(context, this.purges);
    this.jobs = new JobWrites(context);
    setImmediate(() => void this.purges.resumePurges());
  }

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

  getDocument(orgId: string, id: string): Promise<DocumentRecord | null> {
    return this.reads.getDocument(orgId, id);
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

  listDocuments(q: ListQuery): Promise<DocumentRecord[]> {
    return this.reads.listDocuments(q);
  }

  deleteDocument(
    orgId: string,
    id: string,
    seenBy?: DocumentAccess,
  ): Promise<{ blobKey: string | null; pendingBlobKey: string | null } | null> {
    return this.purges.deleteDocument(orgId, id, seenBy);
  }

  listChunks(
    orgId: string,
    id: string,
    page: { afterIndex: number; limit: number },
  ): Promise<ChunkPage | null> {
    return this.reads.listChunks(orgId, id, page);
  }

  updateMetadata(
    orgId: string,
    id: string,
    update: (current: Metadata) => Metadata,
    change?: DocumentChange,
  ): Promise<DocumentRecord | null> {
    return this.records.updateMetadata(orgId, id, update, change);
  }

  purgeOrg(orgId: string): Promise<{ documents: number; chunks: number; blobKeys: string[] }> {
    return this.purges.purgeOrg(orgId);
  }

  loadJobInput(id: string): Promise<JobInput | null> {
    return this.jobs.loadJobInput(id);
  }

  markProcessing(id: string, version?: number): Promise<boolean> {
    return this.jobs.markProcessing(id, version);
  }

  markRetrying(id: string, error: DocumentError, version?: number): Promise<boolean> {
    return this.jobs.markRetrying(id, error, version);
  }

  saveIndex(id: string, result: IndexResult): Promise<boolean> {
    return this.index.saveIndex(id, result);
  }

  markFailed(id: string, error: DocumentError, version?: number): Promise<boolean> {
    return this.jobs.markFailed(id, error, version);
  }

  attachBlob(
    id: string,
    blob: { blobKey: string; contentType: string; bytes: number },
    version?: number,
  ): Promise<boolean> {
    return this.jobs.attachBlob(id, blob, version);
  }

  forgetBlob(id: string, blobKey: string): Promise<boolean> {
    return this.jobs.forgetBlob(id, blobKey);
  }

  countPending(): Promise<number> {
    return this.jobs.countPending();
  }

  listStaleQueued(olderThan: Date, limit: number): Promise<(JobRef & { needsDownload: boolean })[]> {
    return this.jobs.listStaleQueued(olderThan, limit);
  }
}
