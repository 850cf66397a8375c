// The document records: ingest's writes, the worker's progress, chunk reads, partitions, and the
// Idempotency-Key answers stored in the same transaction as the write they answer.
import type { DocumentAccess } from '../partitions.js';
import type {
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
  StoredChunk,
  VersionsAsRead,
} from '../types.js';

/** A page of a document's chunks and the version they are of. */
export interface ChunkPage {
  version: number;
  chunks: StoredChunk[];
}

/** Which Idempotency-Key of which org a write answers. */
export interface IdempotencyKeyRef {
  orgId: string;
  key: string;
}

/**
 * The response to an Idempotency-Key, stored as done in the same transaction as the write it
 * answers: a crash keeps both or neither, so a retry either replays the response or writes
 * afresh, never writes twice. `body` renders the response from what the write did.
 */
export interface IdempotentAnswer<T> extends IdempotencyKeyRef {
  status: number;
  body: (outcome: T) => string;
}

export interface DocumentStore {
  /**
   * Commits every row in one transaction, in order; afterwards each document is visible as
   * `queued`. A row with an external_id the org already has becomes that document's new version
   * instead, as startVersion starts one; concurrent writes of one new external_id create one
   * document and version it. `answer`, if given, is stored in the same transaction. A row whose
   * partition is marked for deletion (markPartitionDeleting) refuses the whole call with
   * partition_deleting and nothing is written; the mark is read in the write's own transaction.
   */
  createDocuments(
    docs: NewDocument[],
    answer?: IdempotentAnswer<StartedVersion[]>,
  ): Promise<StartedVersion[]>;
  /**
   * Starts a new version of the document: when a version is ready, the new one is pending (the
   * ready one keeps answering until the new one's saveIndex swaps them in one transaction);
   * otherwise it replaces the version in flight. Either way a job still running for an older
   * version writes nothing more, and the document's job is queued again (table queues: its row).
   * null when there is no such document for this org. `answer` is stored with the version.
   */
  startVersion(
    orgId: string,
    id: string,
    version: NewVersion,
    answer?: IdempotentAnswer<StartedVersion>,
  ): Promise<StartedVersion | null>;
  /**
   * startVersion, only if the document is still as the caller read it (`asRead`) and has no
   * version queued or processing; else nothing is written and the answer is 'in_flight'. The
   * check and the write are one atomic step: of concurrent calls on one reading, one starts.
   * `answer` is stored only with a version started.
   */
  startVersionIfSettled(
    orgId: string,
    id: string,
    version: NewVersion,
    asRead: VersionsAsRead,
    answer?: IdempotentAnswer<StartedVersion>,
  ): Promise<StartedVersion | 'in_flight' | null>;
  /** null when missing, deleted or owned by another org. */
  getDocument(orgId: string, id: string): Promise<DocumentRecord | null>;
  /** Newest first (createdAt desc, id desc). */
  listDocuments(q: ListQuery): Promise<DocumentRecord[]>;
  /**
   * Removes the document and its chunks in one transaction (they stop matching at once), without
   * waiting for a running index write: a backend whose write holds the row (PostgreSQL) marks it
   * deleted instead, so no read finds it from then on, and the write gives up at its next batch
   * and removes it (or finishDeletes does, if the write died). Returns the blob keys to remove (the current version's and a pending version's), or null when
   * there was no such document for this org, or (`seenBy` given) none that it may see when the
   * delete holds the row.
   */
  deleteDocument(
    orgId: string,
    id: string,
    seenBy?: DocumentAccess,
  ): Promise<{ blobKey: string | null; pendingBlobKey?: string | null } | null>;
  /**
   * Up to `limit` of the document's chunks with an index above `afterIndex`, in index order, with
   * the version they belong to, both read at one instant (a version swap is never seen half-way);
   * null when there is no such document for this org.
   */
  listChunks(
    orgId: string,
    id: string,
    page: { afterIndex: number; limit: number },
  ): Promise<ChunkPage | null>;
  /**
   * Replaces the document's metadata with `update(current)` in one transaction (no concurrent
   * change is lost; a throw from `update` changes nothing) and returns the record as it is now;
   * null when there is no such document for this org. Search filters see it at once.
   */
  updateMetadata(
    orgId: string,
    id: string,
    update: (current: Metadata) => Metadata,
    change?: DocumentChange,
  ): Promise<DocumentRecord | null>;

  // Worker side. Each returns false / null when the document no longer exists (deleted), or when
  // `version` (JobInput.version) is given and is no longer the version to produce. While a new
  // version is pending, status and error are the pending version's (the ready one is untouched).
  loadJobInput(id: string): Promise<JobInput | null>;
  /** status → processing, attempts += 1, error cleared. */
  markProcessing(id: string, version?: number): Promise<boolean>;
  /** status → queued again (a transient failure will be retried); keeps the error for display. */
  markRetrying(id: string, error: DocumentError, version?: number): Promise<boolean>;
  /**
   * One transaction: replaces the document's chunks and full-text rows, sets status `ready`
   * with counts, clears the stored input text and fetch URL. No-op (false) if deleted meanwhile
   * or if `result.version` is stale. For a pending version the same transaction makes it the
   * current one and takes the previous version's chunks out of search: no query sees both
   * versions, none sees neither.
   */
  saveIndex(id: string, result: IndexResult): Promise<boolean>;
  /** status → failed with the error; also forgets the stored input text and the full fetch URL. */
  markFailed(id: string, error: DocumentError, version?: number): Promise<boolean>;
  /**
   * URL ingest: the download ended and its bytes are in the blob store. Records the blob key,
   * the detected content type and size, and forgets the full URL (with its signature).
   */
  attachBlob(
    id: string,
    blob: { blobKey: string; contentType: string; bytes: number },
    version?: number,
  ): Promise<boolean>;
  /**
   * KEEP_ORIGINALS=false: the current version's file was deleted, so the record forgets its key
   * (only while it is still `blobKey`); /file then says it was not kept.
   */
  forgetBlob(id: string, blobKey: string): Promise<boolean>;
  /**
   * Removes every document of the org with its chunks (and, in SQLite, the org's number inside
   * the keyword index), as deleteDocument does for one: a job still queued or running for one of
   * them ends without writing anything. Resolves without waiting for running index writes: from
   * then on nothing of the org is found, and a document a write still held is removed when it
   * gives up (as for deleteDocument). The blob keys are the caller's to delete.
   */
  purgeOrg(orgId: string): Promise<{ documents: number; chunks: number; blobKeys: string[] }>;
  /**
   * Backends whose deletes can be left to a running write (deleteDocument): removes up to `limit`
   * documents marked deleted whose write is gone (its process died) and returns how many.
   */
  finishDeletes?(limit: number): Promise<number>;
  /**
   * Every partition of the org that holds a document or is marked for deletion, by name, with its
   * documents, their chunks and their original files' bytes.
   */
  listPartitions(orgId: string): Promise<PartitionSummary[]>;
  /**
   * Marks the org's partition for deletion (idempotent): ingest into it is refused until
   * unmarkPartition, and the purge (domain/partition-service.ts) deletes its documents. The mark
   * is also the purge's job: a row of the partition-purge queue, due at once.
   */
  markPartitionDeleting(orgId: string, name: string, at: Date): Promise<void>;
  /** The partition a purge job (the mark's id) is for; null once its mark is gone. */
  markedPartition(id: string): Promise<{ orgId: string; name: string } | null>;
  /** Drops the mark once the partition's documents are all gone. */
  unmarkPartitionDeleting(orgId: string, name: string): Promise<void>;
  /** Documents not yet ready or failed (queued + processing), across all orgs: for backpressure. */
  countPending(): Promise<number>;
  /**
   * Unfinished (queued or processing) documents last updated before `olderThan`, oldest first,
   * for the queue reconciler; `needsDownload` marks URL documents whose download has not finished.
   */
  listStaleQueued(olderThan: Date, limit: number): Promise<(JobRef & { needsDownload: boolean })[]>;
}

/** What DocumentStore.updateMetadata changes besides the metadata, and whom it answers. */
export interface DocumentChange {
  /** The new access list (null removes it); absent keeps it. */
  access?: string[] | null;
  /**
   * Changes nothing (null, as for a missing document) unless this access may see the document as
   * it is in the transaction: a concurrent change of its access list cannot slip between.
   */
  seenBy?: DocumentAccess;
}
