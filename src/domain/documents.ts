// Reading and deleting an org's documents. Another org's document is indistinguishable from a
// missing one: every lookup is scoped by org id in the store itself.
import { ERRORS } from './errors.js';
import { type MetadataPatch, mergeMetadata } from './metadata.js';
import { decodePageCursor, encodePageCursor } from './page-cursor.js';
import type { BlobStore, DocumentStore } from './ports.js';
import type { DocumentRecord, DocumentStatus, StoredChunk } from './types.js';

export interface ListOptions {
  limit: number;
  cursor: string | null;
  status: DocumentStatus | null;
  ids: string[] | null;
  contentSha256: string | null;
}

export interface DocumentPage {
  documents: DocumentRecord[];
  nextCursor: string | null;
}

export class DocumentService {
  constructor(
    private readonly documents: DocumentStore,
    private readonly blobs: BlobStore,
  ) {}

  async get(orgId: string, id: string): Promise<DocumentRecord> {
    const doc = await this.documents.getDocument(orgId, id);
    if (!doc) throw ERRORS.documentNotFound(id);
    return doc;
  }

  async list(orgId: string, options: ListOptions): Promise<DocumentPage> {
    const after = options.cursor === null ? null : decodePageCursor(options.cursor);
    const documents = await this.documents.listDocuments({
      orgId,
      limit: options.limit + 1,
      after,
      status: options.status,
      ids: options.ids,
      contentSha256: options.contentSha256,
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
    id: string,
    options: { limit: number; cursor: string | null },
  ): Promise<{ chunks: StoredChunk[]; nextCursor: string | null }> {
    const doc = await this.get(orgId, id);
    if (doc.status !== 'ready') throw ERRORS.notReady(id, doc.status);
    const afterIndex = options.cursor === null ? -1 : decodeChunkCursor(options.cursor);
    const found = await this.documents.listChunks(orgId, id, { afterIndex, limit: options.limit + 1 });
    if (found === null) throw ERRORS.documentNotFound(id);
    const chunks = found.slice(0, options.limit);
    const last = chunks[chunks.length - 1];
    const nextCursor = found.length > options.limit && last ? encodeChunkCursor(last.index) : null;
    return { chunks, nextCursor };
  }

  /** Sets and removes metadata keys (null removes); the record as it is afterwards. */
  async updateMetadata(orgId: string, id: string, patch: MetadataPatch): Promise<DocumentRecord> {
    const doc = await this.documents.updateMetadata(orgId, id, (current) => mergeMetadata(current, patch));
    if (!doc) throw ERRORS.documentNotFound(id);
    return doc;
  }

  async delete(orgId: string, id: string): Promise<void> {
    const removed = await this.documents.deleteDocument(orgId, id);
    if (!removed) throw ERRORS.documentNotFound(id);
    if (removed.blobKey) await this.blobs.delete(removed.blobKey);
  }
}

function encodeChunkCursor(index: number): string {
  return Buffer.from(JSON.stringify(['chunk', index])).toString('base64url');
}

function decodeChunkCursor(cursor: string): number {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    parsed = null;
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 2 ||
    parsed[0] !== 'chunk' ||
    !Number.isSafeInteger(parsed[1])
  ) {
    throw ERRORS.invalid('cursor is not a value returned as next_cursor.', [
      { pointer: '/query/cursor', message: 'unrecognised cursor' },
    ]);
  }
  return parsed[1] as number;
}
