// The document pipeline's wiring: the DocumentPipeline port (domain/ports/document-pipeline.ts)
// built from pipeline/'s format detection, URL checks, downloader and worker threads, and a worker's two
// document lanes (download, process), which run the DocumentProcessor over it, with the
// reconciler that queues again what a lost enqueue left out of them.
import type { Config } from '../config/index.js';
import { ocrLanguagesOf } from '../config/schema.js';
import { contentTypeOf } from '../domain/formats.js';
import type { BlobStore, Clock, DocumentPipeline, DocumentStore, JobQueue, Tracer } from '../domain/ports.js';
import { QueueReconciler } from '../domain/reconciler.js';
import {
  createPipelineThreads,
  DEFAULT_MAX_TEXT_CHARS,
  detectFormat,
  finishRunFor,
  type PipelineThreads,
} from '../pipeline/extract/index.js';
import { type AddressPolicy, checkSubmittedUrl, redactUrl, urlDownloader } from '../pipeline/fetch/index.js';
import { DocumentProcessor, type ProcessingOutcome } from '../pipeline/processor.js';
import { type RequestRate, yieldToApi } from '../pipeline/yield-to-api.js';
import type { Logger } from './logger.js';

/** While the API is busy, in-process workers start one document per this interval (≤ 20/s). */
const YIELD_FLOOR_SPACING_MS = 50;

/** The checks ingest makes before it accepts a document: on the API's event loop, no thread, no parser. */
export type SubmitChecks = Pick<DocumentPipeline, 'sniffFormat' | 'screenUrl'>;

export function submitChecks(policy: AddressPolicy): SubmitChecks {
  return {
    sniffFormat: async (file) => {
      const result = await detectFormat(file);
      return result.ok ? { ok: true, contentType: contentTypeOf(result.format) } : result;
    },
    screenUrl: (raw) => {
      const checked = checkSubmittedUrl(raw, policy);
      return checked.ok ? { ok: true, displayUrl: redactUrl(checked.url) } : checked;
    },
  };
}

/** Why a URL may not be fetched, or null when it may (the sources' and webhooks' form of screenUrl). */
export function submittedUrlRefusal(checks: SubmitChecks): (raw: string) => string | null {
  return (raw) => {
    const screened = checks.screenUrl(raw);
    return screened.ok ? null : screened.reason;
  };
}

/** A worker's whole DocumentPipeline, with the threads it runs in. */
export interface WorkerPipeline {
  pipeline: DocumentPipeline;
  /** Starts a thread now, if none runs; resolves once it has loaded the tokenizer (or could not start). */
  warm(): Promise<void>;
  /** Stops the threads. */
  close(): Promise<void>;
}

/**
 * A worker's pipeline threads, from the configuration alone: a process can start them, and warm
 * one, before it builds anything else (see WorkerPipelineDeps.threads).
 */
export function pipelineThreads(config: Config): PipelineThreads {
  return createPipelineThreads({
    maxWorkers: config.extractWorkers,
    timeoutMs: config.extractTimeoutMs,
    maxHeapMb: config.extractMaxHeapMb,
    pdfMaxPages: config.pdfMaxPages,
    searchLanguage: config.searchLanguage,
    ocr: { enabled: config.ocr === 'on', languages: ocrLanguagesOf(config) },
    // A text file as large as uploads may be always fits.
    maxTextChars: Math.max(DEFAULT_MAX_TEXT_CHARS, config.maxUploadBytes),
    idleStopMs: config.extractIdleStopMs,
    maxTextRatio: config.extractMaxTextRatio,
    textFloorChars: config.extractTextFloorChars,
    // Runs only as long as one org's documents can keep every thread busy meanwhile.
    finishRuns: { max: finishRunFor(slotsPerOrg(config), config.extractWorkers) },
  });
}

/**
 * The process lane's documents one org may hold at once: more slots than threads leave one for
 * another org's document while one org has a backlog, so that document waits for the next free
 * thread at most, not for a slot.
 */
function slotsPerOrg(config: Config): number {
  return config.workerConcurrency > config.extractWorkers
    ? config.workerConcurrency - 1
    : config.workerConcurrency;
}

export interface WorkerPipelineDeps {
  checks: SubmitChecks;
  policy: AddressPolicy;
  blobs: BlobStore;
  /** Threads started earlier by pipelineThreads; new ones otherwise. Closed with the pipeline. */
  threads?: PipelineThreads | undefined;
}

/** The DocumentPipeline of a worker: the submit checks, the URL downloader and the pipeline threads. */
export function workerPipeline(config: Config, deps: WorkerPipelineDeps): WorkerPipeline {
  const threads = deps.threads ?? pipelineThreads(config);
  return {
    pipeline: {
      ...deps.checks,
      downloadUrl: urlDownloader({
        policy: deps.policy,
        blobs: deps.blobs,
        maxBytes: config.maxUploadBytes,
        connectTimeoutMs: config.urlFetchConnectTimeoutMs,
        totalTimeoutMs: config.urlFetchTimeoutMs,
        maxRedirects: config.urlFetchMaxRedirects,
      }),
      indexFile: (path, format, options, signal, orgId) =>
        threads.indexFile(path, format, options, signal, orgId),
      indexText: (text, options, signal, orgId) => threads.indexText(text, options, signal, orgId),
    },
    warm: () => threads.warm(),
    close: () => threads.close(),
  };
}

export interface DocumentLanesDeps {
  config: Config;
  documents: DocumentStore;
  queue: JobQueue;
  downloadQueue: JobQueue;
  blobs: BlobStore;
  clock: Clock;
  policy: AddressPolicy;
  checks: SubmitChecks;
  logger: Logger;
  tracer: Tracer;
  onOutcome: (outcome: ProcessingOutcome) => void;
  /** The API's ingest request rate, when the worker runs in the API's process. */
  ingestRequests?: RequestRate | undefined;
  /** Pipeline threads the process started before it built the rest (pipelineThreads). */
  threads?: PipelineThreads | undefined;
}

export interface DocumentLanes {
  /** Resolves once a pipeline thread has loaded the tokenizer (or could not start). */
  ready: Promise<void>;
  /** Stops the reconciler and both lanes' consumers, then the pipeline's threads. */
  stop(): Promise<void>;
}

/**
 * Starts a worker's document lanes: the pipeline's threads (one loads the tokenizer now), the
 * DocumentProcessor over the whole DocumentPipeline, the consumers of both lanes' queues, and
 * the reconciler's runs.
 */
export function startDocumentLanes(deps: DocumentLanesDeps): DocumentLanes {
  const { config, documents, queue, downloadQueue, blobs, ingestRequests } = deps;
  const { pipeline, warm, close } = workerPipeline(config, deps);
  // The first document should be as fast as the hundredth: a thread starts and loads the
  // tokenizer now rather than when that document arrives (`ready` says when it has).
  const ready = warm();
  const processor = new DocumentProcessor({
    documents,
    processQueue: queue,
    downloadQueue,
    blobs,
    pipeline,
    keepOriginals: config.keepOriginals,
    logger: deps.logger,
    onOutcome: deps.onOutcome,
    tracer: deps.tracer,
  });
  const consumers = [
    queue.consume(
      ingestRequests && config.workerYieldIngestRps > 0
        ? yieldToApi(processor.handle, ingestRequests, {
            busyRequestsPerSecond: config.workerYieldIngestRps,
            floorSpacingMs: YIELD_FLOOR_SPACING_MS,
          })
        : processor.handle,
      {
        concurrency: config.workerConcurrency,
        maxPerOrg: slotsPerOrg(config),
      },
    ),
    downloadQueue.consume(processor.handleDownload, { concurrency: config.downloadConcurrency }),
  ];
  const reconciler = new QueueReconciler(
    documents,
    { process: queue, download: downloadQueue },
    deps.clock,
    config.reconcileIntervalMs,
  );
  const reconcile = () =>
    reconciler
      .runOnce()
      .then((n) => {
        if (n > 0) deps.logger.info({ requeued: n }, 'reconciler re-enqueued documents');
      })
      .catch((error: unknown) => deps.logger.warn({ err: error }, 'reconciler run failed'));
  void reconcile();
  const timer = setInterval(reconcile, config.reconcileIntervalMs);
  timer.unref();
  return {
    ready,
    async stop() {
      clearInterval(timer);
      await Promise.all(consumers.map((c) => c.stop()));
      await close();
    },
  };
}
