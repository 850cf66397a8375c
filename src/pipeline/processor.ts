// The worker's job: take one document from `queued` to `ready` or `failed`. Every step can run
// again after a crash: the index is replaced as a whole (never seen half-written), and a document deleted
// meanwhile is left alone (the store refuses to write to it).

import { type FormatId, formatOfContentType, formatSpec } from '../domain/formats.js';
import {
  BlobNotFoundError,
  type BlobStore,
  type DocumentStore,
  type JobContext,
  type JobHandler,
  type JobQueue,
} from '../domain/ports.js';
import type { ChunkStream, DocumentError, FailureCode, JobInput } from '../domain/types.js';
import type { ChunkOptions } from './chunk/chunker.js';
import { PipelineError } from './errors.js';

/**
 * Extracts a stored file's text and chunks it, as chunkDocument does; in production both happen in
 * the pipeline's worker threads, and the text itself never crosses to the event loop.
 */
export type IndexFile = (
  path: string,
  format: FormatId,
  options: Omit<ChunkOptions, 'pages'>,
  signal: AbortSignal,
  orgId: string,
) => ChunkStream;

/**
 * Chunks a text, computes each chunk's search words and the text's SHA-256 (`chunkForIndex`); in
 * production it runs in the pipeline's worker threads, off the event loop that serves the API.
 * The chunks come as a stream: the store writes them while later ones are still being made.
 * `orgId` (here and in IndexFile) lets the threads take turns between orgs.
 */
export type ChunkDocument = (
  text: string,
  options: ChunkOptions,
  signal: AbortSignal,
  orgId: string,
) => ChunkStream;

/** Downloads a URL into the blob store; returns the blob and what was learnt about it. */
export type DownloadUrl = (
  url: string,
  signal: AbortSignal,
) => Promise<{ blobKey: string; bytes: number; contentType: string }>;

export interface ProcessorLogger {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface ProcessingOutcome {
  outcome: 'ready' | 'failed' | 'retry';
  code: FailureCode | null;
}

export interface ProcessorDeps {
  documents: DocumentStore;
  /** Where downloaded documents go next (the process lane's queue). */
  processQueue: JobQueue;
  /** Where a newer URL version found by a running process job goes (the download lane). */
  downloadQueue?: JobQueue;
  blobs: BlobStore;
  indexFile: IndexFile;
  chunkDocument: ChunkDocument;
  downloadUrl: DownloadUrl;
  logger: ProcessorLogger;
  /** KEEP_ORIGINALS: false deletes a version's file once the version is ready (default true). */
  keepOriginals?: boolean;
  /** Told how each processing run ended (for metrics). */
  onOutcome?: (outcome: ProcessingOutcome) => void;
}

export class DocumentProcessor {
  constructor(private readonly deps: ProcessorDeps) {}

  /**
   * The download lane: fetches a URL document into the blob store, then hands it to the process
   * lane. Kept apart so downloads of short-lived pre-signed URLs never wait behind extraction.
   */
  readonly handleDownload: JobHandler = async (job) => {
    const input = await this.begin(job);
    if (!input) return;
    if (input.blobKey === null) {
      const downloaded = await this.guard(job, input.version, () => this.download(input, job));
      if (!downloaded) return;
    }
    await this.deps.processQueue.enqueue([{ documentId: job.documentId, orgId: job.orgId }]);
  };

  /**
   * The process lane: extract (for files), chunk, index. When a newer version arrived while this
   * ran (its writes were then refused), the same job goes on with it: a queue that keeps one job
   * per document (BullMQ) did not queue the newer version beside the running one.
   */
  readonly handle: JobHandler = async (job) => {
    let done: number | null = null;
    for (let round = 0; round < MAX_VERSIONS_PER_JOB && !job.signal.aborted; round += 1) {
      const input = await this.begin(job);
      if (!input || input.version === done) return;
      if (input.fetchUrl !== null && input.blobKey === null) {
        // The newer version is a URL: its download lane takes it.
        await this.deps.downloadQueue?.enqueue([{ documentId: job.documentId, orgId: job.orgId }]);
        return;
      }
      await this.guard(job, input.version, async () => {
        await this.process(input, job.signal);
        return true;
      });
      done = input.version;
    }
  };

  /**
   * Loads the document and marks it `processing`, counting the attempt. A document already
   * `processing` was marked by the queue's claim or handed over by the download lane, and its
   * attempt is counted; unless this job's attempt is a later one: the run before it was cut off
   * (its worker died), and that run counts too. Null when there is nothing to do: deleted
   * meanwhile, or already finished.
   */
  private async begin(job: JobContext): Promise<JobInput | null> {
    const { documents } = this.deps;
    const input = await documents.loadJobInput(job.documentId);
    if (!input || input.record.status === 'ready' || input.record.status === 'failed') return null;
    const counted = input.record.status === 'processing' && job.attempt <= input.record.attempts;
    if (!counted && !(await documents.markProcessing(job.documentId, input.version))) return null;
    return input;
  }

  /**
   * Runs a step and records its failure on the document: permanent failures (and transient ones
   * on the last attempt) end `failed`; other transient ones are thrown back for a retry.
   * Returns the step's result, or false when it failed.
   */
  private async guard(job: JobContext, version: number, step: () => Promise<boolean>): Promise<boolean> {
    const { documents, logger } = this.deps;
    try {
      return await step();
    } catch (thrown) {
      // Abandoned (shutdown or a lost lease): hand the job back untouched; another run finishes it.
      if (job.signal.aborted) throw thrown;
      const error = thrown instanceof PipelineError ? thrown : internalError(thrown);
      const detail: DocumentError = { code: error.code, message: error.message };
      if (error.transient && job.attempt < job.maxAttempts) {
        await documents.markRetrying(job.documentId, detail, version);
        this.deps.onOutcome?.({ outcome: 'retry', code: error.code });
        throw error;
      }
      if (error.code === 'internal') {
        logger.error(
          { err: thrown, document_id: job.documentId, org_id: job.orgId },
          'document processing failed',
        );
      }
      await documents.markFailed(job.documentId, detail, version);
      this.deps.onOutcome?.({ outcome: 'failed', code: error.code });
      return false;
    }
  }

  /** Downloads into the blob store and records it on the document; false if it was deleted meanwhile. */
  private async download(input: JobInput, job: JobContext): Promise<boolean> {
    const { documents, blobs } = this.deps;
    if (input.fetchUrl === null) throw new PipelineError('internal', 'document has no input');
    const downloaded = await this.deps.downloadUrl(input.fetchUrl, job.signal);
    const attached = await documents.attachBlob(input.record.id, downloaded, input.version);
    if (!attached) await blobs.delete(downloaded.blobKey);
    return attached;
  }

  private async process(input: JobInput, signal: AbortSignal): Promise<void> {
    const { documents, blobs } = this.deps;
    const { record } = input;
    const format: FormatId = formatOfContentType(record.source.content_type) ?? 'txt';
    const options = {
      chunkSize: record.chunkSize,
      chunkOverlap: record.chunkOverlap,
      markdown: formatSpec(format).headings,
      language: record.requestedLanguage,
    };
    const save = (chunks: ChunkStream) =>
      documents.saveIndex(record.id, {
        ...chunks,
        version: input.version,
        contentType: record.source.content_type,
        bytes: record.source.bytes,
      });
    let saved: boolean;
    if (input.text !== null) {
      saved = await save(
        this.deps.chunkDocument(input.text, { ...options, pages: null }, signal, record.orgId),
      );
    } else if (input.blobKey !== null) {
      // The file stays at hand until its last chunk is written: the chunks stream from it.
      saved = await blobs
        .withLocalFile(input.blobKey, (file) =>
          save(this.deps.indexFile(file, format, options, signal, record.orgId)),
        )
        .catch((error: unknown) => {
          if (error instanceof BlobNotFoundError) {
            throw new PipelineError('internal', 'the stored file of this document is missing');
          }
          throw error;
        });
    } else {
      throw new PipelineError('internal', 'document has no input');
    }
    if (!saved) return;
    this.deps.onOutcome?.({ outcome: 'ready', code: null });
    // The version swapped in; the file of the one it replaced is no longer anyone's.
    if (
      input.version !== input.record.version &&
      input.currentBlobKey !== null &&
      input.currentBlobKey !== input.blobKey
    ) {
      await blobs.delete(input.currentBlobKey);
    }
    if (this.deps.keepOriginals === false && input.blobKey !== null) {
      // The record forgets the key first: /file never points at a file that is gone.
      if (await documents.forgetBlob(record.id, input.blobKey)) await blobs.delete(input.blobKey);
    }
  }
}

/** A job goes on with newer versions at most this many times before leaving them to a new job. */
const MAX_VERSIONS_PER_JOB = 5;

function internalError(thrown: unknown): PipelineError {
  // Unknown errors (a database hiccup, a bug) are retried; the last attempt records them.
  const reason = thrown instanceof Error ? thrown.message : String(thrown);
  return new PipelineError('internal', `processing failed: ${reason}`, true);
}
