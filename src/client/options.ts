// What DocindexClient's methods take: the client's own options and each request's. Part of the
// package's public surface (index.ts exports them).
import type { DocumentRecord, DocumentStatus, Metadata, QueryFilter } from './types.js';

export interface DocindexClientOptions {
  /** Where the API is, e.g. `http://127.0.0.1:8080` (without `/v1`). */
  baseUrl: string;
  /** An API key (`dix_…`). */
  apiKey: string;
  /** A fetch implementation; the global one by default. */
  fetch?: typeof globalThis.fetch;
  /** Retries after a 429 or 503 (and after network errors on safe requests); 3 by default. */
  maxRetries?: number;
  /** The longest wait the client accepts before a retry; a longer Retry-After fails at once. 60 s by default. */
  maxRetryDelayMs?: number;
}

export interface RequestOptions {
  signal?: AbortSignal;
}

/** What a request that reads or changes documents may say of whom it acts for. */
export interface ReadOptions extends RequestOptions {
  /**
   * Act for these principals: only documents without an access list, or whose list names one of
   * them, are seen (an empty list: only documents without one). Server default: the API key's
   * principals if it is bound to some (a bound key may name only its own), else no restriction.
   */
  principals?: string[];
}

export interface IngestOptions extends ReadOptions {
  /** Sent as `Idempotency-Key`; a random UUID per call by default. */
  idempotencyKey?: string;
}

/** How the server cuts the document into chunks; every ingest form takes them. */
export interface ChunkOptions {
  /** Tokens per chunk, 128–4096 (server default 512). */
  chunkSize?: number;
  /** Tokens shared by consecutive chunks, 0–512 and below chunkSize (server default 64). */
  chunkOverlap?: number;
}

export interface IngestTextOptions extends IngestOptions, ChunkOptions {
  /** The access list of every document that gives none of its own (server default: none). */
  access?: string[];
  /** The partition of every document that names none (server default `default`). */
  partition?: string;
}

export interface IngestUrlOptions extends IngestOptions, ChunkOptions {
  /** The document's partition (server default `default`); fixed for its life. */
  partition?: string;
  /**
   * The document's access list: the principals that may see it (server default: none, so anyone
   * who may see its partition). A new version by `externalId` takes this list (none when absent).
   */
  access?: string[];
  /**
   * Your key for the document, unique in your organisation: when a document has it already, this
   * becomes its new version (the ack names that document).
   */
  externalId?: string;
}

export interface IngestFileOptions extends IngestUrlOptions {
  metadata?: Metadata;
  /** The name the server records; the path's basename (or the File's name) by default. */
  filename?: string;
}

export interface UsageOptions extends RequestOptions {
  /** That partition's queries only (a partition the key may not see: 403 partition_forbidden). */
  partition?: string;
  /** Add `partitions`, the queries by the partitions they ran over. */
  byPartition?: boolean;
}

export interface ListDocumentsOptions extends ReadOptions {
  /** 1–100 (server default 20). */
  limit?: number;
  cursor?: string;
  status?: DocumentStatus;
  /** Batch status of up to 100 documents; unknown ids are absent from the answer. */
  ids?: string[];
  /** Only documents whose metadata passes this filter (sent as JSON in the query string). */
  filter?: QueryFilter;
  /** Only the document with this external_id. */
  externalId?: string;
  /** Only documents of these partitions (server default: every partition the key may see). */
  partitions?: string[];
}

/** The new content of replaceContent: text, a URL to download, or a file (a path or a Blob). */
export type NewContent = { text: string } | { url: string } | { file: string | Blob; filename?: string };

export interface ReprocessOptions extends IngestOptions {
  /** Tokens per chunk, 128–4096; the document's by default. */
  chunkSize?: number;
  /** Tokens shared by consecutive chunks; the document's by default. */
  chunkOverlap?: number;
}

export interface DeleteDocumentsOptions extends ReadOptions {
  /** Delete the documents whose metadata passes this filter (a non-empty one)… */
  filter?: QueryFilter;
  /** …and/or among these ids (at most 1,000). At least one of the two. */
  documentIds?: string[];
  /** Only documents of these partitions (server default: every partition the key may see). */
  partitions?: string[];
}

export interface QueryOptions extends ReadOptions {
  query: string;
  /** 1–100 (server default 10). */
  topK?: number;
  /** Only chunks of documents whose metadata passes this filter. */
  filter?: QueryFilter;
  documentIds?: string[];
  /** Only chunks of documents of these partitions (server default: every partition the key may see). */
  partitions?: string[];
  /**
   * `keyword` (BM25), `semantic` (vectors) or `hybrid` (both, fused by reciprocal rank). Server
   * default: `hybrid` when it has an embedding provider, else `keyword`.
   */
  mode?: 'keyword' | 'semantic' | 'hybrid';
  /** Hybrid: weight of the semantic list, 0–1 (server default 0.5). */
  semanticWeight?: number;
  /** At most this many chunks of one document, 1–100. */
  maxChunksPerDocument?: number;
  /**
   * Only results whose `score` (of the mode used, or the reranker's when reranked) is at least
   * this; in keyword mode a share, 0–1, of the most the query could score (0.3, say).
   */
  scoreThreshold?: number;
  /**
   * Order the first stage's best chunks with the server's reranker. Server default: true when it
   * has one; true without one is a 400 `rerank_unavailable`.
   */
  rerank?: boolean;
  /** With reranking: how many of the first stage's best chunks are reranked, 1–200 (server default 50). */
  rerankCandidates?: number;
  /** The query's language (ISO 639-1): read in it too, beside the languages of your documents. */
  language?: string;
}

export interface WaitProgress {
  total: number;
  queued: number;
  processing: number;
  ready: number;
  failed: number;
  /** The latest status of every document found so far. */
  documents: DocumentRecord[];
}

export interface WaitOptions extends RequestOptions {
  /** Give up (WaitTimeoutError) after this long; 10 minutes by default. */
  timeoutMs?: number;
  /** Called after every poll. */
  onProgress?: (progress: WaitProgress) => void;
  /** First polling interval; it grows to 2 s. 250 ms by default. */
  intervalMs?: number;
}

/** Most ids one batch-status request may carry (the API's limit, docs/API.md). */
export const MAX_IDS_PER_REQUEST = 100;
