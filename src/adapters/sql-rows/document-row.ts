// The documents table's record columns and their mapping to a DocumentRecord, and the lanes its
// rows' jobs fall in, the same for every SQL backend. Each driver returns numbers, timestamps and JSON in its own types; the backend
// says how to read them.
import { DEFAULT_PARTITION } from '../../domain/partitions.js';
import type {
  DocumentError,
  DocumentRecord,
  DocumentSource,
  DocumentStatus,
  FailureCode,
  JobInput,
  Metadata,
  NewDocument,
  NewVersion,
  PendingVersion,
  SourceType,
  VersionsAsRead,
} from '../../domain/types.js';

export const RECORD_COLUMNS = `id, org_id, status, source_type, filename, source_url, content_type, bytes, metadata,
  chunk_size, chunk_overlap, tokenizer, chunk_count, token_count, content_sha256, ocr_pages, error_code,
  error_message, attempts, created_at, updated_at, external_id, version, pending_version, pending_status, pending,
  language, requested_language, partition, access`;

/**
 * What a pending version is made of, as the `pending` JSON column holds it: written by
 * startVersion, read by the job (loadJobInput) and copied into the record's columns when the
 * version becomes current.
 */
export interface PendingSpec {
  source: DocumentSource;
  chunk_size: number;
  chunk_overlap: number;
  blob_key: string | null;
  error: DocumentError | null;
  /** The new content's language as given (absent in specs written before languages). */
  language?: string | null;
}

export function pendingSpecOf(version: NewVersion): PendingSpec {
  return {
    source: version.source,
    chunk_size: version.chunkSize,
    chunk_overlap: version.chunkOverlap,
    blob_key: version.blobKey,
    error: null,
    language: version.language ?? null,
  };
}

/**
 * The new version an ingest makes of the document that already has its external_id: its content,
 * settings, metadata and access list replace the document's (the document keeps its id).
 */
export function versionOfIngest(doc: NewDocument): NewVersion {
  return {
    source: doc.source,
    chunkSize: doc.chunkSize,
    chunkOverlap: doc.chunkOverlap,
    language: doc.language ?? null,
    metadata: doc.metadata,
    access: doc.access ?? null,
    text: doc.text,
    blobKey: doc.blobKey,
    fetchUrl: doc.fetchUrl,
    at: doc.createdAt,
    traceparent: doc.traceparent ?? null,
  };
}

/** SQL (both backends): a pending version waits or runs, so the job works on it. */
export const PENDING_ACTIVE = "pending_version IS NOT NULL AND pending_status IN ('queued', 'processing')";
/**
 * Whether a new version may start on a row read under the writer's lock: always, unless the
 * caller gave how it read the document (startVersionIfSettled) and the row moved on since or has
 * a version queued or processing.
 */
export function mayStartVersion(
  row: { status: string; version: number; pending_version: number | null; pending_status: string | null },
  asRead: VersionsAsRead | undefined,
): boolean {
  if (asRead === undefined) return true;
  if (Number(row.version) !== asRead.version) return false;
  const pending = row.pending_version === null ? null : Number(row.pending_version);
  if (pending !== asRead.pendingVersion) return false;
  if (row.status === 'queued' || row.status === 'processing') return false;
  return !(pending !== null && (row.pending_status === 'queued' || row.pending_status === 'processing'));
}

/** SQL (both backends): the version the document's job produces now. */
export const WORK_VERSION = `CASE WHEN ${PENDING_ACTIVE} THEN pending_version ELSE version END`;

/**
 * Which of the documents table's jobs a table queue serves: URL documents waiting for their
 * download (`download`), the rest (`process`), or all. Separate lanes let downloads of short-lived
 * pre-signed URLs start while hundreds of files wait for extraction.
 */
export type QueueLane = 'download' | 'process' | 'any';

/**
 * A lane's jobs, as a condition both backends append to their queue's queries: a URL document
 * waits for its download while `fetch_url` is set.
 */
export const LANE_PREDICATE: Readonly<Record<QueueLane, string>> = {
  download: ' AND fetch_url IS NOT NULL',
  process: ' AND fetch_url IS NULL',
  any: '',
};

/** A row of RECORD_COLUMNS: `N` a driver's big numbers, `T` its timestamps, `M` its JSON. */
export interface DocumentRow<N, T, M> {
  id: string;
  org_id: string;
  status: DocumentStatus;
  source_type: SourceType;
  filename: string | null;
  source_url: string | null;
  content_type: string | null;
  bytes: N | null;
  metadata: M;
  chunk_size: number;
  chunk_overlap: number;
  tokenizer: string;
  chunk_count: number | null;
  token_count: N | null;
  content_sha256: string | null;
  ocr_pages: number | null;
  error_code: string | null;
  error_message: string | null;
  attempts: number;
  created_at: T;
  updated_at: T;
  external_id: string | null;
  version: number;
  pending_version: number | null;
  pending_status: PendingVersion['status'] | null;
  pending: M | null;
  language: string | null;
  requested_language: string | null;
  /** Absent in webhook snapshots written before partitions existed. */
  partition?: string;
  /**
   * The access list: JSON text (SQLite), a text[] (PostgreSQL) or a JSON array (a snapshot);
   * absent in snapshots written before access lists existed.
   */
  access?: string | readonly string[] | null;
}

export interface RowReaders<N, T, M> {
  number(value: N): number;
  date(value: T): Date;
  metadata(value: M): Metadata;
  /** A JSON column other than metadata, parsed. */
  json(value: M): unknown;
}

export function toDocumentRecord<N, T, M>(
  row: DocumentRow<N, T, M>,
  read: RowReaders<N, T, M>,
): DocumentRecord {
  const pending = row.pending === null ? null : (read.json(row.pending) as PendingSpec);
  return {
    id: row.id,
    orgId: row.org_id,
    externalId: row.external_id,
    partition: row.partition ?? DEFAULT_PARTITION,
    access: accessOfColumn(row.access),
    version: Number(row.version),
    pendingVersion:
      row.pending_version === null || row.pending_status === null
        ? null
        : { version: Number(row.pending_version), status: row.pending_status, error: pending?.error ?? null },
    status: row.status,
    source: {
      type: row.source_type,
      filename: row.filename,
      url: row.source_url,
      content_type: row.content_type,
      bytes: row.bytes === null ? null : read.number(row.bytes),
    },
    metadata: read.metadata(row.metadata),
    chunkSize: row.chunk_size,
    chunkOverlap: row.chunk_overlap,
    tokenizer: row.tokenizer,
    chunkCount: row.chunk_count,
    tokenCount: row.token_count === null ? null : read.number(row.token_count),
    contentSha256: row.content_sha256,
    ocrPages: row.ocr_pages,
    language: row.language ?? null,
    requestedLanguage: row.requested_language ?? null,
    error:
      row.error_code === null
        ? null
        : { code: row.error_code as FailureCode, message: row.error_message ?? '' },
    attempts: row.attempts,
    createdAt: read.date(row.created_at),
    updatedAt: read.date(row.updated_at),
  };
}

/** A document's access list as either backend or a snapshot holds it; null: none. */
export function accessOfColumn(value: string | readonly string[] | null | undefined): string[] | null {
  if (value === null || value === undefined) return null;
  return typeof value === 'string' ? (JSON.parse(value) as string[]) : [...value];
}

/**
 * The job's view of a row: while a pending version waits or runs, the record carries its source,
 * chunk settings, status and error, and blobKey is its blob.
 */
export function toJobInput<N, T, M>(
  row: DocumentRow<N, T, M> & {
    input_text: string | null;
    blob_key: string | null;
    fetch_url: string | null;
  },
  read: RowReaders<N, T, M>,
): JobInput {
  const record = toDocumentRecord(row, read);
  const base = { text: row.input_text, fetchUrl: row.fetch_url, currentBlobKey: row.blob_key };
  const pending = record.pendingVersion;
  if (pending === null || pending.status === 'failed' || row.pending === null) {
    return { ...base, record, version: record.version, blobKey: row.blob_key };
  }
  const spec = read.json(row.pending) as PendingSpec;
  return {
    ...base,
    record: {
      ...record,
      status: pending.status,
      error: pending.error,
      source: spec.source,
      chunkSize: spec.chunk_size,
      chunkOverlap: spec.chunk_overlap,
      requestedLanguage: spec.language ?? null,
    },
    version: pending.version,
    blobKey: spec.blob_key,
  };
}
