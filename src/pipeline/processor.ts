// The worker's job: take one document from `queued` to `ready` or `failed`. Every step can run
// again after a crash: the index is replaced as a whole (never seen half-written), and a document deleted
// meanwhile is left alone (the store refuses to write to it).

import { type FormatId, formatOfContentType, formatSpec } from '../domain/formats.js';
import {
  BlobNotFoundError,
  type BlobStore,
  type DocumentPipeline,
  type DocumentStore,
  type JobContext,
  type JobHandler,
  type JobQueue,
  type LazyTraceAttributes,
  noopSpan,
  noopTracer,
  type TraceAttributes,
  type Tracer,
  type TraceSpan,
} from '../domain/ports.js';
import type { ChunkStream, DocumentError, FailureCode, JobInput, JobRef } from '../domain/types.js';
import { PipelineError } from './errors.js';

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
  /** What the processor asks of the pipeline: downloads, and chunks made in its threads. */
  pipeline: Pick<DocumentPipeline, 'downloadUrl' | 'indexFile' | 'indexText'>;
  logger: ProcessorLogger;
  /** KEEP_ORIGINALS: false deletes a version's file once the version is ready (default true). */
  keepOriginals?: boolean;
  /** Told how each processing run ended (for metrics). */
  onOutcome?: (outcome: ProcessingOutcome) => void;
  /** Spans of each job run, joined to the trace its job was queued in (absent: none). */
  tracer?: Tracer;
}

export class DocumentProcessor {
  private readonly tracer: Tracer;

  constructor(private readonly deps: ProcessorDeps) {
    this.tracer = deps.tracer ?? noopTracer;
  }

  /**
   * The download lane: fetches a URL document into the blob store, then hands it to the process
   * lane. Kept apart so downloads of short-lived pre-signed URLs never wait behind extraction.
   */
  readonly handleDownload: JobHandler = (job) =>
    this.traced('download', job, async (span) => {
      const input = await this.begin(job);
      if (!input) return;
      if (input.blobKey === null) {
        const downloaded = await this.guard(job, input.version, () => this.download(input, job, span));
        if (!downloaded) return;
      }
      await this.deps.processQueue.enqueue([this.jobRef(job, span)]);
    });

  /** The job's document for the next lane, with the job span's trace context when it is traced. */
  private jobRef(job: JobContext, span: TraceSpan): JobRef {
    const traceparent = span.traceparent();
    return { documentId: job.documentId, orgId: job.orgId, ...(traceparent === null ? {} : { traceparent }) };
  }

  /**
   * A job run as a span of the trace its job was queued in (the ingest request's), after a span
   * for the time it waited in the queue.
   */
  private traced(
    lane: 'download' | 'process',
    job: JobContext,
    run: (span: TraceSpan) => Promise<void>,
  ): Promise<void> {
    if (this.tracer === noopTracer) return run(noopSpan);
    const startedAt = Date.now();
    const parent = job.traceparent ?? null;
    const waitedMs = job.queuedAt == null ? null : Math.max(0, startedAt - job.queuedAt);
    if (job.queuedAt != null) {
      this.tracer
        .startSpan('docindex.queue.wait', {
          parent,
          startTime: Math.min(job.queuedAt, startedAt),
          attributes: () => ({ 'docindex.document.id': job.documentId, 'docindex.queue.lane': lane }),
        })
        .end(startedAt);
    }
    return this.tracer.inSpan(
      `docindex.job ${lane}`,
      {
        parent,
        kind: 'consumer',
        attributes: () => ({
          'docindex.document.id': job.documentId,
          'docindex.org_id': job.orgId,
          'docindex.queue.lane': lane,
          'docindex.job.attempt': job.attempt,
          'docindex.job.max_attempts': job.maxAttempts,
          'docindex.queue.wait_ms': waitedMs ?? undefined,
        }),
      },
      run,
    );
  }

  /**
   * The process lane: extract (for files), chunk, index. When a newer version arrived while this
   * ran (its writes were then refused), the same job goes on with it: a queue that keeps one job
   * per document (BullMQ) did not queue the newer version beside the running one.
   */
  readonly handle: JobHandler = (job) =>
    this.traced('process', job, async (span) => {
      let done: number | null = null;
      for (let round = 0; round < MAX_VERSIONS_PER_JOB && !job.signal.aborted; round += 1) {
        const input = await this.begin(job);
        if (!input || input.version === done) return;
        if (input.fetchUrl !== null && input.blobKey === null) {
          // The newer version is a URL: its download lane takes it.
          await this.deps.downloadQueue?.enqueue([this.jobRef(job, span)]);
          return;
        }
        await this.guard(job, input.version, async () => {
          await this.process(input, job.signal, span);
          return true;
        });
        done = input.version;
      }
    });

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
  private async download(input: JobInput, job: JobContext, parent: TraceSpan): Promise<boolean> {
    const { documents, blobs } = this.deps;
    const url = input.fetchUrl;
    if (url === null) throw new PipelineError('internal', 'document has no input');
    // The host only: a URL's path and query string (a pre-signed signature) stay out of traces.
    const downloaded = await this.tracer.inSpan(
      'docindex.download',
      { parent, attributes: () => ({ 'docindex.document.id': input.record.id, ...urlHost(url) }) },
      async (span) => {
        const result = await this.deps.pipeline.downloadUrl(url, job.signal);
        span.setAttributes(() => ({
          'docindex.file.bytes': result.bytes,
          'docindex.content_type': result.contentType,
        }));
        return result;
      },
    );
    const attached = await documents.attachBlob(input.record.id, downloaded, input.version);
    if (!attached) await blobs.delete(downloaded.blobKey);
    return attached;
  }

  private async process(input: JobInput, signal: AbortSignal, parent: TraceSpan): Promise<void> {
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
      this.tracer.inSpan(
        'docindex.index.write',
        {
          parent,
          attributes: () => ({
            'docindex.document.id': record.id,
            'docindex.document.version': input.version,
          }),
        },
        async (span) => {
          const written = await documents.saveIndex(record.id, {
            ...chunks,
            version: input.version,
            contentType: record.source.content_type,
            bytes: record.source.bytes,
          });
          span.setAttributes(() => ({ 'docindex.index.saved': written }));
          return written;
        },
      );
    let saved: boolean;
    if (input.text !== null) {
      const chars = input.text.length;
      saved = await save(
        this.observe(
          this.deps.pipeline.indexText(input.text, options, signal, record.orgId),
          null,
          parent,
          () => ({ 'docindex.document.id': record.id, 'docindex.text.chars': chars }),
        ),
      );
    } else if (input.blobKey !== null) {
      // The file stays at hand until its last chunk is written: the chunks stream from it.
      saved = await blobs
        .withLocalFile(input.blobKey, (file) =>
          save(
            this.observe(
              this.deps.pipeline.indexFile(file, format, options, signal, record.orgId),
              format,
              parent,
              () => ({
                'docindex.document.id': record.id,
                'docindex.format': format,
                'docindex.file.bytes': record.source.bytes ?? undefined,
              }),
            ),
          ),
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

  /**
   * The extract and chunk spans of a chunk stream, which the pipeline threads make while the
   * store writes it: `docindex.extract` (files only) lasts until the first chunks arrive, when
   * the thread has read the file (or its first pages); `docindex.chunk` until the last ones do.
   * Both overlap `docindex.index.write`, which reads the stream as it comes.
   */
  private observe(
    stream: ChunkStream,
    format: FormatId | null,
    parent: TraceSpan,
    attributes: LazyTraceAttributes,
  ): ChunkStream {
    if (this.tracer === noopTracer) return stream;
    const extract: TraceSpan | null =
      format === null ? null : this.tracer.startSpan('docindex.extract', { parent, attributes });
    const chunk = this.tracer.startSpan('docindex.chunk', { parent, attributes });
    let extracting = extract !== null;
    const extracted = () => {
      if (!extracting) return;
      extracting = false;
      extract?.end();
    };
    return {
      totals: () => stream.totals(),
      chunks: (async function* () {
        let chunks = 0;
        try {
          for await (const batch of stream.chunks) {
            extracted();
            chunks += batch.length;
            yield batch;
          }
          extracted();
          const totals = stream.totals();
          chunk.setAttributes(() => ({
            'docindex.chunks': chunks,
            'docindex.tokens': totals.tokenCount,
            'docindex.ocr.pages': totals.ocrPages ?? undefined,
            'docindex.language': totals.language ?? undefined,
          }));
        } catch (error) {
          if (extracting) extract?.fail(error);
          chunk.fail(error);
          throw error;
        } finally {
          extracted();
          chunk.end();
        }
      })(),
    };
  }
}

/** The scheme and host of a URL, for a span: never its path or query string. */
function urlHost(raw: string): TraceAttributes {
  try {
    const url = new URL(raw);
    return { 'url.scheme': url.protocol.replace(/:$/, ''), 'server.address': url.hostname };
  } catch {
    return {};
  }
}

/** A job goes on with newer versions at most this many times before leaving them to a new job. */
const MAX_VERSIONS_PER_JOB = 5;

function internalError(thrown: unknown): PipelineError {
  // Unknown errors (a database hiccup, a bug) are retried; the last attempt records them.
  const reason = thrown instanceof Error ? thrown.message : String(thrown);
  return new PipelineError('internal', `processing failed: ${reason}`, true);
}
