// How DocindexClient's document requests are built where there is more to them than a path: the
// list's query string, the delete-by-filter body, a document's original file read from the
// answer's headers, the listings that take several requests (every page, any number of ids) and
// the wait for documents to finish, polling batch status.
import { DocindexError, WaitTimeoutError } from '../errors.js';
import { type CallOptions, sleep } from '../http-exchange.js';
import {
  type DeleteDocumentsOptions,
  type ListDocumentsOptions,
  MAX_IDS_PER_REQUEST,
  type ReadOptions,
  type RequestOptions,
  type WaitOptions,
  type WaitProgress,
} from '../options.js';
import type { DocumentFile, DocumentPage, DocumentRecord, DocumentStatus, QueryFilter } from '../types.js';

const MAX_POLL_INTERVAL_MS = 2_000;

/** `GET /v1/documents`: a page, or with `ids` the batch status of up to 100 documents. */
export function listDocumentsCall(options: ListDocumentsOptions): CallOptions {
  if (options.ids !== undefined && (options.ids.length === 0 || options.ids.length > MAX_IDS_PER_REQUEST)) {
    throw new RangeError(`ids must list 1 to ${MAX_IDS_PER_REQUEST} documents; use getDocuments for more`);
  }
  return {
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
  };
}

/** `POST /v1/documents/delete`: the filter and/or ids, the partitions and principals given. */
export function deleteDocumentsCall(options: DeleteDocumentsOptions): CallOptions {
  const body = {
    ...(options.filter === undefined ? {} : { filter: options.filter }),
    ...(options.documentIds === undefined ? {} : { document_ids: options.documentIds }),
    ...(options.partitions === undefined ? {} : { partitions: options.partitions }),
    ...(options.principals === undefined ? {} : { principals: options.principals }),
  };
  return { json: body, signal: options.signal };
}

/** The answer of `GET /v1/documents/{id}/file` as its bytes, media type and file name. */
export async function documentFileOf(response: Response): Promise<DocumentFile> {
  return {
    data: new Uint8Array(await response.arrayBuffer()),
    contentType: response.headers.get('content-type') ?? 'application/octet-stream',
    filename: filenameOfDisposition(response.headers.get('content-disposition')),
  };
}

/** Every document of the listing, newest first, following cursors page by page. */
export async function* eachDocument(
  listDocuments: (options: ListDocumentsOptions) => Promise<DocumentPage>,
  options: { status?: DocumentStatus; filter?: QueryFilter; pageSize?: number } & RequestOptions,
): AsyncGenerator<DocumentRecord, void, undefined> {
  let cursor: string | undefined;
  do {
    const page = await listDocuments({
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

/** The documents of `ids` that exist, in the order asked, one batch-status request per 100. */
export async function documentsByIds(
  listDocuments: (options: ListDocumentsOptions) => Promise<DocumentPage>,
  ids: string[],
  options: ReadOptions,
): Promise<DocumentRecord[]> {
  const unique = [...new Set(ids)];
  const found = new Map<string, DocumentRecord>();
  for (let i = 0; i < unique.length; i += MAX_IDS_PER_REQUEST) {
    const batch = unique.slice(i, i + MAX_IDS_PER_REQUEST);
    const page = await listDocuments({ ids: batch, limit: MAX_IDS_PER_REQUEST, ...options });
    for (const doc of page.documents) found.set(doc.id, doc);
  }
  return unique.flatMap((id) => {
    const doc = found.get(id);
    return doc ? [doc] : [];
  });
}

/**
 * Polls `getDocuments` until every document is `ready` or `failed`, and returns their records in
 * the order given. Throws WaitTimeoutError past `timeoutMs`, and a 404 DocindexError if a document
 * disappears (deleted meanwhile).
 */
export async function pollDocuments(
  getDocuments: (ids: string[], options: ReadOptions) => Promise<DocumentRecord[]>,
  ids: string[],
  options: WaitOptions,
): Promise<DocumentRecord[]> {
  const timeoutMs = options.timeoutMs ?? 600_000;
  const deadline = Date.now() + timeoutMs;
  const unique = [...new Set(ids)];
  const latest = new Map<string, DocumentRecord>();
  let interval = options.intervalMs ?? 250;
  for (;;) {
    const pending = unique.filter((id) => !isDone(latest.get(id)));
    const records = await getDocuments(pending, { signal: options.signal });
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
