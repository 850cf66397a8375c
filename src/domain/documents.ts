// Reading and deleting an org's documents. Another org's document is indistinguishable from a
// missing one: every lookup is scoped by org id in the store itself.
import { ERRORS } from './errors.js';
import { type MetadataPatch, mergeMetadata } from './metadata.js';
import type { BlobStore, DocumentStore } from './ports.js';
import type { DocumentRecord, DocumentStatus } from './types.js';

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
    const after = options.cursor === null ? null : decodeCursor(options.cursor);
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
    const nextCursor = documents.length > options.limit && last ? encodeCursor(last) : null;
    return { documents: page, nextCursor };
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

function encodeCursor(doc: DocumentRecord): string {
  return Buffer.from(JSON.stringify([doc.createdAt.getTime(), doc.id])).toString('base64url');
}

function decodeCursor(cursor: string): { createdAt: Date; id: string } {
  const invalid = () =>
    ERRORS.invalid('cursor is not a value returned as next_cursor.', [
      { pointer: '/query/cursor', message: 'unrecognised cursor' },
    ]);
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 2 ||
    !Number.isSafeInteger(parsed[0]) ||
    typeof parsed[1] !== 'string' ||
    parsed[1].length > 64
  ) {
    throw invalid();
  }
  return { createdAt: new Date(parsed[0] as number), id: parsed[1] };
}
