// The variables of the ingest pipeline: the workers and their threads (extraction, OCR), what
// ingest accepts, URL downloads, and the jobs' leases and retries.
import { availableParallelism } from 'node:os';
import type { VariableTable } from '../variable.js';

/** The workers and their pipeline threads: how many documents at once, extraction's limits and OCR. */
export const PIPELINE_VARIABLES = {
  // Measured on 2 cores (bench/RESULTS.md, section 2). Embedded, the event loop writes every
  // index: with 8 documents in flight the pipeline threads stay busy meanwhile, and a thread hands
  // on the ends of short documents in runs, whose index writes share one SQLite commit. Scaled out
  // the writes go to PostgreSQL, and each process's connection pool grows with this.
  workerConcurrency: {
    env: 'WORKER_CONCURRENCY',
    type: 'int',
    default: (read) => (read.databaseUrl ? 4 : 8),
    defaultText: '`8`; `4` when `DATABASE_URL` is set',
    min: 1,
    max: 256,
    description: 'documents processed at once per worker process',
  },
  downloadConcurrency: {
    env: 'DOWNLOAD_CONCURRENCY',
    type: 'int',
    default: 8,
    min: 1,
    max: 256,
    description: 'URL downloads at once per worker process',
  },
  // Reads and queries are not counted: they never hold documents back.
  workerYieldIngestRps: {
    env: 'WORKER_YIELD_INGEST_RPS',
    type: 'int',
    default: 500,
    min: 0,
    max: 10_000_000,
    description:
      'when `serve` runs the workers too: at this many ingest requests (`POST /v1/ingest…`) per second or more, they process one document at a time, at most 20 per second, so bursts of ingests are accepted at full speed; reads and queries are not counted; `0` never yields. `docindex worker` processes never yield',
  },
  // One CPU is left to the event loop, which answers the API and writes every index: on 2 cores
  // a second pipeline thread made ingest slower, not faster (bench/RESULTS.md, section 2).
  extractWorkers: {
    env: 'EXTRACT_WORKERS',
    type: 'int',
    default: () => Math.max(1, availableParallelism() - 1),
    defaultText: 'CPUs − 1 (at least 1)',
    min: 1,
    max: 64,
    description:
      'pipeline threads per worker process: they extract files (in child processes) and chunk every document; one CPU is left to the event loop, which answers the API and writes the indexes',
  },
  // An idle thread holds its heap and the tokenizer's tables (bench/RESULTS.md, section 23); a
  // document after it stopped waits for a new thread to load them. Five minutes: a first
  // document sent soon after a start, or a steady trickle, still finds a warm thread.
  extractIdleStopMs: {
    env: 'EXTRACT_IDLE_STOP_MS',
    type: 'int',
    default: 300_000,
    min: 0,
    max: 86_400_000,
    description:
      'a pipeline thread with no work for this long is stopped, the last one too, and gives its memory back; the next document starts one again (about a second, once). `0` keeps the threads running',
  },
  extractTimeoutMs: {
    env: 'EXTRACT_TIMEOUT_MS',
    type: 'int',
    default: 120_000,
    min: 100,
    max: 3_600_000,
    description: "time cap per file extraction, and per document's chunking",
  },
  extractMaxHeapMb: {
    env: 'EXTRACT_MAX_HEAP_MB',
    type: 'int',
    default: 512,
    min: 32,
    max: 16_384,
    description: 'heap cap of each pipeline thread or process (a document that needs more fails `too_large`)',
  },
  pdfMaxPages: {
    env: 'PDF_MAX_PAGES',
    type: 'int',
    default: 5_000,
    min: 1,
    max: 1_000_000,
    description: 'PDFs with more pages fail with `too_large`',
  },
  // A file's text is rarely longer than the file; the largest ratio among the real documents of
  // the test corpus is in bench/RESULTS.md, well under the default.
  extractMaxTextRatio: {
    env: 'EXTRACT_MAX_TEXT_RATIO',
    type: 'int',
    default: 16,
    min: 1,
    max: 10_000,
    description:
      'characters of text a file may give per byte of its size (beyond `EXTRACT_TEXT_FLOOR_CHARS`): past it the document fails `archive_limits` (ZIP-based formats and e-mail, whose text comes from parts they unpack) or `too_large`',
  },
  extractTextFloorChars: {
    env: 'EXTRACT_TEXT_FLOOR_CHARS',
    type: 'int',
    default: 4 * 1024 * 1024,
    min: 1_024,
    max: 1_073_741_824,
    description: 'characters of text any file may give whatever its size (see `EXTRACT_MAX_TEXT_RATIO`)',
  },
  ocr: {
    env: 'OCR',
    type: 'string',
    default: 'on',
    oneOf: ['on', 'off'],
    description:
      'read PDF pages without a text layer, and PNG/JPEG/TIFF uploads, by OCR (Tesseract, in the extraction threads). With `off`, an image or a PDF with no text but scanned pages fails `no_text`',
  },
  ocrLanguages: {
    env: 'OCR_LANGUAGES',
    type: 'list',
    defaultText: '`eng`',
    description:
      'comma-separated Tesseract languages OCR reads, each an installed `@tesseract.js-data/<code>` npm package (`eng` ships with docindex); an unknown one stops the start, listing the installed ones',
  },
} satisfies Partial<VariableTable>;

/** What ingest accepts (body and upload sizes, the queue's length) and how URL documents are downloaded. */
export const INTAKE_VARIABLES = {
  maxJsonBodyBytes: {
    env: 'MAX_JSON_BODY_BYTES',
    type: 'int',
    default: 10 * 1024 * 1024,
    min: 1024,
    max: 1024 * 1024 * 1024,
    description: 'JSON request body limit (413 above)',
  },
  maxUploadBytes: {
    env: 'MAX_UPLOAD_BYTES',
    type: 'int',
    default: 104_857_600,
    min: 1,
    max: 10 * 1024 * 1024 * 1024,
    description: 'file upload and URL download limit',
  },
  maxQueuedDocuments: {
    env: 'MAX_QUEUED_DOCUMENTS',
    type: 'int',
    default: 50_000,
    min: 1,
    max: 100_000_000,
    description: 'past this many waiting documents, ingest answers 503 with `Retry-After`',
  },
  urlFetchAllow: {
    env: 'URL_FETCH_ALLOW',
    type: 'list',
    description: 'comma-separated `host`, `host:port` or CIDRs exempt from the public-address rule',
  },
  urlFetchConnectTimeoutMs: {
    env: 'URL_FETCH_CONNECT_TIMEOUT_MS',
    type: 'int',
    default: 10_000,
    min: 100,
    max: 600_000,
    description: "time to connect to a URL document's server (each hop)",
  },
  urlFetchTimeoutMs: {
    env: 'URL_FETCH_TIMEOUT_MS',
    type: 'int',
    default: 120_000,
    min: 100,
    max: 3_600_000,
    description: 'time for a whole URL download, redirects included',
  },
  urlFetchMaxRedirects: {
    env: 'URL_FETCH_MAX_REDIRECTS',
    type: 'int',
    default: 5,
    min: 0,
    max: 20,
    description: 'redirects a URL download follows (more → `too_many_redirects`)',
  },
} satisfies Partial<VariableTable>;

/** Job leases, attempts and the reconciler. */
export const JOB_VARIABLES = {
  jobLeaseMs: {
    env: 'JOB_LEASE_MS',
    type: 'int',
    default: 30_000,
    min: 1_000,
    max: 3_600_000,
    description: 'a job whose worker stops heartbeating is taken over after this',
  },
  jobMaxAttempts: {
    env: 'JOB_MAX_ATTEMPTS',
    type: 'int',
    default: 5,
    min: 1,
    max: 100,
    description: 'tries before a transient failure becomes `failed`',
  },
  reconcileIntervalMs: {
    env: 'RECONCILE_INTERVAL_MS',
    type: 'int',
    default: 30_000,
    min: 1_000,
    max: 3_600_000,
    description: 'how often queued documents without a job are re-enqueued',
  },
} satisfies Partial<VariableTable>;
