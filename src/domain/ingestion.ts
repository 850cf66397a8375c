// Accepting documents: validates what the schema cannot, commits the rows (which are the jobs
// for table-backed queues), then hands them to the queue (ingest-commit.ts). Nothing is
// acknowledged before the commit; a queue hiccup after it is repaired by the reconciler, never
// reported as a failure. Uploads are staged first (staged-upload.ts) and discarded here unless a
// commit keeps them.
import type { Readable } from 'node:stream';
import { type ChunkSettings, checkChunkSettings, DEFAULT_CHUNKS } from './chunk-settings.js';
import { readDocumentText } from './documents.js';
import { ERRORS } from './errors.js';
import { newUuid } from './ids-and-hashes.js';
import { type IngestAck, IngestCommitter, type VersionAck } from './ingest-commit.js';
import { checkLanguage } from './languages.js';
import { cleanMetadata } from './metadata.js';
import { canSee, type DocumentAccess, partitionToWrite, seenByOf } from './partitions.js';
import type {
  BlobStore,
  Clock,
  DocumentPipeline,
  DocumentStore,
  IdempotencyKeyRef,
  JobQueue,
} from './ports.js';
import { noopTracer, type TraceParent, type Tracer } from './ports.js';
import { accessToWrite } from './principals.js';
import { type StagedUpload, stageUpload } from './staged-upload.js';
import { cleanText } from './text.js';
import type { DocumentSource, Metadata, NewDocument } from './types.js';

export interface TextDocumentInput {
  text: string;
  metadata?: Metadata;
  /** The caller's key: a document of the org that has it gets a new version instead. */
  external_id?: string;
  /** The text's language (ISO 639-1); absent: detected. */
  language?: string;
  /** Its partition; absent: the request's `partition`, else `default`. */
  partition?: string;
  /** The principals that may see it (domain/principals.ts); absent or null: no access list. */
  access?: string[] | null;
}

/** What a file or URL ingest may say besides its content and metadata. */
export interface IngestOptions {
  /** The caller's key: a document of the org that has it gets a new version instead. */
  externalId?: string | null;
  /** The content's language (ISO 639-1); absent: detected. */
  language?: string | null;
  /** Absent: DEFAULT_CHUNKS. */
  chunks?: ChunkSettings;
  /** The partition to ingest into; absent: `default`. */
  partition?: string | null;
  /** The document's access list; absent or null: none. */
  access?: string[] | null;
}

/** The new content of PUT /v1/documents/{id}/content. */
export type NewContent = (
  | { kind: 'text'; text: string }
  | { kind: 'url'; url: string }
  | { kind: 'file'; staged: StagedUpload }
) & {
  /** The new content's language (ISO 639-1); absent: detected. */
  language?: string | null;
  /** A new access list for the document (null removes it); absent keeps the document's. */
  access?: string[] | null;
};

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
  /** What ingest asks of the pipeline: an upload's format, whether a URL may be fetched. */
  pipeline: Pick<DocumentPipeline, 'sniffFormat' | 'screenUrl'>;
  limits: IngestionLimits;
  /** Called when the enqueue after a commit fails (the reconciler will retry it). */
  onEnqueueError?: (error: unknown) => void;
  /** Spans of staging and committing; each job carries the commit's trace context. */
  tracer?: Tracer;
}

export class IngestionService {
  private readonly tracer: Tracer;

  private readonly committer: IngestCommitter;

  constructor(private readonly deps: IngestionDeps) {
    this.tracer = deps.tracer ?? noopTracer;
    this.committer = new IngestCommitter({
      documents: deps.documents,
      queue: deps.queue,
      downloadQueue: deps.downloadQueue,
      blobs: deps.blobs,
      clock: deps.clock,
      maxQueuedDocuments: deps.limits.maxQueuedDocuments,
      ...(deps.onEnqueueError ? { onEnqueueError: deps.onEnqueueError } : {}),
      tracer: this.tracer,
    });
  }

  /**
   * `key`: the request's Idempotency-Key, whose response is stored with the documents. Each
   * document goes into its own `partition`, else `partition` (the request's), else `default`;
   * every one must be among the key's partitions (403 partition_forbidden).
   */
  async ingestText(
    orgId: string,
    access: DocumentAccess,
    documents: TextDocumentInput[],
    chunks: ChunkSettings,
    key?: IdempotencyKeyRef,
    partition?: string | null,
    parent?: TraceParent,
  ): Promise<IngestAck> {
    checkChunkSettings(chunks);
    for (const [i, doc] of documents.entries()) checkLanguage(doc.language, `/documents/${i}/language`);
    const accessLists = documents.map(
      (doc, i) => accessToWrite(doc.access, `/documents/${i}/access`) ?? null,
    );
    const partitions = documents.map((doc) => partitionToWrite(access, doc.partition ?? partition));
    await this.committer.checkBackpressure(documents.length);
    const now = this.deps.clock.now();
    const rows = documents.map((doc, i) =>
      this.newDocument(orgId, now, chunks, doc.metadata ?? {}, {
        source: { type: 'text', filename: null, url: null, content_type: 'text/plain', bytes: null },
        text: cleanText(doc.text),
        externalId: doc.external_id ?? null,
        language: doc.language ?? null,
        partition: partitions[i]!,
        access: accessLists[i]!,
        seenBy: seenByOf(access),
      }),
    );
    return this.committer.commit(orgId, rows, this.deps.queue, key, parent);
  }

  /** Starts a new version of a document from new content (PUT /v1/documents/{id}/content). */
  async replaceContent(
    orgId: string,
    access: DocumentAccess,
    id: string,
    content: NewContent,
    key?: IdempotencyKeyRef,
    parent?: TraceParent,
  ): Promise<VersionAck> {
    checkLanguage(content.language, '/language');
    const accessList = accessToWrite(content.access, '/access');
    const found = await this.deps.documents.getDocument(orgId, id);
    const current = found && canSee(access, found) ? found : null;
    if (!current) throw ERRORS.documentNotFound(id);
    const settings = {
      chunkSize: current.chunkSize,
      chunkOverlap: current.chunkOverlap,
      language: content.language ?? null,
      ...(accessList === undefined ? {} : { access: accessList }),
      // Checked again by the store while it holds the row (the read above may be a moment old).
      seenBy: seenByOf(access),
    };
    if (content.kind === 'text') {
      await this.committer.checkBackpressure(1);
      return this.committer.startVersion(
        orgId,
        id,
        {
          ...settings,
          source: { type: 'text', filename: null, url: null, content_type: 'text/plain', bytes: null },
          text: cleanText(content.text),
          blobKey: null,
          fetchUrl: null,
        },
        undefined,
        key,
        parent,
      );
    }
    if (content.kind === 'url') {
      const screened = this.screen(content.url);
      await this.committer.checkBackpressure(1);
      return this.committer.startVersion(
        orgId,
        id,
        {
          ...settings,
          source: { type: 'url', filename: null, url: screened, content_type: null, bytes: null },
          text: null,
          blobKey: null,
          fetchUrl: content.url,
        },
        undefined,
        key,
        parent,
      );
    }
    const { staged } = content;
    const ack = await this.committer.startVersion(
      orgId,
      id,
      {
        ...settings,
        ...this.fileInput(staged),
        text: null,
        fetchUrl: null,
      },
      undefined,
      key,
      parent,
    );
    staged.keep();
    return ack;
  }

  /**
   * Starts a new version from what the document already holds, with new chunk settings if given:
   * a text document's text (as its chunks hold it), a file's or URL's original (re-extracted, so
   * a failed document can be retried). A version still on its way is not superseded by this: the
   * caller waits for it (409).
   */
  async reprocess(
    orgId: string,
    access: DocumentAccess,
    id: string,
    settings: { chunkSize?: number; chunkOverlap?: number },
    key?: IdempotencyKeyRef,
    parent?: TraceParent,
  ): Promise<VersionAck> {
    const { documents } = this.deps;
    const current = await documents.getDocument(orgId, id);
    if (!current || !canSee(access, current)) throw ERRORS.documentNotFound(id);
    const pending = current.pendingVersion;
    if (pending !== null && pending.status !== 'failed') {
      throw ERRORS.cannotReprocess(
        id,
        `version ${pending.version} is still being processed; retry once it is ready`,
      );
    }
    if (current.status === 'queued' || current.status === 'processing') {
      throw ERRORS.cannotReprocess(id, `it is ${current.status}; retry once it is ready or failed`);
    }
    const chunks = {
      chunkSize: settings.chunkSize ?? current.chunkSize,
      chunkOverlap: settings.chunkOverlap ?? current.chunkOverlap,
    };
    checkChunkSettings(chunks);
    await this.committer.checkBackpressure(1);
    // The check above and the start below are one step in the store: a version started meanwhile
    // (another reprocess, PUT /content) makes this one 409, never lost under it.
    const base = {
      ...chunks,
      source: current.source,
      fetchUrl: null,
      language: current.requestedLanguage,
      seenBy: seenByOf(access),
    };
    const asRead = { version: current.version, pendingVersion: pending?.version ?? null };
    if (current.source.type === 'text') {
      if (current.status !== 'ready') {
        throw ERRORS.cannotReprocess(
          id,
          'its text failed before it was indexed and was not kept; send it again',
        );
      }
      let text = '';
      for await (const piece of readDocumentText(documents, orgId, id)) text += piece;
      return this.committer.startVersion(orgId, id, { ...base, text, blobKey: null }, asRead, key, parent);
    }
    const input = await documents.loadJobInput(id);
    if (!input) throw ERRORS.documentNotFound(id);
    if (input.currentBlobKey === null) {
      throw ERRORS.cannotReprocess(
        id,
        current.status === 'ready'
          ? 'its original file was deleted once it was indexed (KEEP_ORIGINALS=false); send the file again with PUT /content'
          : 'its download failed, so there is no original to read; send the URL again with PUT /content',
      );
    }
    return this.committer.startVersion(
      orgId,
      id,
      { ...base, text: null, blobKey: input.currentBlobKey },
      asRead,
      key,
      parent,
    );
  }

  private screen(url: string): string {
    const screened = this.deps.pipeline.screenUrl(url);
    if (!screened.ok) throw ERRORS.invalid(screened.reason, [{ pointer: '/url', message: screened.reason }]);
    return screened.displayUrl;
  }

  private fileInput(staged: StagedUpload): { source: DocumentSource; blobKey: string } {
    return {
      source: {
        type: 'file',
        filename: staged.filename,
        url: null,
        content_type: staged.contentType,
        bytes: staged.blob.bytes,
      },
      blobKey: staged.blob.key,
    };
  }

  /**
   * Stages an upload (staged-upload.ts: ≤ maxUploadBytes, its format from the bytes; `readMetadata`
   * runs after the file, as multipart parts may come in any order) and hands it to `use`, which
   * may commit it (commitFile, replaceContent). Then the upload is discarded unless a commit kept
   * it: refused, replayed under its Idempotency-Key or failed, its blob is deleted exactly once.
   * The one place a staged upload is discarded.
   */
  async withStagedFile<T>(
    upload: { stream: Readable; filename: string | null },
    readMetadata: () => Promise<Metadata>,
    use: (staged: StagedUpload) => Promise<T>,
    parent?: TraceParent,
  ): Promise<T> {
    const staged = await this.stageFile(upload, readMetadata, parent);
    try {
      return await use(staged);
    } finally {
      await staged.discard();
    }
  }

  private stageFile(
    upload: { stream: Readable; filename: string | null },
    readMetadata: () => Promise<Metadata>,
    parent?: TraceParent,
  ): Promise<StagedUpload> {
    return this.tracer.inSpan('docindex.ingest.stage', { parent }, async (span) => {
      await this.committer.checkBackpressure(1);
      const staged = await stageUpload(
        {
          blobs: this.deps.blobs,
          sniffFormat: (file) => this.deps.pipeline.sniffFormat(file),
          maxUploadBytes: this.deps.limits.maxUploadBytes,
        },
        upload,
        readMetadata,
      );
      span.setAttributes(() => ({
        'docindex.file.bytes': staged.blob.bytes,
        'docindex.content_type': staged.contentType,
      }));
      return staged;
    });
  }

  /** Queues a staged upload as a document, which then owns its blob (withStagedFile discards it otherwise). */
  async commitFile(
    orgId: string,
    access: DocumentAccess,
    staged: StagedUpload,
    options: IngestOptions = {},
    key?: IdempotencyKeyRef,
    parent?: TraceParent,
  ): Promise<IngestAck> {
    const chunks = options.chunks ?? DEFAULT_CHUNKS;
    checkChunkSettings(chunks);
    const partition = partitionToWrite(access, options.partition);
    const row = this.newDocument(orgId, this.deps.clock.now(), chunks, staged.metadata, {
      ...this.fileInput(staged),
      externalId: options.externalId ?? null,
      language: options.language ?? null,
      partition,
      access: accessToWrite(options.access, '/access') ?? null,
      seenBy: seenByOf(access),
    });
    const ack = await this.committer.commit(orgId, [row], this.deps.queue, key, parent);
    staged.keep();
    return ack;
  }

  async ingestUrl(
    orgId: string,
    access: DocumentAccess,
    url: string,
    metadata: Metadata,
    options: IngestOptions = {},
    key?: IdempotencyKeyRef,
    parent?: TraceParent,
  ): Promise<IngestAck> {
    const chunks = options.chunks ?? DEFAULT_CHUNKS;
    checkChunkSettings(chunks);
    checkLanguage(options.language, '/language');
    const partition = partitionToWrite(access, options.partition);
    const accessList = accessToWrite(options.access, '/access') ?? null;
    const displayUrl = this.screen(url);
    await this.committer.checkBackpressure(1);
    const row = this.newDocument(orgId, this.deps.clock.now(), chunks, metadata, {
      source: { type: 'url', filename: null, url: displayUrl, content_type: null, bytes: null },
      fetchUrl: url,
      externalId: options.externalId ?? null,
      language: options.language ?? null,
      partition,
      access: accessList,
      seenBy: seenByOf(access),
    });
    return this.committer.commit(orgId, [row], this.deps.downloadQueue, key, parent);
  }

  private newDocument(
    orgId: string,
    createdAt: Date,
    chunks: ChunkSettings,
    metadata: Metadata,
    input: {
      source: DocumentSource;
      text?: string;
      blobKey?: string;
      fetchUrl?: string;
      externalId?: string | null;
      language?: string | null;
      partition: string;
      access: string[] | null;
      /** The ingesting request's access when restricted (see NewDocument.seenBy). */
      seenBy: DocumentAccess | undefined;
    },
  ): NewDocument {
    return {
      id: newUuid(),
      orgId,
      externalId: input.externalId ?? null,
      partition: input.partition,
      access: input.access,
      seenBy: input.seenBy,
      source: input.source,
      metadata: cleanMetadata(metadata),
      chunkSize: chunks.chunkSize,
      chunkOverlap: chunks.chunkOverlap,
      tokenizer: this.deps.limits.tokenizer,
      language: input.language ?? null,
      createdAt,
      text: input.text ?? null,
      blobKey: input.blobKey ?? null,
      fetchUrl: input.fetchUrl ?? null,
    };
  }
}
