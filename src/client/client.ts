// DocindexClient: a typed client for every docindex endpoint. It retries 429 and 503 answers after
// the wait the server asks for (Retry-After, bounded), sends an Idempotency-Key with every ingest
// (the same key on that call's retries, so a retried ingest never queues a document twice), and
// turns problem+json answers into DocindexError. It uses only fetch, so it runs in Node and in
// browsers; reading a file by path loads node:fs on demand.
// The class is the public surface: each method names its endpoint; where a request is more than
// a path (a body, a form, a query string, a wait), resources/ builds it, a module per resource.

import { type CallOptions, callApi, exchange, type Transport, transportOf } from './http-exchange.js';
import type {
  DeleteDocumentsOptions,
  DocindexClientOptions,
  IngestFileOptions,
  IngestOptions,
  IngestTextOptions,
  IngestUrlOptions,
  ListDocumentsOptions,
  NewContent,
  QueryOptions,
  ReadOptions,
  ReprocessOptions,
  RequestOptions,
  UsageOptions,
  WaitOptions,
} from './options.js';
import {
  deleteDocumentsCall,
  documentFileOf,
  documentsByIds,
  eachDocument,
  listDocumentsCall,
  pollDocuments,
} from './resources/documents.js';
import { pollEvaluation } from './resources/evaluations.js';
import {
  ingestFileCall,
  ingestTextCall,
  ingestUrlCall,
  replaceContentCall,
  reprocessCall,
} from './resources/ingest.js';
import { queryCall } from './resources/query.js';
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
    return this.#call<IngestAck>('POST', '/v1/ingest', ingestTextCall(documents, options));
  }

  /**
   * Uploads one file (`POST /v1/ingest/file`): a path (Node only; streamed from disk, not read into
   * memory) or a Blob/File.
   */
  async ingestFile(file: string | Blob, options: IngestFileOptions = {}): Promise<IngestAck> {
    return this.#call<IngestAck>('POST', '/v1/ingest/file', await ingestFileCall(file, options));
  }

  /** Queues a URL for the service to download (`POST /v1/ingest/url`). */
  ingestUrl(url: string, metadata?: Metadata, options: IngestUrlOptions = {}): Promise<IngestAck> {
    return this.#call<IngestAck>('POST', '/v1/ingest/url', ingestUrlCall(url, metadata, options));
  }

  getDocument(id: string, options: ReadOptions = {}): Promise<DocumentRecord> {
    return this.#call<DocumentRecord>('GET', `/v1/documents/${encodeURIComponent(id)}`, options);
  }

  /** One page of documents, newest first; or, with `ids`, the batch status of up to 100. */
  async listDocuments(options: ListDocumentsOptions = {}): Promise<DocumentPage> {
    return this.#call<DocumentPage>('GET', '/v1/documents', listDocumentsCall(options));
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
    return this.#call<VersionAck>('PUT', path, await replaceContentCall(content, options));
  }

  /**
   * Processes a document again as a new version (`POST /v1/documents/{id}/reprocess`): its text
   * re-chunked, or its original re-extracted, with new chunk settings if given.
   */
  reprocessDocument(id: string, options: ReprocessOptions = {}): Promise<VersionAck> {
    const path = `/v1/documents/${encodeURIComponent(id)}/reprocess`;
    return this.#call<VersionAck>('POST', path, reprocessCall(options));
  }

  /**
   * Every document (optionally of one status, or passing a filter), newest first, following
   * cursors page by page.
   */
  async *iterateDocuments(
    options: { status?: DocumentStatus; filter?: QueryFilter; pageSize?: number } & RequestOptions = {},
  ): AsyncGenerator<DocumentRecord, void, undefined> {
    yield* eachDocument((page) => this.listDocuments(page), options);
  }

  /**
   * The status of any number of documents, in the order asked, one request per 100 ids.
   * Unknown ids (or another organisation's) are left out.
   */
  async getDocuments(ids: string[], options: ReadOptions = {}): Promise<DocumentRecord[]> {
    return documentsByIds((batch) => this.listDocuments(batch), ids, options);
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
    return documentFileOf(response);
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
    return this.#call<DeleteDocumentsResult>('POST', '/v1/documents/delete', deleteDocumentsCall(options));
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
    return this.#call<QueryResponse>('POST', '/v1/query', queryCall(options));
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
    return pollEvaluation((read) => this.getEvaluation(id, read), id, options);
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

  /** The organisation the key belongs to (id, name, rate limit) and the key's id and scopes. */
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
    return pollDocuments((pending, read) => this.getDocuments(pending, read), ids, options);
  }

  #call<T>(method: string, path: string, options: CallOptions = {}): Promise<T> {
    return callApi<T>(this.#transport, method, path, options);
  }
}
