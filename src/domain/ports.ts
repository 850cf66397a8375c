// The ports: every side effect the domain needs, as interfaces. Adapters under src/adapters
// implement them (SQLite and PostgreSQL stores, table-backed and BullMQ queues, memory and Redis
// limiters, filesystem, PostgreSQL and S3 blob stores); test/contract runs one conformance suite per port.
import type { Readable } from 'node:stream';
import type { Filter } from './filter.js';
import type { FormatId } from './formats.js';
import { newUuid } from './ids-and-hashes.js';
import type { DocumentAccess } from './partitions.js';
import type { SearchLanguage } from './search-words.js';
import type {
  ApiKeyRecord,
  ChunkRow,
  ChunkStream,
  DocumentError,
  DocumentRecord,
  IndexResult,
  JobInput,
  JobRef,
  KeywordHit,
  ListQuery,
  Metadata,
  NewDocument,
  NewVersion,
  Org,
  PartitionSummary,
  SearchQuery,
  StartedVersion,
  StoredChunk,
  VersionsAsRead,
} from './types.js';

export interface Clock {
  now(): Date;
}

/** The clock of the machine; tests hand a store or a service a fixed one instead. */
export const systemClock: Clock = { now: () => new Date() };

/** A page of organisations: newest first, continuing strictly after `after`. */
export interface OrgListQuery {
  limit: number;
  after: { createdAt: Date; id: string } | null;
}

export interface OrgStore {
  createOrg(org: Org): Promise<void>;
  getOrg(id: string): Promise<Org | null>;
  /** Newest first (createdAt desc, id desc). */
  listOrgs(q: OrgListQuery): Promise<Org[]>;
  countOrgs(): Promise<number>;
  /** Sets the given fields; the org as it is afterwards, or null when it does not exist. */
  updateOrg(orgId: string, changes: { name?: string; rateLimitRpm?: number }): Promise<Org | null>;
  createKey(key: ApiKeyRecord): Promise<void>;
  getKey(keyId: string): Promise<ApiKeyRecord | null>;
  /** Every key of the org, revoked and expired ones included, oldest first. */
  listKeys(orgId: string): Promise<ApiKeyRecord[]>;
  /**
   * The org of a key that exists and is not revoked (expiry is the caller's to check: the store
   * has no clock).
   */
  findActiveKey(hash: string): Promise<{ key: ApiKeyRecord; org: Org } | null>;
  /** false when the key does not exist or was already revoked. */
  revokeKey(keyId: string, at: Date): Promise<boolean>;
  /** Revokes every active key of the org at once; how many were revoked. */
  revokeKeys(orgId: string, at: Date): Promise<number>;
  /** Deletes the org and all its keys; how many keys were deleted (0 when there was no org). */
  purgeOrg(orgId: string): Promise<{ keys: number }>;
}

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

/**
 * The keyword index over chunks. It finds only chunks of `ready` documents of the query's org.
 * A keyword index lives in the records' database: its writes are part of DocumentStore.saveIndex
 * and deleteDocument (a document turns ready with its last chunk, and stops matching the moment
 * it is deleted), made through KeywordIndexWriter inside the record store's transactions, so the
 * port the domain sees is the search. docs/ARCHITECTURE.md has why.
 */
export interface KeywordIndex {
  /**
   * BM25 hits, best first, each scored as a fraction of the most its query could score
   * (KeywordHit); each query ranks at most the index's row budget of matching chunks (planned by
   * domain/search-plan.ts), filters and document_ids choosing inside it.
   */
  search(q: SearchQuery): Promise<KeywordHit[]>;
  /**
   * Records the configured analysis as the index's own when the index has none yet (a new
   * database); every process calls it at start.
   */
  adoptAnalysis(): Promise<void>;
  /** Which analysis the index's words were written with, and any rewrite under way. */
  analysisState(): Promise<AnalysisState>;
  /**
   * Rewrites the words of up to `limit` chunks, the next ones in the index's order, with the
   * configured analysis, in one short transaction; its progress is kept, so a rewrite cut off
   * resumes where it stopped. `done` once no chunk is left, when the configured analysis becomes
   * the index's own. Searches run meanwhile find words written either way.
   */
  reindexBatch(limit: number): Promise<{ rewritten: number; done: boolean }>;
}

/** The analyses of a keyword index (domain/search-words.ts). */
export interface AnalysisState {
  /** SEARCH_LANGUAGE of this process. */
  configured: SearchLanguage;
  /**
   * The analysis the index's words were written with: null before any process recorded one,
   * 'legacy' for PostgreSQL chunks written before docindex computed the words itself.
   */
  written: SearchLanguage | 'legacy' | null;
  /** Whether the index's words must be rewritten (`docindex reindex`) for `configured`. */
  reindexNeeded: boolean;
}

/**
 * How a record store's transaction runs a step: `sync` where the backend's transactions are
 * synchronous (better-sqlite3 runs one as a single call, with nothing awaited inside), `async`
 * where each statement is awaited (node-postgres).
 */
export type TxMode = 'sync' | 'async';

/** What a step inside a transaction of that mode gives back: the value, or a promise of it. */
export type TxResult<Mode extends TxMode, T> = Mode extends 'sync' ? T : Promise<T>;

/**
 * The keyword index's writes, which a record store makes inside its own transactions (a document
 * turns ready with its last chunk, and stops matching the moment it is deleted): each call joins
 * the caller's transaction `tx`, whose type is the backend's (a PostgreSQL client; `void` on
 * SQLite, whose statements join the connection's open transaction, so there is nothing to pass).
 * start/ hands the record store the index as this port, so a store never names the index behind
 * it; the domain never sees it.
 */
export interface KeywordIndexWriter<Tx, Mode extends TxMode> {
  /**
   * Writes chunks of the document with their words (those the pipeline computed, else the index's
   * analysis of the text). They are found once the document is `ready`.
   */
  writeChunks(documentId: string, orgId: string, chunks: readonly ChunkRow[], tx: Tx): TxResult<Mode, void>;
  /** Deletes every chunk of the document. */
  deleteChunks(documentId: string, tx: Tx): TxResult<Mode, void>;
  /** Up to `limit` of the document's chunks after index `afterIndex`, in index order. */
  readChunks(documentId: string, afterIndex: number, limit: number, tx: Tx): TxResult<Mode, StoredChunk[]>;
  /**
   * Records that the document's org has documents analysed in this language (search_languages,
   * which the org's queries are read with).
   */
  noteLanguage(documentId: string, language: string | null, tx: Tx): TxResult<Mode, void>;
  /**
   * Forgets what the index keeps of a purged org (its key inside terms, its languages), once
   * none of its chunks are left.
   */
  forgetOrg(orgId: string, tx: Tx): TxResult<Mode, void>;
}

/**
 * A keyword index whose record store writes and removes a large document a slice at a time, each
 * slice a transaction of its own (SQLite: one long transaction would hold the event loop), and
 * moves chunk rows from one document row to another instead of writing them again.
 */
export interface SlicedKeywordIndexWriter<Tx, Mode extends TxMode> extends KeywordIndexWriter<Tx, Mode> {
  /** How many chunks the document has, counted up to `cap`. */
  countChunks(documentId: string, cap: number, tx: Tx): TxResult<Mode, number>;
  /** Deletes up to `limit` of the document's chunks; how many it deleted. */
  deleteChunkSlice(documentId: string, limit: number, tx: Tx): TxResult<Mode, number>;
  /** Hands every chunk of document `from` to document `to`, their words as they were written. */
  moveChunks(from: string, to: string, tx: Tx): TxResult<Mode, void>;
}

/**
 * How many matching chunks one query may rank, in every store: words are taken rarest first while
 * their matches fit, so a common word cannot make a query rank an org's every chunk. Orgs with
 * fewer matches than this get exact ranking over every query word. Ranking costs per matching
 * row (SQLite's bm25(), PostgreSQL's BM25 reading each tsvector once from TOAST) set the size:
 * a budget's worth of rows keeps a query's ranking within its latency goal (bench/RESULTS.md,
 * section 4).
 */
export const DEFAULT_SEARCH_ROW_BUDGET = 20_000;

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

export interface UsageStore {
  /**
   * Adds 1 to the org's count for `day` (YYYY-MM-DD, UTC) and, given a `bucket` (domain/usage.ts
   * usageBucket: the partitions a query was restricted to), to that bucket's count too, in one
   * atomic step.
   */
  increment(orgId: string, day: string, bucket?: string | null): Promise<void>;
  /**
   * Counts for days in [fromDay, toDay] inclusive; days without queries may be absent. Given
   * `buckets`, the sum of those buckets' counts instead of the org's total.
   */
  countsBetween(
    orgId: string,
    fromDay: string,
    toDay: string,
    buckets?: readonly string[],
  ): Promise<Map<string, number>>;
  /** Each bucket's count over the days in [fromDay, toDay]; buckets without queries may be absent. */
  bucketTotals(orgId: string, fromDay: string, toDay: string): Promise<Map<string, number>>;
  /** Forgets every count of the org; how many day rows (of the org's totals) there were. */
  purgeOrg(orgId: string): Promise<number>;
}

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the current window ends (≥ 1). */
  resetSeconds: number;
}

export interface RateLimiter {
  /** Counts one request for `key` against `limit` requests per 60 s window. */
  consume(key: string, limit: number): Promise<RateDecision>;
  close(): Promise<void>;
}

export interface JobContext {
  documentId: string;
  orgId: string;
  /** 1 for the first try. */
  attempt: number;
  maxAttempts: number;
  /** Aborted when the job is being abandoned (shutdown or lost lease). */
  signal: AbortSignal;
  /** The trace the job was queued in (W3C traceparent), when it was queued in one. */
  traceparent?: string | null;
  /** When the job was queued or became due again (milliseconds since the epoch), where the queue knows. */
  queuedAt?: number | null;
}

/**
 * Resolves when the job is done (the handler records success or failure on the document itself).
 * Throwing asks the queue to retry later with backoff (only while attempt < maxAttempts).
 */
export type JobHandler = (job: JobContext) => Promise<void>;

export interface JobConsumer {
  /** Stops taking jobs and waits for running ones (up to the queue's grace time). */
  stop(): Promise<void>;
}

export interface ConsumeOptions {
  /** Jobs run at once by this consumer. */
  concurrency: number;
  /**
   * Of those, how many one org may hold (default: all). Below `concurrency`, a slot stays free for
   * another org's document while one org has a backlog, so it starts without waiting for one of
   * the first org's jobs to end. The table queues honour it; BullMQ has no way to pass a job over
   * and ignores it (docs/SCALING.md).
   */
  maxPerOrg?: number;
}

export interface JobQueue {
  /**
   * Idempotent: a document already queued is not queued twice. `created`: the documents were
   * created just now by DocumentStore.createDocuments, with nothing run yet; a queue whose jobs
   * live in the document rows then has nothing to write and only wakes its consumers.
   */
  enqueue(jobs: JobRef[], opts?: { created?: boolean }): Promise<void>;
  /**
   * Jobs are taken fairly between orgs: the next job is of the org with the fewest running, then
   * the oldest; one org's backlog does not hold another org's document back.
   */
  consume(handler: JobHandler, opts: ConsumeOptions): JobConsumer;
  /** Whether a job for this document is known to the queue (waiting, delayed or active). */
  has(documentId: string): Promise<boolean>;
  close(): Promise<void>;
}

export interface BlobWrite {
  key: string;
  bytes: number;
  /** hex SHA-256 of the bytes written. */
  sha256: string;
}

/**
 * Uploaded and downloaded files. Streams in and out: no adapter ever holds a whole file in memory.
 * Keys come from newBlobKey(); an adapter may refuse any other shape of key.
 */
export interface BlobStore {
  /**
   * Streams `source` into a new blob under `key`. The blob appears complete or not at all: if the
   * stream fails or passes maxBytes (BlobTooLargeError), nothing is left behind.
   */
  put(key: string, source: Readable, opts?: { maxBytes?: number }): Promise<BlobWrite>;
  /** The blob's bytes; BlobNotFoundError when there is no blob under `key`. */
  openRead(key: string): Promise<Readable>;
  /**
   * Runs `fn` with the path of a local file holding the blob, for parsers that need random
   * access; the file stays valid until `fn` settles. BlobNotFoundError when there is no blob.
   */
  withLocalFile<T>(key: string, fn: (path: string) => Promise<T>): Promise<T>;
  /** Idempotent. */
  delete(key: string): Promise<void>;
}

/** A fresh blob key: `<2 hex>/<uuid v4>` (the two characters shard large folders). */
export function newBlobKey(): string {
  const id = newUuid();
  return `${id.slice(0, 2)}/${id}`;
}

/** Thrown by BlobStore.openRead and withLocalFile when there is no blob under the key. */
export class BlobNotFoundError extends Error {
  constructor(readonly key: string) {
    super('no blob under this key');
    this.name = 'BlobNotFoundError';
  }
}

/** Thrown by BlobStore.put when the source exceeds maxBytes; nothing is left behind. */
export class BlobTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`blob exceeds ${maxBytes} bytes`);
    this.name = 'BlobTooLargeError';
  }
}

/**
 * Idempotency-Key records, scoped to an org. `claim` is atomic: exactly one of several concurrent
 * requests with the same key gets null (it owns the key); the others get the record it made.
 */
export interface IdempotencyStore {
  /**
   * Records the key as in flight, unless a live record exists: then returns that record. A record
   * older than `ttlMs`, or in flight for longer than `staleInFlightMs` (its request died), is
   * replaced.
   */
  claim(
    record: { orgId: string; key: string; fingerprint: string; createdAt: Date },
    limits: { ttlMs: number; staleInFlightMs: number },
  ): Promise<IdempotencyRecord | null>;
  /** Stores the response to replay. */
  complete(orgId: string, key: string, status: number, body: string): Promise<void>;
  /** Forgets an in-flight key whose request failed, so the client may retry with it. */
  release(orgId: string, key: string): Promise<void>;
  /** Forgets every record of the org, in flight or done; how many there were. */
  purgeOrg(orgId: string): Promise<number>;
}

export interface IdempotencyRecord {
  orgId: string;
  key: string;
  /** SHA-256 of the operation + request body. */
  fingerprint: string;
  state: 'in_flight' | 'done';
  status: number | null;
  body: string | null;
  createdAt: Date;
}

// --- The document pipeline -------------------------------------------------------------------------

/** An upload's format as its bytes and name tell it: a media type, or why it is refused. */
export type SniffedFormat = { ok: true; contentType: string } | { ok: false; detail: string };

/** A URL submitted for download: how it may be shown (no query string), or why it is refused. */
export type ScreenedUrl = { ok: true; displayUrl: string } | { ok: false; reason: string };

/** A URL's bytes, downloaded into the blob store, and what was learnt of them. */
export interface DownloadedUrl {
  blobKey: string;
  bytes: number;
  contentType: string;
}

/** How a document's text is cut into chunks; a paged file's pages come from its extraction. */
export interface IndexOptions {
  chunkSize: number;
  chunkOverlap: number;
  /** Markdown headings start new chunks. */
  markdown?: boolean;
  /** The document's language as given at ingest (the analysis of its words); null: detected. */
  language?: string | null;
}

/**
 * The document pipeline (pipeline/) as the services see it. Ingest asks it what an upload is and
 * whether a URL may be fetched (on the API's event loop, no parser loaded); the worker's
 * processor asks it to download a URL and to turn a stored file or a text into chunks, which
 * its worker threads make. Each operation has this one name from the caller to the thread.
 */
export interface DocumentPipeline {
  /** An upload's format, from its first bytes and its name. */
  sniffFormat(file: { path: string; filename: string | null }): Promise<SniffedFormat>;
  /** Whether a submitted URL may be fetched at all (its address is checked again on connect). */
  screenUrl(raw: string): ScreenedUrl;
  /**
   * A URL's bytes into the blob store, with its format checked from them; fails with the
   * document's failure code (a PipelineError).
   */
  downloadUrl(url: string, signal: AbortSignal): Promise<DownloadedUrl>;
  /**
   * A stored file's text extracted and chunked, with each chunk's search words and the text's
   * SHA-256; the text stays in the thread that read it. `orgId` (here and in indexText): waiting
   * documents take turns between orgs.
   */
  indexFile(
    path: string,
    format: FormatId,
    options: IndexOptions,
    signal: AbortSignal,
    orgId: string,
  ): ChunkStream;
  /** A text chunked, with each chunk's search words and the text's SHA-256. */
  indexText(text: string, options: IndexOptions, signal: AbortSignal, orgId: string): ChunkStream;
}

// --- Embeddings ----------------------------------------------------------------------------------

/** Which model made a vector: vectors of different profiles are never compared. */
export interface EmbeddingProfile {
  /** `openai` or `onnx`. */
  provider: string;
  model: string;
  dimensions: number;
}

/** Why an embedding call failed; `transient` ones are worth trying again later. */
export type EmbeddingFailureCode =
  /** No connection to the provider (refused, reset, DNS). */
  | 'unreachable'
  /** The provider did not answer within the time cap. */
  | 'timeout'
  /** 429 after every retry; `retryAfterMs` says when the provider allows the next call. */
  | 'rate_limited'
  /** 5xx after every retry. */
  | 'server_error'
  /** The provider refused the request (4xx other than 429: a bad key, an unknown model …). */
  | 'rejected'
  /** The answer is not a list of one numeric vector per input. */
  | 'bad_response'
  /** The vectors' length differs from EMBEDDINGS_DIMENSIONS or from the profile's earlier answers. */
  | 'dimension_mismatch'
  /** The local model folder is missing or cannot be loaded. */
  | 'model_unavailable'
  /** The embedder was closed. */
  | 'closed'
  /** The provider failed repeatedly and is skipped until its cool-down ends (domain/circuit-breaker.ts). */
  | 'circuit_open';

const TRANSIENT_EMBEDDING_FAILURES: ReadonlySet<EmbeddingFailureCode> = new Set([
  'unreachable',
  'timeout',
  'rate_limited',
  'server_error',
  'bad_response',
  'circuit_open',
]);

export class EmbeddingError extends Error {
  constructor(
    readonly code: EmbeddingFailureCode,
    message: string,
    /** For rate_limited: how long the provider asked callers to wait. */
    readonly retryAfterMs: number | null = null,
  ) {
    super(message);
    this.name = 'EmbeddingError';
  }

  /** Whether the same call may succeed later (an outage) rather than never (a configuration fault). */
  get transient(): boolean {
    return TRANSIENT_EMBEDDING_FAILURES.has(this.code);
  }
}

/**
 * Turns texts into vectors (adapters/embeddings/<provider>). Vectors are L2-normalised, so a dot
 * product is their cosine similarity. Failures are EmbeddingError with a code.
 */
export interface Embedder {
  readonly provider: string;
  readonly model: string;
  /**
   * The vectors' length: the configured one, else learned from the first answer (null before).
   * Every later answer must have it (dimension_mismatch otherwise).
   */
  dimensions(): number | null;
  /** One vector per text, in order; batching, concurrency and retries are the adapter's. */
  embed(texts: readonly string[], opts?: { signal?: AbortSignal }): Promise<Float32Array[]>;
  close(): Promise<void>;
}

/** A chunk's vector, addressed as the chunk is: by its document and its place in it. */
export interface ChunkVector {
  documentId: string;
  chunkIndex: number;
  vector: Float32Array;
}

export interface VectorStageState {
  status: 'pending' | 'ready' | 'failed';
  error: { code: string; message: string } | null;
  attempts: number;
}

/** A nearest-chunks search: the same filters as a keyword query, within one org and profile. */
export interface VectorSearchQuery {
  orgId: string;
  profileId: number;
  vector: Float32Array;
  limit: number;
  documentIds?: readonly string[] | null;
  filter?: Filter | null;
  /** Only documents of these partitions; null or absent: every partition of the org. */
  partitions?: readonly string[] | null;
  /** Only documents without an access list or whose list shares one of these; null or absent: any. */
  principals?: readonly string[] | null;
}

export interface VectorHit {
  documentId: string;
  chunkIndex: number;
  /** Cosine similarity to the query vector, in [-1, 1]; higher is nearer. */
  score: number;
  text: string;
  metadata: Metadata;
  pageStart: number | null;
  pageEnd: number | null;
}

/**
 * Chunk vectors, searched: what queries use (domain/query.ts). The vectors live in the records'
 * database, written through VectorStageStore; each backend's vector index
 * (adapters/sqlite/vector-index.ts, postgres/…) implements both ports in one class, and a search
 * kept elsewhere would follow that table (docs/ARCHITECTURE.md, "Adding a backend"). Vectors of
 * different profiles live side by side and are never compared.
 */
export interface VectorSearch {
  /**
   * The profile's number, the one VectorStageStore.profileId gives it (the profiles are registered
   * in the records' database, on first use): the stage writes vectors under it, queries name it.
   */
  profileId(profile: EmbeddingProfile): Promise<number>;
  /**
   * The org's chunks nearest to `vector` among those with a vector of the profile, best first,
   * at most `limit`: only chunks of `ready` documents, of `documentIds` when given and passing
   * `filter` when given (the keyword index's filters, so both lists of a hybrid query hold the
   * same documents). A vector written, replaced or removed with its chunk is seen by the next search.
   */
  search(q: VectorSearchQuery): Promise<VectorHit[]>;
  /**
   * What this process holds in memory to search faster (the sign-bit prefilter): how many
   * (org, profile) partitions and their bytes, within VECTOR_PREFILTER_MAX_MB.
   */
  heldMemory(): { partitions: number; bytes: number };
}

/**
 * The vector stage's side (domain/vector-stage.ts, vector-status.ts): which documents need
 * vectors, their chunks' texts, writing the vectors, and each document's state per profile
 * (`document_vectors`). In the records' database: a vector row belongs to its chunk, so deleting
 * or replacing a document's chunks removes their vectors in the same transaction (a foreign key
 * with ON DELETE CASCADE) and makes the document due again; a deleted document can never be
 * found by its vectors.
 */
export interface VectorStageStore {
  /** The profile's number in this database, registered on first use. */
  profileId(profile: EmbeddingProfile): Promise<number>;
  /** The newest registered profile of this provider and model (any length); null when none. */
  findProfile(provider: string, model: string): Promise<number | null>;
  /**
   * One transaction: stores the vectors (replacing any of the same chunk and profile). Returns
   * false, writing nothing, when one of the chunks does not exist (its document was deleted or
   * re-chunked meanwhile).
   */
  writeVectors(orgId: string, profileId: number, vectors: readonly ChunkVector[]): Promise<boolean>;
  /**
   * One transaction: stores the document's vectors and marks its vector stage `ready` for the
   * profile. The one place a document's vectors turn ready (a `document.vectors_ready` event
   * belongs in this transaction). false, writing nothing, when the document or one of the chunks
   * is gone.
   */
  completeDocument(
    documentId: string,
    orgId: string,
    profileId: number,
    vectors: readonly ChunkVector[],
    now: Date,
  ): Promise<boolean>;
  /** Records a failed try: `pending` until nextAttemptAt (an outage) or `failed` (for good). */
  recordFailure(
    documentId: string,
    orgId: string,
    profileId: number,
    failure: { status: 'pending' | 'failed'; code: string; message: string; nextAttemptAt: Date; now: Date },
  ): Promise<void>;
  /**
   * Ready documents whose vectors of the profile are due, oldest first: never tried, or pending
   * with their next attempt at or before `now`.
   */
  dueDocuments(
    profileId: number,
    now: Date,
    limit: number,
  ): Promise<Array<{ documentId: string; orgId: string }>>;
  /** A ready document's chunk texts in order; null when it is not ready (deleted, being re-processed). */
  chunkTexts(documentId: string): Promise<Array<{ chunkIndex: number; text: string }> | null>;
  /** The recorded vector states of these documents for the profile (absent: never tried). */
  vectorStates(documentIds: readonly string[], profileId: number): Promise<Map<string, VectorStageState>>;
  /** Makes every `failed` document of the profile due again; how many. */
  retryFailed(profileId: number): Promise<number>;
  /**
   * Makes every document of the profile due again (`docindex reindex --vectors`): the stage
   * re-embeds them in the background, each new vector replacing the old one; how many were ready
   * or failed before.
   */
  requeueProfile(profileId: number): Promise<number>;
  /** How many vectors of the profile the document has. */
  countVectors(documentId: string, profileId: number): Promise<number>;
}

// --- Reranking ------------------------------------------------------------------------------------

/** Why a rerank call failed. */
export type RerankFailureCode =
  /** No connection to the provider (refused, reset, DNS). */
  | 'unreachable'
  /** The provider did not answer within RERANK_TIMEOUT_MS. */
  | 'timeout'
  /** 429: the provider is rate limiting. */
  | 'rate_limited'
  /** 5xx. */
  | 'server_error'
  /** The provider refused the request (4xx other than 429: a bad key, an unknown model …). */
  | 'rejected'
  /** The answer is not one finite score for each document. */
  | 'bad_response'
  /** The local model folder is missing or cannot be loaded. */
  | 'model_unavailable'
  /** The reranker was closed. */
  | 'closed'
  /** The provider failed repeatedly and is skipped until its cool-down ends. */
  | 'circuit_open';

export class RerankError extends Error {
  constructor(
    readonly code: RerankFailureCode,
    message: string,
    /** For circuit_open: how long until the provider is tried again. */
    readonly retryAfterMs: number | null = null,
  ) {
    super(message);
    this.name = 'RerankError';
  }
}

/**
 * Scores (query, text) pairs with a cross-encoder (adapters/rerank/<provider>): a model that reads
 * the query and each text together, which orders a first stage's candidates better than BM25 or
 * vector similarity can. Failures are RerankError with a code.
 */
export interface Reranker {
  /** `http` or `onnx`. */
  readonly provider: string;
  readonly model: string;
  /** One relevance score per text, in the texts' order; higher is more relevant. */
  score(query: string, texts: readonly string[], opts?: { signal?: AbortSignal }): Promise<number[]>;
  close(): Promise<void>;
}

/**
 * A span's attributes: ids, counts, sizes, durations, and names the service itself chose (a
 * route, a mode, a format). Never a document's or a query's text, a metadata value, a file name,
 * a URL's path or query string, or a key.
 */
export type TraceAttributes = Record<string, string | number | boolean | readonly string[] | undefined>;

/**
 * A span's attributes, built only when the span records them: a span of the no-op tracer or one
 * the sampler dropped never calls it, so tracing off costs no attribute objects.
 */
export type LazyTraceAttributes = () => TraceAttributes;

/** One timed step of a request or a job (adapters/otel when tracing is on). */
export interface TraceSpan {
  setAttributes(attributes: LazyTraceAttributes): void;
  /**
   * Marks the span failed with the error's code or class name; its message is left out, since a
   * message may quote what the user sent.
   */
  fail(error: unknown): void;
  /** Ends the span now, or at `endTime` (milliseconds since the epoch). */
  end(endTime?: number): void;
  /** This span as a W3C `traceparent`, to travel with a job; null when it is not traced. */
  traceparent(): string | null;
}

/**
 * Where a span hangs: a span of this process, or a W3C `traceparent` (a request's header, a job's
 * stored context); null or absent: a trace of its own.
 */
export type TraceParent = TraceSpan | string | null | undefined;

export interface SpanOptions {
  /** Set once the span has started (a sampler decides without them). */
  attributes?: LazyTraceAttributes;
  /** When the span began (milliseconds since the epoch); absent: now. */
  startTime?: number;
  parent?: TraceParent;
  /** `server` for a request, `consumer` for a job run; absent: an internal step. */
  kind?: 'server' | 'consumer';
}

/**
 * Traces (OpenTelemetry when OTEL_EXPORTER_OTLP_ENDPOINT is set, start/tracing.ts). Services and
 * the pipeline take this port, never the OpenTelemetry API, so they stay free of it; off, they get
 * `noopTracer`, whose calls do nothing.
 *
 * A span's parent is always passed (`parent`), never taken from an ambient "current span": on
 * Node 20 an ambient context needs AsyncLocalStorage, whose promise hooks slow every promise of
 * the process, traced or not (docs/TRACING.md).
 */
export interface Tracer {
  /** Starts a span: for steps that overlap or end elsewhere. */
  startSpan(name: string, options?: SpanOptions): TraceSpan;
  /**
   * Runs `fn` in a new span, which `fn` passes as the parent of the spans it starts; the span
   * ends when `fn` settles and is marked failed when it throws.
   */
  inSpan<T>(name: string, options: SpanOptions, fn: (span: TraceSpan) => Promise<T>): Promise<T>;
}

/** The span of the no-op tracer: records nothing, hands no trace on. */
export const noopSpan: TraceSpan = {
  setAttributes() {},
  fail() {},
  end() {},
  traceparent: () => null,
};

/**
 * The tracer while tracing is off: each call is a function call and nothing more (attributes are
 * never built). Callers may also compare with it to skip a traced path altogether.
 */
export const noopTracer: Tracer = {
  startSpan: () => noopSpan,
  inSpan: (_name, _options, fn) => fn(noopSpan),
};
