// Accepting documents: validates what the schema cannot, commits the rows (which are the jobs
// for table-backed queues), then hands them to the queue. Nothing is acknowledged before the
// commit; a queue hiccup after it is repaired by the reconciler, never reported as a failure.
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { ERRORS } from './errors.js';
import type { BlobStore, BlobWrite, Clock, DocumentStore, JobQueue } from './ports.js';
import { BlobTooLargeError, newBlobKey } from './ports.js';
import { cleanMetadata, cleanText } from './text.js';
import type { DocumentSource, Metadata, NewDocument } from './types.js';

export interface IngestAck {
  status: 'accepted';
  org_id: string;
  queued: number;
  document_ids: string[];
}

export interface TextDocumentInput {
  text: string;
  metadata?: Metadata;
}

/** An upload stored and checked, not yet committed. */
export interface StagedFile {
  blob: BlobWrite;
  filename: string | null;
  metadata: Metadata;
  contentType: string;
}

export interface ChunkSettings {
  chunkSize: number;
  chunkOverlap: number;
}

/** Decides a stored upload's format from its bytes and name. */
export type FormatSniffer = (input: {
  path: string;
  filename: string | null;
}) => Promise<{ ok: true; contentType: string } | { ok: false; detail: string }>;

/** Decides at submit time whether a URL may be fetched at all. */
export type UrlScreen = (raw: string) => { ok: true; displayUrl: string } | { ok: false; reason: string };

export interface IngestionLimits {
  maxQueuedDocuments: number;
  maxUploadBytes: number;
  tokenizer: string;
}

export interface IngestionDeps {
  documents: DocumentStore;
  queue: JobQueue;
  /** Where URL documents go first: their download lane. */
  downloadQueue: JobQueue;
  blobs: BlobStore;
  clock: Clock;
  sniffFormat: FormatSniffer;
  screenUrl: UrlScreen;
  limits: IngestionLimits;
  /** Called when the enqueue after a commit fails (the reconciler will retry it). */
  onEnqueueError?: (error: unknown) => void;
}

const PENDING_COUNT_TTL_MS = 1_000;

export class IngestionService {
  private pendingCache: { count: number; at: number } | null = null;

  constructor(private readonly deps: IngestionDeps) {}

  async ingestText(orgId: string, documents: TextDocumentInput[], chunks: ChunkSettings): Promise<IngestAck> {
    checkChunkSettings(chunks);
    await this.checkBackpressure(documents.length);
    const now = this.deps.clock.now();
    const rows = documents.map((doc) =>
      this.newDocument(orgId, now, chunks, doc.metadata ?? {}, {
        source: { type: 'text', filename: null, url: null, content_type: 'text/plain', bytes: null },
        text: cleanText(doc.text),
      }),
    );
    return this.commit(orgId, rows);
  }

  /**
   * Streams an upload into the blob store (≤ maxUploadBytes) and checks its format from the bytes.
   * `metadata` is read after the file (multipart parts may come in any order). Nothing is
   * committed yet: commitFile queues it, discardFile removes it.
   */
  async stageFile(
    upload: { stream: Readable; filename: string | null },
    readMetadata: () => Promise<Metadata>,
  ): Promise<StagedFile> {
    await this.checkBackpressure(1);
    let blob: BlobWrite;
    try {
      blob = await this.deps.blobs.put(newBlobKey(), upload.stream, {
        maxBytes: this.deps.limits.maxUploadBytes,
      });
    } catch (error) {
      if (error instanceof BlobTooLargeError) {
        throw ERRORS.payloadTooLarge(
          `The file is larger than the ${this.deps.limits.maxUploadBytes.toLocaleString('en-US')}-byte limit.`,
        );
      }
      throw error;
    }
    try {
      const metadata = await readMetadata();
      if (blob.bytes === 0) throw ERRORS.unsupportedMediaType('The file is empty.');
      const sniffed = await this.deps.blobs.withLocalFile(blob.key, (path) =>
        this.deps.sniffFormat({ path, filename: upload.filename }),
      );
      if (!sniffed.ok) throw ERRORS.unsupportedMediaType(sniffed.detail);
      return { blob, filename: upload.filename, metadata, contentType: sniffed.contentType };
    } catch (error) {
      await this.deps.blobs.delete(blob.key);
      throw error;
    }
  }

  async commitFile(orgId: string, staged: StagedFile): Promise<IngestAck> {
    const row = this.newDocument(orgId, this.deps.clock.now(), DEFAULT_CHUNKS, staged.metadata, {
      source: {
        type: 'file',
        filename: staged.filename,
        url: null,
        content_type: staged.contentType,
        bytes: staged.blob.bytes,
      },
      blobKey: staged.blob.key,
    });
    try {
      return await this.commit(orgId, [row]);
    } catch (error) {
      await this.discardFile(staged);
      throw error;
    }
  }

  discardFile(staged: StagedFile): Promise<void> {
    return this.deps.blobs.delete(staged.blob.key);
  }

  async ingestUrl(orgId: string, url: string, metadata: Metadata): Promise<IngestAck> {
    const screened = this.deps.screenUrl(url);
    if (!screened.ok) throw ERRORS.invalid(screened.reason, [{ pointer: '/url', message: screened.reason }]);
    await this.checkBackpressure(1);
    const row = this.newDocument(orgId, this.deps.clock.now(), DEFAULT_CHUNKS, metadata, {
      source: { type: 'url', filename: null, url: screened.displayUrl, content_type: null, bytes: null },
      fetchUrl: url,
    });
    return this.commit(orgId, [row], this.deps.downloadQueue);
  }

  private newDocument(
    orgId: string,
    createdAt: Date,
    chunks: ChunkSettings,
    metadata: Metadata,
    input: { source: DocumentSource; text?: string; blobKey?: string; fetchUrl?: string },
  ): NewDocument {
    return {
      id: randomUUID(),
      orgId,
      source: input.source,
      metadata: cleanMetadata(metadata),
      chunkSize: chunks.chunkSize,
      chunkOverlap: chunks.chunkOverlap,
      tokenizer: this.deps.limits.tokenizer,
      createdAt,
      text: input.text ?? null,
      blobKey: input.blobKey ?? null,
      fetchUrl: input.fetchUrl ?? null,
    };
  }

  private async commit(orgId: string, rows: NewDocument[], queue = this.deps.queue): Promise<IngestAck> {
    await this.deps.documents.createDocuments(rows);
    if (this.pendingCache) this.pendingCache.count += rows.length;
    try {
      await queue.enqueue(
        rows.map((r) => ({ documentId: r.id, orgId })),
        { created: true },
      );
    } catch (error) {
      this.deps.onEnqueueError?.(error);
    }
    return { status: 'accepted', org_id: orgId, queued: rows.length, document_ids: rows.map((r) => r.id) };
  }

  private async checkBackpressure(incoming: number): Promise<void> {
    const now = Date.now();
    if (!this.pendingCache || now - this.pendingCache.at > PENDING_COUNT_TTL_MS) {
      this.pendingCache = { count: await this.deps.documents.countPending(), at: now };
    }
    if (this.pendingCache.count + incoming > this.deps.limits.maxQueuedDocuments) {
      throw ERRORS.overloaded(5);
    }
  }
}

export const DEFAULT_CHUNKS: ChunkSettings = { chunkSize: 512, chunkOverlap: 64 };

export function checkChunkSettings(chunks: ChunkSettings): void {
  if (chunks.chunkOverlap >= chunks.chunkSize) {
    throw ERRORS.invalid('chunk_overlap must be smaller than chunk_size.', [
      {
        pointer: '/chunk_overlap',
        message: `must be smaller than chunk_size (${chunks.chunkSize}), got ${chunks.chunkOverlap}`,
      },
    ]);
  }
}
