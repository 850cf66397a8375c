// Reading and deleting an org's documents. Another org's document is indistinguishable from a
// missing one: every lookup is scoped by org id in the store itself. A document of a partition
// the key may not see (domain/partitions.ts), or whose access list the request's principals do not
// reach (domain/principals.ts), is missing alike: lists and deletes by filter are restricted in
// the store, single documents checked on their record (a PATCH checks it in its own transaction,
// as it may change the access list).
import type { Readable } from 'node:stream';
import { ERRORS } from './errors.js';
import { type Filter, type FilterJson, parseFilter, parseFilterText } from './filter.js';
import { type MetadataPatch, mergeMetadata } from './metadata.js';
import { decodePageCursor, encodePageCursor } from './page-cursor.js';
import { canSee, type DocumentAccess, partitionsToRead, seenByOf } from './partitions.js';
import { BlobNotFoundError, type BlobStore, type DocumentStore } from './ports.js';
import { displayFilename } from './text.js';
import type { DocumentRecord, DocumentStatus, StoredChunk } from './types.js';

/** Chunks read per step while a document's text is streamed back. */
const CONTENT_PAGE = 200;

/** A document's original file, ready to stream. */
export interface OriginalFile {
  stream: Readable;
  /** The detected format's media type. */
  contentType: string;
  /** The uploaded file's name, or a name made from the URL's last segment; null when neither. */
  filename: string | null;
  bytes: number | null;
}

/** Most documents one delete-by-filter request deletes; `hasMore` tells the caller to repeat it. */
export const MAX_DELETE_PER_REQUEST = 10_000;
/** Documents looked up per step of a delete-by-filter (each then deleted as DELETE /{id} does). */
const DELETE_SLICE = 100;

export interface ListOptions {
  limit: number;
  cursor: string | null;
  status: DocumentStatus | null;
  ids: string[] | null;
  contentSha256: string | null;
  /** Only the document with this external_id. */
  externalId?: string | null;
  /** The `filter` query parameter as sent (JSON text); parsed here, 400 at /query/filter if invalid. */
  filter: string | null;
  /** Only these partitions (all the key's own); null: every one the key may see. */
  partitions?: string[] | null;
}

/** What POST /v1/documents/delete selects: documents passing `filter` and among `documentIds`. */
export interface DeleteSelection {
  filter: FilterJson | undefined;
  documentIds: string[] | undefined;
  /** Only these partitions (all the key's own); absent: every one the key may see. */
  partitions?: string[] | undefined;
}

export interface DocumentServiceOptions {
  /** Most documents one deleteMany call deletes (default MAX_DELETE_PER_REQUEST). */
  maxDeletePerRequest?: number;
}

export interface DocumentPage {
  documents: DocumentRecord[];
  nextCursor: string | null;
}

export class DocumentService {
  private readonly maxDeletePerRequest: number;

  constructor(
    private readonly documents: DocumentStore,
    private readonly blobs: BlobStore,
    options: DocumentServiceOptions = {},
  ) {
    this.maxDeletePerRequest = options.maxDeletePerRequest ?? MAX_DELETE_PER_REQUEST;
  }

  async get(orgId: string, access: DocumentAccess, id: string): Promise<DocumentRecord> {
    const doc = await this.documents.getDocument(orgId, id);
    if (!doc || !canSee(access, doc)) throw ERRORS.documentNotFound(id);
    return doc;
  }

  async list(orgId: string, access: DocumentAccess, options: ListOptions): Promise<DocumentPage> {
    const after = options.cursor === null ? null : decodePageCursor(options.cursor);
    const filter = options.filter === null ? null : parseFilterText(options.filter, '/query/filter');
    const partitions = partitionsToRead(access, options.partitions, '/query/partitions');
    const documents = await this.documents.listDocuments({
      orgId,
      limit: options.limit + 1,
      after,
      status: options.status,
      ids: options.ids,
      contentSha256: options.contentSha256,
      externalId: options.externalId ?? null,
      filter,
      partitions,
      principals: access.principals,
    });
    const page = documents.slice(0, options.limit);
    const last = page[page.length - 1];
    const nextCursor =
      documents.length > options.limit && last ? encodePageCursor(last.createdAt, last.id) : null;
    return { documents: page, nextCursor };
  }

  /** A page of a ready document's chunks in index order; 409 not_ready before it is ready. */
  async chunks(
    orgId: string,
    access: DocumentAccess,
    id: string,
    options: { limit: number; cursor: string | null },
  ): Promise<{ chunks: StoredChunk[]; nextCursor: string | null }> {
    const doc = await this.get(orgId, access, id);
    if (doc.status !== 'ready') throw ERRORS.notReady(id, doc.status);
    const cursor = options.cursor === null ? null : decodeChunkCursor(options.cursor);
    const afterIndex = cursor?.afterIndex ?? -1;
    const found = await this.documents.listChunks(orgId, id, { afterIndex, limit: options.limit + 1 });
    if (found === null) throw ERRORS.documentNotFound(id);
    // A cursor pages through one version: after a swap its next page would be another text's.
    if (cursor?.version != null && cursor.version !== found.version) {
      throw ERRORS.versionChanged(id, cursor.version, found.version);
    }
    const chunks = found.chunks.slice(0, options.limit);
    const last = chunks[chunks.length - 1];
    const nextCursor =
      found.chunks.length > options.limit && last ? encodeChunkCursor(last.index, found.version) : null;
    return { chunks, nextCursor };
  }

  /**
   * A ready document's extracted text, as its chunks hold it: each chunk adds what follows the
   * previous one's end, so the overlaps appear once. Read a page of chunks at a time, so a large
   * document is never held whole. 409 not_ready before it is ready; the text pieces come after.
   */
  async content(orgId: string, access: DocumentAccess, id: string): Promise<AsyncIterable<string>> {
    const doc = await this.get(orgId, access, id);
    if (doc.status !== 'ready')
      throw ERRORS.notReady(id, doc.status, 'its text can be read once it is ready');
    return readDocumentText(this.documents, orgId, id);
  }

  /**
   * The file a document was uploaded as or downloaded from its URL, byte for byte. A document sent
   * as JSON text has none (404, saying so); a URL not yet downloaded answers 409 not_ready.
   */
  async file(orgId: string, access: DocumentAccess, id: string): Promise<OriginalFile> {
    const doc = await this.get(orgId, access, id);
    if (doc.source.type === 'text') throw ERRORS.noOriginalFile(id);
    const input = await this.documents.loadJobInput(id);
    if (!input) throw ERRORS.documentNotFound(id);
    // The current version's file: a pending version's stays out of sight until it is ready.
    if (input.currentBlobKey === null) {
      // Ready without a file: it was there (its text came from it) and was deleted after indexing.
      if (doc.status === 'ready') throw ERRORS.originalNotKept(id);
      if (doc.status === 'failed') throw ERRORS.noOriginalFile(id);
      throw ERRORS.notReady(id, doc.status, 'its file can be read once it is downloaded');
    }
    let stream: Readable;
    try {
      stream = await this.blobs.openRead(input.currentBlobKey);
    } catch (error) {
      // Deleted between the lookup and the read.
      if (error instanceof BlobNotFoundError) throw ERRORS.documentNotFound(id);
      throw error;
    }
    return {
      stream,
      contentType: doc.source.content_type ?? 'application/octet-stream',
      filename: displayFilename(doc.source.filename) ?? filenameOfUrl(doc.source.url),
      bytes: doc.source.bytes,
    };
  }

  /**
   * Sets and removes metadata keys (null removes) and, when `access` is given, replaces the
   * access list (null removes it); the record as it is afterwards.
   */
  async updateMetadata(
    orgId: string,
    access: DocumentAccess,
    id: string,
    patch: MetadataPatch,
    accessList?: string[] | null,
  ): Promise<DocumentRecord> {
    const doc = await this.documents.updateMetadata(orgId, id, (current) => mergeMetadata(current, patch), {
      ...(accessList === undefined ? {} : { access: accessList }),
      seenBy: seenByOf(access),
    });
    if (!doc) throw ERRORS.documentNotFound(id);
    return doc;
  }

  async delete(orgId: string, access: DocumentAccess, id: string): Promise<void> {
    // The store checks what the request may see while it holds the row: an access list changed
    // a moment earlier is the one that counts.
    if (!(await this.deleteOne(orgId, id, seenByOf(access)))) throw ERRORS.documentNotFound(id);
  }

  /**
   * Deletes the org's documents that pass the filter and are among the ids (either may be left
   * out, not both), each as `delete` does: record, chunks and stored file. At most
   * maxDeletePerRequest of them; `hasMore` says whether others still match. Ids that are unknown
   * or another org's are passed over, as GET /v1/documents?ids= does.
   */
  async deleteMany(
    orgId: string,
    access: DocumentAccess,
    selection: DeleteSelection,
  ): Promise<{ deleted: number; hasMore: boolean }> {
    const filter = this.deleteFilter(selection);
    const partitions = partitionsToRead(access, selection.partitions, '/partitions');
    const ids = selection.documentIds === undefined ? null : [...new Set(selection.documentIds)];
    const { principals } = access;
    const matching = (limit: number) => this.matching(orgId, { ids, filter, partitions, principals }, limit);
    const seenBy = seenByOf(access);
    let deleted = 0;
    // Each step lists the first documents still matching: those deleted are gone from the next
    // list, so the steps are bounded by the request's limit even when another request deletes too.
    for (let examined = 0; examined < this.maxDeletePerRequest; ) {
      const want = Math.min(DELETE_SLICE, this.maxDeletePerRequest - examined);
      const found = await matching(want);
      examined += found.length;
      for (const doc of found) if (await this.deleteOne(orgId, doc.id, seenBy)) deleted += 1;
      if (found.length < want) return { deleted, hasMore: false };
    }
    return { deleted, hasMore: (await matching(1)).length > 0 };
  }

  private deleteFilter(selection: DeleteSelection): Filter | null {
    if (selection.filter === undefined && selection.documentIds === undefined) {
      throw ERRORS.invalid('Send `filter`, `document_ids` or both to say which documents to delete.', [
        { pointer: '', message: 'needs filter or document_ids' },
      ]);
    }
    const filter = selection.filter === undefined ? null : parseFilter(selection.filter, '/filter');
    if (filter === null && selection.documentIds === undefined) {
      throw ERRORS.invalid(
        'An empty filter matches every document; name at least one condition (or document_ids).',
        [{ pointer: '/filter', message: 'an empty filter would delete every document' }],
      );
    }
    return filter;
  }

  /**
   * Deletes up to `limit` documents of the partition, each as `delete` does; how many it found
   * (fewer than `limit`: the partition is empty now).
   */
  async deletePartitionSlice(orgId: string, partition: string, limit: number): Promise<number> {
    const found = await this.matching(orgId, { ids: null, filter: null, partitions: [partition] }, limit);
    for (const doc of found) await this.deleteOne(orgId, doc.id);
    return found.length;
  }

  /** Whether the partition holds a document. */
  async partitionHolds(orgId: string, partition: string): Promise<boolean> {
    return (await this.matching(orgId, { ids: null, filter: null, partitions: [partition] }, 1)).length > 0;
  }

  /** The org's first `limit` documents among the ids, passing the filter, in the partitions. */
  private matching(
    orgId: string,
    where: {
      ids: string[] | null;
      filter: Filter | null;
      partitions: string[] | null;
      principals?: readonly string[] | null;
    },
    limit: number,
  ): Promise<DocumentRecord[]> {
    return this.documents.listDocuments({
      orgId,
      limit,
      after: null,
      status: null,
      contentSha256: null,
      ...where,
    });
  }

  private async deleteOne(orgId: string, id: string, seenBy?: DocumentAccess): Promise<boolean> {
    const removed = await this.documents.deleteDocument(orgId, id, seenBy);
    if (!removed) return false;
    if (removed.blobKey) await this.blobs.delete(removed.blobKey);
    if (removed.pendingBlobKey) await this.blobs.delete(removed.pendingBlobKey);
    return true;
  }
}

/**
 * A document's extracted text as its current version's chunks hold it: each chunk adds what
 * follows the previous one's end, so the overlaps appear once. Read a page of chunks at a time,
 * so a large document is never held whole.
 */
export function readDocumentText(documents: DocumentStore, orgId: string, id: string): AsyncIterable<string> {
  return {
    async *[Symbol.asyncIterator]() {
      let afterIndex = -1;
      let end = 0;
      let version: number | null = null;
      for (;;) {
        const page = await documents.listChunks(orgId, id, { afterIndex, limit: CONTENT_PAGE });
        // Deleted while being read: the text simply ends.
        if (page === null) return;
        // A new version swapped in while the text was being read: what follows would be another
        // text's. The reader gets an error (an HTTP response is cut off) rather than a mix of two.
        if (version !== null && page.version !== version)
          throw ERRORS.versionChanged(id, version, page.version);
        version = page.version;
        for (const chunk of page.chunks) {
          const skip = Math.max(0, end - chunk.charStart);
          if (skip < chunk.text.length) yield chunk.text.slice(skip);
          end = Math.max(end, chunk.charEnd);
          afterIndex = chunk.index;
        }
        if (page.chunks.length < CONTENT_PAGE) return;
      }
    },
  };
}

/** The last path segment of a URL, decoded, as a file name; null when there is none. */
function filenameOfUrl(url: string | null): string | null {
  if (url === null || !URL.canParse(url)) return null;
  const segment = new URL(url).pathname.split('/').pop() ?? '';
  try {
    return displayFilename(decodeURIComponent(segment));
  } catch {
    return displayFilename(segment);
  }
}

function encodeChunkCursor(index: number, version: number): string {
  return Buffer.from(JSON.stringify(['chunk', index, version])).toString('base64url');
}

/** A chunk cursor: the last index read and, in cursors made since versions exist, its version. */
function decodeChunkCursor(cursor: string): { afterIndex: number; version: number | null } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    parsed = null;
  }
  if (
    !Array.isArray(parsed) ||
    (parsed.length !== 2 && parsed.length !== 3) ||
    parsed[0] !== 'chunk' ||
    !Number.isSafeInteger(parsed[1]) ||
    (parsed.length === 3 && !Number.isSafeInteger(parsed[2]))
  ) {
    throw ERRORS.invalid('cursor is not a value returned as next_cursor.', [
      { pointer: '/query/cursor', message: 'unrecognised cursor' },
    ]);
  }
  return { afterIndex: parsed[1] as number, version: parsed.length === 3 ? (parsed[2] as number) : null };
}
