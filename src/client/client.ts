// DocindexClient: a typed client for every docindex endpoint. It retries 429 and 503 answers after
// the wait the server asks for (Retry-After, bounded), sends an Idempotency-Key with every ingest
// (the same key on that call's retries, so a retried ingest never queues a document twice), and
// turns problem+json answers into DocindexError. It uses only fetch, so it runs in Node and in
// browsers; reading a file by path loads node:fs on demand.
// The format registry is pure data (no parser, no Node API), so the client stays light and
// browser-safe while naming the same extensions and media types as the server.
import { SUPPORTED_FORMATS } from '../domain/formats.js';
import { DocindexError, WaitTimeoutError } from './errors.js';
import { type CallOptions, callApi, exchange, sleep, type Transport, transportOf } from './http-exchange.js';
import type {
  ChunkPage,
  CreatedWebhook,
  DeleteDocumentsResult,
  DocumentFile,
  DocumentPage,
  DocumentRecord,
  DocumentStatus,
  Evaluation,
  EvaluationPage,
  EvaluationRequest,
  IngestAck,
  Metadata,
  NewSource,
  OrgInfo,
  PartitionDeleteAck,
  PartitionList,
  QueryFilter,
  QueryResponse,
  Source,
  SourceRun,
  SourceUpdate,
  TextDocument,
  UsageReport,
  VersionAck,
  Webhook,
  WebhookDeliveries,
  WebhookEvent,
} from './types.js';

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
const MAX_POLL_INTERVAL_MS = 2_000;

/** Extension → the media type an upload is labelled with: `.pdf` → `application/pdf`, …, `.htm`. */
const FILE_TYPES: Record<string, string> = Object.fromEntries(
  SUPPORTED_FORMATS.flatMap((format) =>
    format.extensions.map((extension) => [extension, format.mediaTypes[0]]),
  ),
);

export class DocindexClient {
  readonly baseUrl: string;
  readonly #transport: Transport;

  constructor(options: DocindexClientOptions) {
    if (!options.apiKey) throw new TypeError('DocindexClient needs an apiKey');
    this.#transport = transportOf({ ...options, token: options.apiKey });
    this.baseUrl = this.#transport.baseUrl;
  }

  /** Queues up to 50 text documents (`POST /v1/ingest`). */
  ingestText(documents: Array<string | TextDocument>, options: IngestTextOptions = {}): Promise<IngestAck> {
    const body = {
      documents: documents.map((doc) => {
        const given = typeof doc === 'string' ? { text: doc } : doc;
        return options.access === undefined || given.access !== undefined
          ? given
          : { ...given, access: options.access };
      }),
      ...(options.partition === undefined ? {} : { partition: options.partition }),
      ...chunkFields(options),
    };
    return this.#call<IngestAck>('POST', '/v1/ingest', {
      json: body,
      idempotencyKey: options.idempotencyKey ?? newIdempotencyKey(),
      signal: options.signal,
    });
  }

  /**
   * Uploads one file (`POST /v1/ingest/file`): a path (Node only; streamed from disk, not read into
   * memory) or a Blob/File.
   */
  async ingestFile(file: string | Blob, options: IngestFileOptions = {}): Promise<IngestAck> {
    const { blob, filename } = await fileBlob(file, options.filename);
    const { metadata, externalId, partition, access, chunkSize, chunkOverlap } = options;
    return this.#call<IngestAck>('POST', '/v1/ingest/file', {
      form: () => {
        const form = new FormData();
        if (metadata !== undefined) form.append('metadata', JSON.stringify(metadata));
        if (externalId !== undefined) form.append('external_id', externalId);
        if (partition !== undefined) form.append('partition', partition);
        if (access !== undefined) form.append('access', JSON.stringify(access));
        if (chunkSize !== undefined) form.append('chunk_size', String(chunkSize));
        if (chunkOverlap !== undefined) form.append('chunk_overlap', String(chunkOverlap));
        form.append('file', blob, filename);
        return form;
      },
      idempotencyKey: options.idempotencyKey ?? newIdempotencyKey(),
      signal: options.signal,
    });
  }

  /** Queues a URL for the service to download (`POST /v1/ingest/url`). */
  ingestUrl(url: string, metadata?: Metadata, options: IngestUrlOptions = {}): Promise<IngestAck> {
    return this.#call<IngestAck>('POST', '/v1/ingest/url', {
      json: {
        url,
        ...(metadata === undefined ? {} : { metadata }),
        ...(options.externalId === undefined ? {} : { external_id: options.externalId }),
        ...(options.partition === undefined ? {} : { partition: options.partition }),
        ...(options.access === undefined ? {} : { access: options.access }),
        ...chunkFields(options),
      },
      idempotencyKey: options.idempotencyKey ?? newIdempotencyKey(),
      signal: options.signal,
    });
  }

  getDocument(id: string, options: ReadOptions = {}): Promise<DocumentRecord> {
    return this.#call<DocumentRecord>('GET', `/v1/documents/${encodeURIComponent(id)}`, options);
  }

  /** One page of documents, newest first; or, with `ids`, the batch status of up to 100. */
  async listDocuments(options: ListDocumentsOptions = {}): Promise<DocumentPage> {
    if (options.ids !== undefined && (options.ids.length === 0 || options.ids.length > MAX_IDS_PER_REQUEST)) {
      throw new RangeError(`ids must list 1 to ${MAX_IDS_PER_REQUEST} documents; use getDocuments for more`);
    }
    return this.#call<DocumentPage>('GET', '/v1/documents', {
      query: {
        limit: options.limit,
        cursor: options.cursor,
        status: options.status,
        ids: options.ids?.join(','),
        filter: options.filter === undefined ? undefined : JSON.stringify(options.filter),
        external_id: options.externalId,
        partitions: options.partitions?.join(','),
      },
      principals: options.principals,
      signal: options.signal,
    });
  }

  /** The document you gave this external_id, or null when there is none. */
  async getDocumentByExternalId(
    externalId: string,
    options: ReadOptions = {},
  ): Promise<DocumentRecord | null> {
    const page = await this.listDocuments({ externalId, limit: 1, ...options });
    return page.documents[0] ?? null;
  }

  /**
   * New content for a document (`PUT /v1/documents/{id}/content`): text, a URL or a file. It is a
   * new version: the current one answers queries until it is ready (`pending_version` shows it).
   */
  async replaceContent(
    id: string,
    content: NewContent,
    options: IngestOptions & { access?: string[] | null } = {},
  ): Promise<VersionAck> {
    const path = `/v1/documents/${encodeURIComponent(id)}/content`;
    const idempotencyKey = options.idempotencyKey ?? newIdempotencyKey();
    if ('file' in content) {
      const { blob, filename } = await fileBlob(content.file, content.filename);
      return this.#call<VersionAck>('PUT', path, {
        form: () => {
          const form = new FormData();
          form.append('file', blob, filename);
          if (options.access != null) form.append('access', JSON.stringify(options.access));
          return form;
        },
        idempotencyKey,
        principals: options.principals,
        signal: options.signal,
      });
    }
    const json = options.access === undefined ? content : { ...content, access: options.access };
    return this.#call<VersionAck>('PUT', path, {
      json,
      idempotencyKey,
      principals: options.principals,
      signal: options.signal,
    });
  }

  /**
   * Processes a document again as a new version (`POST /v1/documents/{id}/reprocess`): its text
   * re-chunked, or its original re-extracted, with new chunk settings if given.
   */
  reprocessDocument(id: string, options: ReprocessOptions = {}): Promise<VersionAck> {
    return this.#call<VersionAck>('POST', `/v1/documents/${encodeURIComponent(id)}/reprocess`, {
      json: chunkFields(options),
      idempotencyKey: options.idempotencyKey ?? newIdempotencyKey(),
      principals: options.principals,
      signal: options.signal,
    });
  }

  /**
   * Every document (optionally of one status, or passing a filter), newest first, following
   * cursors page by page.
   */
  async *iterateDocuments(
    options: { status?: DocumentStatus; filter?: QueryFilter; pageSize?: number } & RequestOptions = {},
  ): AsyncGenerator<DocumentRecord, void, undefined> {
    let cursor: string | undefined;
    do {
      const page = await this.listDocuments({
        limit: options.pageSize ?? MAX_IDS_PER_REQUEST,
        ...(cursor === undefined ? {} : { cursor }),
        ...(options.status === undefined ? {} : { status: options.status }),
        ...(options.filter === undefined ? {} : { filter: options.filter }),
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      });
      yield* page.documents;
      cursor = page.next_cursor ?? undefined;
    } while (cursor !== undefined);
  }

  /**
   * The status of any number of documents, in the order asked, one request per 100 ids.
   * Unknown ids (or another organisation's) are left out.
   */
  async getDocuments(ids: string[], options: ReadOptions = {}): Promise<DocumentRecord[]> {
    const unique = [...new Set(ids)];
    const found = new Map<string, DocumentRecord>();
    for (let i = 0; i < unique.length; i += MAX_IDS_PER_REQUEST) {
      const batch = unique.slice(i, i + MAX_IDS_PER_REQUEST);
      const page = await this.listDocuments({ ids: batch, limit: MAX_IDS_PER_REQUEST, ...options });
      for (const doc of page.documents) found.set(doc.id, doc);
    }
    return unique.flatMap((id) => {
      const doc = found.get(id);
      return doc ? [doc] : [];
    });
  }

  /** One page of a ready document's chunks, in order (409 `not_ready` before it is ready). */
  listChunks(
    id: string,
    options: ReadOptions & { limit?: number; cursor?: string } = {},
  ): Promise<ChunkPage> {
    return this.#call<ChunkPage>('GET', `/v1/documents/${encodeURIComponent(id)}/chunks`, {
      ...options,
      query: { limit: options.limit, cursor: options.cursor },
    });
  }

  /**
   * A ready document's extracted text, as it was chunked and indexed (409 `not_ready` before it
   * is ready).
   */
  async getDocumentContent(id: string, options: ReadOptions = {}): Promise<string> {
    const response = await exchange(
      this.#transport,
      'GET',
      `/v1/documents/${encodeURIComponent(id)}/content`,
      {
        ...options,
        accept: 'text/plain, application/problem+json',
      },
    );
    return response.text();
  }

  /**
   * The file a document was uploaded as or downloaded from, with its media type and file name
   * (404 for a document sent as JSON text; 409 `not_ready` while its URL is being downloaded).
   */
  async getDocumentFile(id: string, options: ReadOptions = {}): Promise<DocumentFile> {
    const response = await exchange(this.#transport, 'GET', `/v1/documents/${encodeURIComponent(id)}/file`, {
      ...options,
      accept: '*/*',
    });
    return {
      data: new Uint8Array(await response.arrayBuffer()),
      contentType: response.headers.get('content-type') ?? 'application/octet-stream',
      filename: filenameOfDisposition(response.headers.get('content-disposition')),
    };
  }

  /**
   * Sets metadata keys (a string) and removes them (null); keys not named stay. Query filters see
   * the change at once. Resolves to the document's status record afterwards.
   */
  updateMetadata(
    id: string,
    metadata: Record<string, string | null>,
    options: ReadOptions = {},
  ): Promise<DocumentRecord> {
    return this.#call<DocumentRecord>('PATCH', `/v1/documents/${encodeURIComponent(id)}`, {
      ...options,
      json: { metadata },
    });
  }

  /**
   * Replaces a document's access list (`PATCH /v1/documents/{id}`; null removes it): from then
   * on only requests acting for one of these principals (or for none) see it.
   */
  updateAccess(id: string, access: string[] | null, options: ReadOptions = {}): Promise<DocumentRecord> {
    return this.#call<DocumentRecord>('PATCH', `/v1/documents/${encodeURIComponent(id)}`, {
      ...options,
      json: { access },
    });
  }

  deleteDocument(id: string, options: ReadOptions = {}): Promise<void> {
    return this.#call<void>('DELETE', `/v1/documents/${encodeURIComponent(id)}`, options);
  }

  /**
   * Deletes the documents a filter and/or ids select (`POST /v1/documents/delete`), each with its
   * chunks and file, at most 10,000 per call: while `has_more` is true, call again.
   */
  deleteDocuments(options: DeleteDocumentsOptions): Promise<DeleteDocumentsResult> {
    const body = {
      ...(options.filter === undefined ? {} : { filter: options.filter }),
      ...(options.documentIds === undefined ? {} : { document_ids: options.documentIds }),
      ...(options.partitions === undefined ? {} : { partitions: options.partitions }),
      ...(options.principals === undefined ? {} : { principals: options.principals }),
    };
    return this.#call<DeleteDocumentsResult>('POST', '/v1/documents/delete', {
      json: body,
      signal: options.signal,
    });
  }

  /**
   * The best-matching chunks (`POST /v1/query`), by keyword, semantic or hybrid search; each
   * successful query counts once towards usage. Each result carries `scores.keyword` (BM25 as a
   * share, 0–1, of the most the query could score; `score` in keyword mode) and
   * `scores.semantic` (cosine), null when the chunk was not in that list, and `scores.rerank`, the
   * reranker's score (null when not reranked); `degraded` says a provider failed and
   * `degraded_reasons` which: a hybrid answer is keyword-only (`embeddings_unavailable`), or a
   * reranked one is in the first stage's order (`rerank_unavailable`).
   */
  query(options: QueryOptions): Promise<QueryResponse> {
    const body = {
      query: options.query,
      ...(options.topK === undefined ? {} : { top_k: options.topK }),
      ...(options.filter === undefined ? {} : { filter: options.filter }),
      ...(options.documentIds === undefined ? {} : { document_ids: options.documentIds }),
      ...(options.partitions === undefined ? {} : { partitions: options.partitions }),
      ...(options.principals === undefined ? {} : { principals: options.principals }),
      ...(options.mode === undefined ? {} : { mode: options.mode }),
      ...(options.semanticWeight === undefined ? {} : { semantic_weight: options.semanticWeight }),
      ...(options.maxChunksPerDocument === undefined
        ? {}
        : { max_chunks_per_document: options.maxChunksPerDocument }),
      ...(options.scoreThreshold === undefined ? {} : { score_threshold: options.scoreThreshold }),
      ...(options.rerank === undefined ? {} : { rerank: options.rerank }),
      ...(options.rerankCandidates === undefined ? {} : { rerank_candidates: options.rerankCandidates }),
      ...(options.language === undefined ? {} : { language: options.language }),
    };
    return this.#call<QueryResponse>('POST', '/v1/query', { json: body, signal: options.signal });
  }

  /**
   * Starts an evaluation (`POST /v1/evaluations`): each run sends every query through the query
   * path and scores the ranking against the judged documents. Resolves with its id; poll
   * getEvaluation (or use waitForEvaluation) for the figures.
   */
  async createEvaluation(request: EvaluationRequest, options: RequestOptions = {}): Promise<string> {
    const answer = await this.#call<{ evaluation_id: string }>('POST', '/v1/evaluations', {
      json: request,
      signal: options.signal,
    });
    return answer.evaluation_id;
  }

  /** An evaluation's status and, once done, each run's figures and each query's ranks. */
  getEvaluation(id: string, options: RequestOptions = {}): Promise<Evaluation> {
    return this.#call<Evaluation>('GET', `/v1/evaluations/${encodeURIComponent(id)}`, options);
  }

  /** The organisation's evaluations, newest first (`limit` 1–100, default 20; `cursor` from the last page). */
  listEvaluations(
    options: RequestOptions & { limit?: number; cursor?: string } = {},
  ): Promise<EvaluationPage> {
    const params = new URLSearchParams();
    if (options.limit !== undefined) params.set('limit', String(options.limit));
    if (options.cursor !== undefined) params.set('cursor', options.cursor);
    const query = params.size === 0 ? '' : `?${params}`;
    return this.#call<EvaluationPage>('GET', `/v1/evaluations${query}`, { signal: options.signal });
  }

  /**
   * Polls getEvaluation every `pollMs` (default 1 s) until the evaluation is `done` or `failed`,
   * and returns it. Throws WaitTimeoutError past `timeoutMs` (default 1 hour).
   */
  async waitForEvaluation(
    id: string,
    options: RequestOptions & {
      timeoutMs?: number;
      pollMs?: number;
      onProgress?: (e: Evaluation) => void;
    } = {},
  ): Promise<Evaluation> {
    const deadline = Date.now() + (options.timeoutMs ?? 3_600_000);
    for (;;) {
      const evaluation = await this.getEvaluation(id, { signal: options.signal });
      options.onProgress?.(evaluation);
      if (evaluation.status === 'done' || evaluation.status === 'failed') return evaluation;
      if (Date.now() >= deadline) throw new WaitTimeoutError([id], [], options.timeoutMs ?? 3_600_000);
      await sleep(options.pollMs ?? 1000, options.signal);
    }
  }

  /**
   * Registers a webhook endpoint (`POST /v1/webhooks`). The answer's `secret` is shown only now:
   * keep it to verify `webhook-signature` (Standard Webhooks). Every event when `events` is absent.
   */
  createWebhook(
    url: string,
    options: RequestOptions & { events?: WebhookEvent[]; description?: string } = {},
  ): Promise<CreatedWebhook> {
    const body = {
      url,
      ...(options.events === undefined ? {} : { events: options.events }),
      ...(options.description === undefined ? {} : { description: options.description }),
    };
    return this.#call<CreatedWebhook>('POST', '/v1/webhooks', { json: body, signal: options.signal });
  }

  async listWebhooks(options: RequestOptions = {}): Promise<Webhook[]> {
    return (await this.#call<{ webhooks: Webhook[] }>('GET', '/v1/webhooks', options)).webhooks;
  }

  getWebhook(id: string, options: RequestOptions = {}): Promise<Webhook> {
    return this.#call<Webhook>('GET', `/v1/webhooks/${encodeURIComponent(id)}`, options);
  }

  deleteWebhook(id: string, options: RequestOptions = {}): Promise<void> {
    return this.#call<void>('DELETE', `/v1/webhooks/${encodeURIComponent(id)}`, options);
  }

  /** Queues a signed `webhook.test` message; resolves with its `webhook-id`. */
  async testWebhook(id: string, options: RequestOptions = {}): Promise<string> {
    const path = `/v1/webhooks/${encodeURIComponent(id)}/test`;
    return (await this.#call<{ message_id: string }>('POST', path, options)).message_id;
  }

  /** The endpoint's newest delivery attempts (at most `limit`, 20 by default) and its waiting messages. */
  listWebhookDeliveries(
    id: string,
    options: RequestOptions & { limit?: number } = {},
  ): Promise<WebhookDeliveries> {
    const query = options.limit === undefined ? '' : `?limit=${options.limit}`;
    return this.#call<WebhookDeliveries>('GET', `/v1/webhooks/${encodeURIComponent(id)}/deliveries${query}`, {
      signal: options.signal,
    });
  }

  /**
   * Registers a source (`POST /v1/sources`): an S3 bucket (or the part of it under a prefix), or a
   * web site crawled from start URLs and/or a sitemap, whose items become documents and stay in
   * sync with it. Nothing is read before its first run.
   */
  createSource(source: NewSource, options: RequestOptions = {}): Promise<Source> {
    return this.#call<Source>('POST', '/v1/sources', { json: source, signal: options.signal });
  }

  async listSources(options: RequestOptions = {}): Promise<Source[]> {
    return (await this.#call<{ sources: Source[] }>('GET', '/v1/sources', options)).sources;
  }

  getSource(id: string, options: RequestOptions = {}): Promise<Source> {
    return this.#call<Source>('GET', `/v1/sources/${encodeURIComponent(id)}`, options);
  }

  updateSource(id: string, changes: SourceUpdate, options: RequestOptions = {}): Promise<Source> {
    return this.#call<Source>('PATCH', `/v1/sources/${encodeURIComponent(id)}`, {
      json: changes,
      signal: options.signal,
    });
  }

  /** Deletes the source; its documents are deleted in the background. */
  deleteSource(id: string, options: RequestOptions = {}): Promise<void> {
    return this.#call<void>('DELETE', `/v1/sources/${encodeURIComponent(id)}`, options);
  }

  /** Queues a run of the source; resolves with its id (409 `sync_in_progress` while one is under way). */
  async syncSource(id: string, options: RequestOptions = {}): Promise<string> {
    const path = `/v1/sources/${encodeURIComponent(id)}/sync`;
    return (await this.#call<{ run_id: string }>('POST', path, options)).run_id;
  }

  /** The source's runs, newest first (at most `limit`, 20 by default). */
  async listSourceRuns(id: string, options: RequestOptions & { limit?: number } = {}): Promise<SourceRun[]> {
    const query = options.limit === undefined ? '' : `?limit=${options.limit}`;
    const path = `/v1/sources/${encodeURIComponent(id)}/runs${query}`;
    return (await this.#call<{ runs: SourceRun[] }>('GET', path, { signal: options.signal })).runs;
  }

  /** The organisation the key belongs to (id, name, rate limit) and the key's id and scopes. */
  /** The partitions the key may see, with their documents, chunks and bytes (`GET /v1/partitions`). */
  listPartitions(options: RequestOptions = {}): Promise<PartitionList> {
    return this.#call<PartitionList>('GET', '/v1/partitions', options);
  }

  /**
   * Deletes every document of a partition in the background (`DELETE /v1/partitions/{name}`);
   * listPartitions shows it as `deleting` until it is gone.
   */
  deletePartition(name: string, options: RequestOptions = {}): Promise<PartitionDeleteAck> {
    return this.#call<PartitionDeleteAck>('DELETE', `/v1/partitions/${encodeURIComponent(name)}`, options);
  }

  org(options: RequestOptions = {}): Promise<OrgInfo> {
    return this.#call<OrgInfo>('GET', '/v1/org', options);
  }

  /**
   * Queries per UTC day for the last 30 days (today first) and the rate limit; with
   * `byPartition`, by partition too; with `partition`, that partition's queries only.
   */
  usage(options: UsageOptions = {}): Promise<UsageReport> {
    const { partition, byPartition, ...rest } = options;
    return this.#call<UsageReport>('GET', '/v1/usage', {
      ...rest,
      query: { partition, by: byPartition ? 'partition' : undefined },
    });
  }

  /**
   * Polls batch status (one request per 100 documents) until every document is `ready` or
   * `failed`, and returns their records in the order given. Throws WaitTimeoutError past
   * `timeoutMs`, and a 404 DocindexError if a document disappears (deleted meanwhile).
   */
  async waitForDocuments(ids: string[], options: WaitOptions = {}): Promise<DocumentRecord[]> {
    const timeoutMs = options.timeoutMs ?? 600_000;
    const deadline = Date.now() + timeoutMs;
    const unique = [...new Set(ids)];
    const latest = new Map<string, DocumentRecord>();
    let interval = options.intervalMs ?? 250;
    for (;;) {
      const pending = unique.filter((id) => !isDone(latest.get(id)));
      const records = await this.getDocuments(pending, { signal: options.signal });
      for (const doc of records) latest.set(doc.id, doc);
      const missing = pending.filter((id) => !records.some((doc) => doc.id === id));
      if (missing.length > 0) {
        throw new DocindexError({
          status: 404,
          code: 'not_found',
          title: 'Not found',
          detail: `No document with id ${missing.join(', ')} (unknown, or deleted while waiting).`,
        });
      }
      const documents = unique.map((id) => latest.get(id)!);
      options.onProgress?.(summarise(documents));
      if (documents.every(isDone)) return documents;
      if (Date.now() + interval > deadline) {
        throw new WaitTimeoutError(
          documents.filter((doc) => !isDone(doc)).map((doc) => doc.id),
          documents,
          timeoutMs,
        );
      }
      await sleep(interval, options.signal);
      interval = Math.min(MAX_POLL_INTERVAL_MS, Math.round(interval * 1.5));
    }
  }

  #call<T>(method: string, path: string, options: CallOptions = {}): Promise<T> {
    return callApi<T>(this.#transport, method, path, options);
  }
}

/** The file name of a Content-Disposition header: its `filename*` (RFC 5987) or else `filename`. */
function filenameOfDisposition(header: string | null): string | null {
  if (header === null) return null;
  const extended = /filename\*=UTF-8''([^;]+)/i.exec(header);
  if (extended?.[1]) {
    try {
      return decodeURIComponent(extended[1].trim());
    } catch {
      // Malformed: fall back to the plain form.
    }
  }
  const plain = /filename="([^"]*)"/i.exec(header);
  return plain?.[1] ?? null;
}

function isDone(doc: DocumentRecord | undefined): boolean {
  return doc !== undefined && (doc.status === 'ready' || doc.status === 'failed');
}

function summarise(documents: DocumentRecord[]): WaitProgress {
  const progress: WaitProgress = {
    total: documents.length,
    queued: 0,
    processing: 0,
    ready: 0,
    failed: 0,
    documents,
  };
  for (const doc of documents) progress[doc.status] += 1;
  return progress;
}

/** The chunk settings given, as the JSON bodies name them. */
function chunkFields(options: ChunkOptions): { chunk_size?: number; chunk_overlap?: number } {
  return {
    ...(options.chunkSize === undefined ? {} : { chunk_size: options.chunkSize }),
    ...(options.chunkOverlap === undefined ? {} : { chunk_overlap: options.chunkOverlap }),
  };
}

function newIdempotencyKey(): string {
  return globalThis.crypto.randomUUID();
}

function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot < 0 ? '' : name.slice(dot).toLowerCase();
}

/** A file to upload as a Blob with a name: a path (Node only; streamed from disk) or a Blob/File. */
async function fileBlob(
  file: string | Blob,
  name: string | undefined,
): Promise<{ blob: Blob; filename: string }> {
  if (typeof file === 'string') {
    const { openAsBlob } = await import('node:fs');
    const base = file.split(/[\\/]/).pop() ?? file;
    const blob = await openAsBlob(file, {
      type: FILE_TYPES[extensionOf(base)] ?? 'application/octet-stream',
    });
    return { blob, filename: name ?? base };
  }
  // A bare Blob has no name; an extension from its type helps the server agree on the format.
  const filename =
    name ??
    ('name' in file && typeof file.name === 'string'
      ? file.name
      : `upload${Object.entries(FILE_TYPES).find(([, type]) => file.type.startsWith(type))?.[0] ?? ''}`);
  return { blob: file, filename };
}
