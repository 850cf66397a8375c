// The records the domain works with. Storage adapters map rows to these; HTTP maps these to JSON.
import type { Filter } from './filter.js';
import type { Metadata } from './metadata.js';
import type { Scope } from './scopes.js';

export type DocumentStatus = 'queued' | 'processing' | 'ready' | 'failed';
export const DOCUMENT_STATUSES: readonly DocumentStatus[] = ['queued', 'processing', 'ready', 'failed'];

export type SourceType = 'text' | 'file' | 'url';

/**
 * Codes a document can fail with after its 202 (docs/API.md lists them): the one list the
 * pipeline's narrower sets (a download's, an extraction's) are drawn from.
 */
export const FAILURE_CODES = [
  'url_unreachable',
  'url_blocked',
  'too_many_redirects',
  'unsupported_format',
  'too_large',
  'encrypted',
  'corrupt',
  'archive_limits',
  'timeout',
  'no_text',
  'internal',
] as const;

export type FailureCode = (typeof FAILURE_CODES)[number];

export interface DocumentSource {
  type: SourceType;
  /** Display name of an uploaded file (basename, normalised); null otherwise. */
  filename: string | null;
  /** URL without its query string or fragment (signatures are never shown); null unless type=url. */
  url: string | null;
  /** Detected format as a media type, once known. */
  content_type: string | null;
  /** Size of the original upload or download in bytes, once known. */
  bytes: number | null;
}

export type { Metadata } from './metadata.js';

export interface DocumentError {
  code: FailureCode;
  message: string;
}

/** Most characters of an `external_id` (the caller's own key for a document, unique per org). */
export const MAX_EXTERNAL_ID_LENGTH = 255;

/** A version of a document still on its way while the previous one answers queries. */
export interface PendingVersion {
  version: number;
  /** `failed`: the new version could not be indexed; the previous one still answers. */
  status: 'queued' | 'processing' | 'failed';
  error: DocumentError | null;
}

export interface DocumentRecord {
  id: string;
  orgId: string;
  /** The caller's key for the document, unique within the org; null when none was given. */
  externalId: string | null;
  /** The partition of the org it belongs to (domain/partitions.ts), fixed for its life. */
  partition: string;
  /**
   * The principals that may see it (domain/principals.ts); null: anyone who may see its
   * partition.
   */
  access: string[] | null;
  /**
   * The version `status` and the chunks describe: 1 at first, one more for every new content
   * (PUT content, re-ingest of an external_id, reprocess).
   */
  version: number;
  /** A newer version being processed (or failed) while this one stays searchable; else null. */
  pendingVersion: PendingVersion | null;
  status: DocumentStatus;
  source: DocumentSource;
  metadata: Metadata;
  chunkSize: number;
  chunkOverlap: number;
  tokenizer: string;
  chunkCount: number | null;
  tokenCount: number | null;
  contentSha256: string | null;
  /**
   * Pages whose text OCR recognised (an image counts as one page), once ready; null for formats
   * that never need OCR (text, DOCX, HTML) and for documents indexed before OCR existed.
   */
  ocrPages: number | null;
  /**
   * The language (ISO 639-1) the document's words were analysed in, once indexed: the one given
   * at ingest, else the one detected; null before, and under SEARCH_LANGUAGE=none when none was given.
   */
  language: string | null;
  /** The language given at ingest for the version the job produces; null: detect it. */
  requestedLanguage: string | null;
  error: DocumentError | null;
  attempts: number;
  createdAt: Date;
  updatedAt: Date;
}

/** What ingest commits: the record plus the input the worker needs. */
/** What a request may see of its org's documents (domain/partitions.ts says how it is read). */
export interface DocumentAccess {
  /** The partitions it may see; null: every partition of the org. */
  partitions: readonly string[] | null;
  /**
   * The principals it acts for: it sees a document without an access list or whose list shares
   * one of them; null: access lists do not restrict it.
   */
  principals: readonly string[] | null;
}

export interface NewDocument {
  id: string;
  orgId: string;
  /** The caller's key; a document of the org that has it gets a new version instead. */
  externalId?: string | null;
  /**
   * Its partition (absent: `default`). A document of the org with the same external_id must be
   * in it: else the store throws partition_mismatch rather than move the document.
   */
  partition?: string;
  /**
   * Its access list; null or absent: none. A new version by external_id replaces the document's
   * access list with this one, as it replaces the metadata.
   */
  access?: string[] | null;
  /**
   * What the ingesting request may see, when its key is restricted: a document of the org with
   * the same external_id that it may not see is not versioned (403 principal_forbidden), checked
   * in the write's own transaction. Absent: no restriction.
   */
  seenBy?: DocumentAccess;
  source: DocumentSource;
  metadata: Metadata;
  chunkSize: number;
  chunkOverlap: number;
  tokenizer: string;
  /** The document's language (ISO 639-1) as given; null or absent: detect it. */
  language?: string | null;
  createdAt: Date;
  /** JSON ingest: the text itself. */
  text: string | null;
  /** File ingest: key of the uploaded bytes in the blob store. */
  blobKey: string | null;
  /** URL ingest: the full URL (with query string), kept only until the download ends. */
  fetchUrl: string | null;
  /** The trace its job joins (W3C traceparent), kept with the job; absent or null: none. */
  traceparent?: string | null;
}

/** Everything a worker needs to process one document. */
export interface JobInput {
  /**
   * The document as the job sees it: while a new version is pending, its source, chunk settings,
   * status and error are the pending version's.
   */
  record: DocumentRecord;
  /** The version this job produces; every write of the job names it and is refused once stale. */
  version: number;
  /** The blob of the version that answers now (GET /file); equals blobKey without a pending version. */
  currentBlobKey: string | null;
  text: string | null;
  blobKey: string | null;
  fetchUrl: string | null;
}

/** One chunk as indexed. Offsets are UTF-16 code unit offsets into the extracted text. */
export interface ChunkRow {
  index: number;
  text: string;
  tokenCount: number;
  charStart: number;
  charEnd: number;
  /** 1-based page range for paged formats (PDF); null otherwise. */
  pageStart: number | null;
  pageEnd: number | null;
  /**
   * `searchWords(text)`, when the pipeline already computed it (off the API's event loop); a store
   * that indexes words computes them itself when absent.
   */
  words?: string;
}

/** What is known of a text once all of it is chunked. */
export interface IndexTotals {
  /** Tokens in the whole text. */
  tokenCount: number;
  /** SHA-256 of the text's UTF-8, hex (the document's `content_sha256`). */
  contentSha256: string;
  /** Pages recognised by OCR (`ocr_pages`); absent or null for a text that cannot need OCR. */
  ocrPages?: number | null;
  /** The language the words were analysed in (DocumentRecord.language); absent: unknown. */
  language?: string | null;
}

/** A document's chunks, all at hand. */
export interface ChunkList extends IndexTotals {
  chunks: readonly ChunkRow[];
}

/**
 * A document's chunks in order, in batches that arrive while the pipeline is still chunking the
 * text: a large text's chunks are written as they come and never all held at once.
 */
export interface ChunkStream {
  chunks: AsyncIterable<readonly ChunkRow[]>;
  /** Known once the last batch has been read. */
  totals(): IndexTotals;
}

export type IndexResult = (ChunkList | ChunkStream) & {
  /**
   * The version these chunks are (JobInput.version): written only while it is still the one to
   * produce; a newer version or a delete makes the write a no-op. Absent: whatever is current.
   */
  version?: number;
  /** Detected content type and byte size, when the worker learnt them (file/URL). */
  contentType: string | null;
  bytes: number | null;
};

export interface SearchQuery {
  orgId: string;
  query: string;
  topK: number;
  /** Only documents whose metadata passes it (domain/filter.ts); null: every document. */
  filter: Filter | null;
  documentIds: string[] | null;
  /** Only documents of these partitions; null or absent: every partition of the org. */
  partitions?: readonly string[] | null;
  /**
   * Only documents without an access list or whose list shares one of these principals; null or
   * absent: access lists do not restrict.
   */
  principals?: readonly string[] | null;
  /**
   * The query's language (ISO 639-1), read in its analysis as well as in those of the org's
   * documents; absent: only theirs.
   */
  language?: string | null;
}

export interface SearchHit {
  documentId: string;
  chunkIndex: number;
  text: string;
  /** Higher is better. */
  score: number;
  metadata: Metadata;
  pageStart: number | null;
  pageEnd: number | null;
}

/**
 * A keyword index's hit: `score` is `bm25` as a fraction of `bm25Max` (domain/bm25.ts,
 * keywordScore), so it lies in (0, 1] and falls as `bm25` does.
 */
export interface KeywordHit extends SearchHit {
  /** The chunk's Okapi BM25 for the terms that ranked it: what orders the list. */
  bm25: number;
  /** The most BM25 those terms could give a chunk (bm25Ceiling of their IDFs). */
  bm25Max: number;
}

export interface ListQuery {
  orgId: string;
  limit: number;
  /** Opaque position: list continues strictly after this (createdAt, id) pair, newest first. */
  after: { createdAt: Date; id: string } | null;
  status: DocumentStatus | null;
  ids: string[] | null;
  contentSha256: string | null;
  /** Only the document with this external_id (at most one per org). */
  externalId?: string | null;
  /** Only the documents with these external_ids (one read for many, as `ids`). */
  externalIds?: readonly string[] | null;
  /** Only documents whose metadata passes it (domain/filter.ts); null: every document. */
  filter: Filter | null;
  /** Only documents of these partitions; null or absent: every partition of the org. */
  partitions?: readonly string[] | null;
  /**
   * Only documents without an access list or whose list shares one of these principals; null or
   * absent: access lists do not restrict.
   */
  principals?: readonly string[] | null;
}

/** A partition's size as GET /v1/partitions shows it. */
export interface PartitionSummary {
  name: string;
  documents: number;
  chunks: number;
  /** The sizes of the documents' original files and downloads, summed (JSON text counts none). */
  bytes: number;
  /** `deleting`: DELETE /v1/partitions/{name} was accepted and its documents are being purged. */
  status: 'active' | 'deleting';
}

export interface Org {
  id: string;
  name: string;
  rateLimitRpm: number;
  createdAt: Date;
}

export interface ApiKeyRecord {
  id: string;
  orgId: string;
  /** hex SHA-256 of the full key. */
  hash: string;
  /** First characters of the key, for display only. */
  prefix: string;
  /** What the key may do (never empty; a key issued without a choice has every scope). */
  scopes: Scope[];
  /** After this instant the key is refused like a revoked one; null: it never expires. */
  expiresAt: Date | null;
  /** The partitions the key is limited to; null: every partition of its org. */
  partitions: string[] | null;
  /** The principals every request of the key acts for (domain/principals.ts); null: unbound. */
  principals: string[] | null;
  createdAt: Date;
  revokedAt: Date | null;
}

/** What a new version of an existing document is made of (DocumentStore.startVersion). */
export interface NewVersion {
  source: DocumentSource;
  chunkSize: number;
  chunkOverlap: number;
  /** Replaces the document's metadata at once (filters see it before the content is ready); null keeps it. */
  metadata: Metadata | null;
  /** Replaces the document's access list at once (null removes it), as metadata; absent keeps it. */
  access?: string[] | null;
  /** The new content's language as given; null or absent: detect it. */
  language?: string | null;
  text: string | null;
  blobKey: string | null;
  fetchUrl: string | null;
  at: Date;
  /** The trace the version's job joins (W3C traceparent); absent or null: none. */
  traceparent?: string | null;
  /**
   * What the requesting caller may see, when restricted: the version starts only if the document
   * is visible to it while the write holds the row (else the answer is null, as for a missing
   * document), so a change of its access list made after the caller's read cannot slip in between.
   */
  seenBy?: DocumentAccess;
}

/** A document's versions as a caller read them (DocumentStore.startVersionIfSettled). */
export interface VersionsAsRead {
  version: number;
  /** The version pending then (of any status), or null. */
  pendingVersion: number | null;
}

/** The outcome of DocumentStore.startVersion, and of each row of createDocuments. */
export interface StartedVersion {
  id: string;
  version: number;
  /** The document was created just now (version 1), rather than given a new version. */
  created: boolean;
  /** Blobs no version refers to any more (a superseded pending version's), for the caller to delete. */
  discardedBlobKeys: string[];
}

export interface JobRef {
  documentId: string;
  orgId: string;
  /**
   * The trace the job joins (W3C traceparent of the span that queued it); absent or null: none.
   * A queue whose jobs live in the document rows takes it from the row (NewDocument, NewVersion).
   */
  traceparent?: string | null;
}

/** A chunk as stored, read back (GET /v1/documents/{id}/chunks). */
export interface StoredChunk {
  index: number;
  text: string;
  tokenCount: number;
  /** Where the chunk lies in the extracted text (UTF-16 offsets; chunks overlap). */
  charStart: number;
  charEnd: number;
  pageStart: number | null;
  pageEnd: number | null;
}
