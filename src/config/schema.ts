// Every environment variable docindex reads, declared once: its name, type, default, limits and
// the sentence the configuration table (docs/CONFIGURATION.md) shows. loadConfig (index.ts) reads
// the environment from this list and config-table.ts writes the table from it, so the two cannot
// disagree.
import { availableParallelism } from 'node:os';
import path from 'node:path';
import type { SearchLanguage } from '../domain/search-words.js';
import { DEFAULT_MAX_PENDING } from '../domain/webhooks.js';
import { installedOcrLanguages, missingOcrLanguages } from '../pipeline/ocr/languages.js';

/** Where uploaded and downloaded files are kept (BLOB_STORE). */
export type BlobStoreKind = 'fs' | 'postgres' | 's3';

export const BLOB_STORES: readonly BlobStoreKind[] = ['fs', 'postgres', 's3'];

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  blobDir: string;
  /** Where `docindex models pull` puts models (absolute). */
  modelsDir: string;
  /** The Hugging Face Hub (or a mirror) `docindex models pull` downloads from. */
  hfEndpoint: string;
  /** '' when unset: the Hub is asked without a token. */
  hfToken: string;
  databaseUrl: string | null;
  /** PostgreSQL schema that holds docindex's tables (scale-out). */
  databaseSchema: string;
  /** 0: half the pool (start/scale-out.ts). */
  databaseOrgMaxConnections: number;
  redisUrl: string | null;
  blobStore: BlobStoreKind;
  /** S3 endpoint URL; null means AWS S3 itself (the SDK picks it from the region). */
  s3Endpoint: string | null;
  /** '' when unset (a configuration error with BLOB_STORE=s3). */
  s3Bucket: string;
  s3Region: string;
  /** '' when unset: the AWS SDK's default credential chain is used. */
  s3AccessKeyId: string;
  s3SecretAccessKey: string;
  s3ForcePathStyle: boolean;
  /** Prefix of docindex's Redis keys and BullMQ queue names (scale-out). */
  redisPrefix: string;
  defaultRateLimitRpm: number;
  unauthenticatedRateLimitRpm: number;
  searchLanguage: SearchLanguage;
  /** Keyword results reranked with a term-proximity bonus (domain/proximity.ts). */
  searchProximity: boolean;
  /** '' when unset: the admin API is off. */
  adminToken: string;
  /** '' when unset: sources with credentials are refused (32 bytes, hex or base64). */
  secretsKey: string;
  /** '' when unset; a key values sealed before a rotation still open with. */
  secretsKeyPrevious: string;
  workerConcurrency: number;
  downloadConcurrency: number;
  workerYieldIngestRps: number;
  extractWorkers: number;
  extractIdleStopMs: number;
  extractTimeoutMs: number;
  extractMaxHeapMb: number;
  pdfMaxPages: number;
  extractMaxTextRatio: number;
  extractTextFloorChars: number;
  ocr: 'on' | 'off';
  ocrLanguages: string[];
  maxJsonBodyBytes: number;
  maxUploadBytes: number;
  maxQueuedDocuments: number;
  urlFetchAllow: string[];
  urlFetchConnectTimeoutMs: number;
  urlFetchTimeoutMs: number;
  urlFetchMaxRedirects: number;
  jobLeaseMs: number;
  jobMaxAttempts: number;
  reconcileIntervalMs: number;
  webhookMaxEndpoints: number;
  webhookMaxPending: number;
  webhookTimeoutMs: number;
  webhookRetryBaseMs: number;
  webhookRetryMaxMs: number;
  webhookRetryWindowMs: number;
  webhookDisableAfterMs: number;
  webhookPollMs: number;
  webhookConcurrency: number;
  webhookOrgConcurrency: number;
  webhookEndpointConcurrency: number;
  requestTimeoutMs: number;
  headersTimeoutMs: number;
  trustProxy: boolean;
  logLevel: string;
  embeddings: EmbeddingsProvider;
  /** null when unset (a configuration error with EMBEDDINGS=openai). */
  embeddingsUrl: string | null;
  embeddingsModel: string;
  /** '' when unset: no Authorization header. */
  embeddingsApiKey: string;
  /** 0: the model's own length. */
  embeddingsDimensions: number;
  /** '' when unset (a configuration error with EMBEDDINGS=onnx); relative to the working directory. */
  embeddingsModelDir: string;
  embeddingsBatchSize: number;
  embeddingsConcurrency: number;
  embeddingsTimeoutMs: number;
  embeddingsMaxRetries: number;
  vectorPrefilterMaxMb: number;
  rerank: RerankProvider;
  /** null when unset (a configuration error with RERANK=http). */
  rerankUrl: string | null;
  /** '' when unset: no `model` in the request. */
  rerankModel: string;
  /** '' when unset: no Authorization header. */
  rerankApiKey: string;
  /** '' when unset (a configuration error with RERANK=onnx); relative to the working directory. */
  rerankModelDir: string;
  rerankTimeoutMs: number;
  rerankBatchSize: number;
  providerBreakerFailures: number;
  providerBreakerCooldownMs: number;
  keepOriginals: boolean;
  /** OTLP/HTTP base URL for traces (`/v1/traces` is appended); null when unset. */
  otelExporterOtlpEndpoint: string | null;
  /** OTLP/HTTP traces URL in full; null when unset. */
  otelExporterOtlpTracesEndpoint: string | null;
  otelServiceName: string;
  /** Traces stay off even with an endpoint. */
  otelSdkDisabled: boolean;
  otelTracesSampler: string;
  /** The traceidratio samplers' ratio (0 to 1), as written. */
  otelTracesSamplerArg: string;
  otelBspScheduleDelay: number;
  otelBspExportTimeout: number;
  otelBspMaxQueueSize: number;
  otelBspMaxExportBatchSize: number;
}

/** OTEL_TRACES_SAMPLER's values (the OpenTelemetry SDK's names). */
export const OTEL_SAMPLERS: readonly string[] = [
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
  'always_on',
  'always_off',
  'traceidratio',
];

/** Who reorders a query's first-stage candidates (RERANK): nobody, an HTTP rerank server, or a local cross-encoder. */
export type RerankProvider = 'none' | 'http' | 'onnx';

export const RERANK_PROVIDERS: readonly RerankProvider[] = ['none', 'http', 'onnx'];

/** Who turns text into vectors (EMBEDDINGS): nobody (keyword search only), an HTTP server, or a local model. */
export type EmbeddingsProvider = 'none' | 'openai' | 'onnx';

export const EMBEDDINGS_PROVIDERS: readonly EmbeddingsProvider[] = ['none', 'openai', 'onnx'];

interface Described {
  /** The environment variable. */
  env: string;
  /** The configuration table's "meaning" column (Markdown). */
  description: string;
  /** The configuration table's "default" column when the default is not a plain value (Markdown). */
  defaultText?: string;
}

/** A whole number within [min, max]. */
export interface IntVariable extends Described {
  type: 'int';
  /** A function when the default depends on the machine. */
  default: number | (() => number);
  min: number;
  max: number;
}

/** Text; empty means unset. */
export interface StringVariable extends Described {
  type: 'string';
  /** A function when the default depends on variables read before this one. */
  default: string | ((read: Partial<Config>) => string);
  /** A file-system path, made absolute against the working directory. */
  path?: boolean;
  /** The value must match, or `invalid` is the problem reported. */
  pattern?: { test: RegExp; invalid: string };
  /** The value must be one of these. */
  oneOf?: readonly string[];
}

/** An optional URL (null when unset) whose scheme must match. */
export interface UrlVariable extends Described {
  type: 'url';
  scheme: RegExp;
  invalid: string;
}

/** true/yes/1 or false/no/0, in any case. */
export interface BoolVariable extends Described {
  type: 'bool';
  default: boolean;
}

/** A comma-separated list; blank items are dropped. Unset is the empty list. */
export interface ListVariable extends Described {
  type: 'list';
}

export type Variable = IntVariable | StringVariable | UrlVariable | BoolVariable | ListVariable;

/** The kind of variable each Config field can be, so a field cannot be declared with the wrong type. */
type VariableFor<T> = [T] extends [number]
  ? IntVariable
  : [T] extends [boolean]
    ? BoolVariable
    : [T] extends [string[]]
      ? ListVariable
      : [T] extends [string]
        ? StringVariable
        : UrlVariable;

/**
 * One entry per Config field, in the configuration table's order (also the order in which problems are
 * listed). Variables whose default depends on another come after it.
 */
export const VARIABLES: { [K in keyof Config]: VariableFor<Config[K]> } = {
  host: { env: 'HOST', type: 'string', default: '127.0.0.1', description: 'address to listen on' },
  port: {
    env: 'PORT',
    type: 'int',
    default: 8080,
    min: 0,
    max: 65535,
    description: 'port to listen on (`0` picks a free one)',
  },
  dataDir: {
    env: 'DATA_DIR',
    type: 'string',
    default: './data',
    path: true,
    description: 'embedded mode: the SQLite file `docindex.db` and uploaded files',
  },
  blobDir: {
    env: 'BLOB_DIR',
    type: 'string',
    default: (read) => path.join(read.dataDir ?? '', 'blobs'),
    defaultText: '`$DATA_DIR/blobs`',
    path: true,
    description:
      'with `BLOB_STORE=fs`: where uploaded and downloaded files are kept (a volume every process mounts in scale-out)',
  },
  modelsDir: {
    env: 'MODELS_DIR',
    type: 'string',
    default: (read) => path.join(read.dataDir ?? '', 'models'),
    defaultText: '`$DATA_DIR/models`',
    path: true,
    description:
      'where `docindex models pull` puts models (one folder per model, e.g. `Xenova/bge-small-en-v1.5`); the server never downloads',
  },
  hfEndpoint: {
    env: 'HF_ENDPOINT',
    type: 'string',
    default: 'https://huggingface.co',
    pattern: {
      test: /^https?:\/\/[^\s/]+(\/[^\s]*)?$/i,
      invalid: 'HF_ENDPOINT must be an http:// or https:// URL (e.g. https://huggingface.co)',
    },
    description: '`docindex models pull`: the Hugging Face Hub (or a mirror) models are downloaded from',
  },
  hfToken: {
    env: 'HF_TOKEN',
    type: 'string',
    default: '',
    defaultText: '—',
    description:
      '`docindex models pull`: a Hugging Face access token, sent as `Authorization: Bearer …` to `HF_ENDPOINT` only (never to the CDN it redirects downloads to); private and gated models need one',
  },
  databaseUrl: {
    env: 'DATABASE_URL',
    type: 'url',
    scheme: /^postgres(ql)?:\/\//,
    invalid: 'DATABASE_URL must be a postgres:// or postgresql:// URL (leave it unset for embedded SQLite)',
    description: '`postgres://…` selects PostgreSQL',
  },
  databaseSchema: {
    env: 'DATABASE_SCHEMA',
    type: 'string',
    default: 'public',
    pattern: {
      test: /^[a-z_][a-z0-9_]{0,62}$/,
      invalid: 'DATABASE_SCHEMA must be a lower-case SQL identifier (letters, digits, underscore)',
    },
    description: "PostgreSQL schema for docindex's tables",
  },
  databaseOrgMaxConnections: {
    env: 'DATABASE_ORG_MAX_CONNECTIONS',
    type: 'int',
    default: 0,
    defaultText: '0 (half the pool)',
    min: 0,
    max: 1000,
    description:
      "PostgreSQL connections one organisation's API requests may hold at once in one process, out of its pool of max(10, 2 × `WORKER_CONCURRENCY` + 4): more wait their turn for up to 5 s, then answer 503 `overloaded`, so one tenant's requests never take every connection from the others; 0: half the pool",
  },
  redisUrl: {
    env: 'REDIS_URL',
    type: 'url',
    scheme: /^rediss?:\/\//,
    invalid: 'REDIS_URL must be a redis:// or rediss:// URL',
    description: '`redis://…` selects BullMQ for jobs and Redis for the rate limiter',
  },
  blobStore: {
    env: 'BLOB_STORE',
    type: 'string',
    default: (read) => (read.databaseUrl ? 'postgres' : 'fs'),
    defaultText: '`fs`; `postgres` when `DATABASE_URL` is set',
    oneOf: BLOB_STORES,
    description:
      'where uploaded and downloaded files are kept: `fs` (the folder `BLOB_DIR`), `postgres` (in chunks in the database of `DATABASE_URL`, so scale-out needs no shared folder) or `s3` (an S3-compatible bucket, `S3_*` below)',
  },
  s3Endpoint: {
    env: 'S3_ENDPOINT',
    type: 'url',
    scheme: /^https?:\/\//,
    invalid: 'S3_ENDPOINT must be an http:// or https:// URL (leave it unset for AWS S3)',
    description: 'with `BLOB_STORE=s3`: the S3 endpoint (MinIO, R2, …); unset for AWS S3',
  },
  s3Bucket: {
    env: 'S3_BUCKET',
    type: 'string',
    default: '',
    defaultText: '—',
    description: 'with `BLOB_STORE=s3`: the bucket (required; it must exist)',
  },
  s3Region: {
    env: 'S3_REGION',
    type: 'string',
    default: 'us-east-1',
    description: "with `BLOB_STORE=s3`: the bucket's region",
  },
  s3AccessKeyId: {
    env: 'S3_ACCESS_KEY_ID',
    type: 'string',
    default: '',
    defaultText: '—',
    description:
      "with `BLOB_STORE=s3`: access key id; unset, the AWS SDK's default credential chain (environment, profile, instance role) is used",
  },
  s3SecretAccessKey: {
    env: 'S3_SECRET_ACCESS_KEY',
    type: 'string',
    default: '',
    defaultText: '—',
    description: 'with `BLOB_STORE=s3`: the secret of `S3_ACCESS_KEY_ID` (set both or neither)',
  },
  s3ForcePathStyle: {
    env: 'S3_FORCE_PATH_STYLE',
    type: 'bool',
    default: false,
    description:
      'with `BLOB_STORE=s3`: address the bucket as `endpoint/bucket/key` rather than `bucket.endpoint/key` (MinIO and most self-hosted servers need it)',
  },
  redisPrefix: {
    env: 'REDIS_PREFIX',
    type: 'string',
    default: 'docindex',
    pattern: {
      test: /^[A-Za-z0-9_.-]{1,64}$/,
      invalid: 'REDIS_PREFIX must be 1-64 characters of letters, digits, `_`, `.` or `-`',
    },
    description: 'prefix of Redis keys and queue names',
  },
  defaultRateLimitRpm: {
    env: 'DEFAULT_RATE_LIMIT_RPM',
    type: 'int',
    default: 600,
    min: 1,
    max: 10_000_000,
    description: 'rate limit of new organisations',
  },
  unauthenticatedRateLimitRpm: {
    env: 'UNAUTHENTICATED_RATE_LIMIT_RPM',
    type: 'int',
    default: 120,
    min: 1,
    max: 10_000_000,
    description: 'limit per client address for requests without a valid key',
  },
  searchLanguage: {
    env: 'SEARCH_LANGUAGE',
    type: 'string',
    default: 'auto',
    pattern: {
      test: /^(auto|none|english|[a-z]{2})$/,
      invalid: 'SEARCH_LANGUAGE must be `auto`, `none` or an ISO 639-1 language code such as `en` or `de`',
    },
    description:
      "the language of documents that name none at ingest: `auto` (told from each document's text; English when it cannot be told), an ISO 639-1 code (`en`, `de`, …: every such document is taken to be in it), or `none` (no stemming). Each document is analysed in its own language (stemming, Chinese/Japanese/Thai word segmentation, Korean particles, accent folding); a query is read in the languages of the org's documents. Changing it affects documents indexed afterwards",
  },
  searchProximity: {
    env: 'SEARCH_PROXIMITY',
    type: 'bool',
    default: false,
    description:
      'add to BM25 a bonus for query words that stand close together in a chunk (computed on the best 30 or top_k chunks). Off by default: it helps some collections and hurts others (bench/RESULTS.md, section 11)',
  },
  adminToken: {
    env: 'ADMIN_TOKEN',
    type: 'string',
    default: '',
    defaultText: '— (admin API off)',
    pattern: {
      test: /^(?:[!-~]{32,512})?$/,
      invalid:
        'ADMIN_TOKEN must be 32 to 512 printable ASCII characters without spaces (e.g. `openssl rand -hex 32`)',
    },
    description:
      'turns on the admin API under `/admin/v1` (orgs, keys, purge), for requests that send `Authorization: Bearer <ADMIN_TOKEN>`; unset, those routes do not exist (404)',
  },
  secretsKey: {
    env: 'SECRETS_KEY',
    type: 'string',
    default: '',
    defaultText: '— (credentials refused)',
    pattern: {
      test: /^(?:[0-9a-fA-F]{64}|[A-Za-z0-9+/_-]{43}=?)?$/,
      invalid:
        'SECRETS_KEY must be 32 bytes written as 64 hex digits or as base64 (e.g. `openssl rand -hex 32`)',
    },
    description:
      'encrypts credentials at rest (a source’s `secret_access_key`, AES-256-GCM); unset, a source with credentials is refused with 400 `secrets_key_unset`. docs/SOURCES.md says how to rotate it',
  },
  secretsKeyPrevious: {
    env: 'SECRETS_KEY_PREVIOUS',
    type: 'string',
    default: '',
    defaultText: '—',
    pattern: {
      test: /^(?:[0-9a-fA-F]{64}|[A-Za-z0-9+/_-]{43}=?)?$/,
      invalid: 'SECRETS_KEY_PREVIOUS must be 32 bytes written as 64 hex digits or as base64',
    },
    description:
      'the key before a rotation of `SECRETS_KEY`: credentials sealed under it still open, and are sealed again under `SECRETS_KEY` when their source next runs',
  },
  // Measured on 2 cores (bench/RESULTS.md, section 2): with 4 documents in flight the pipeline
  // threads stay busy while the event loop writes finished documents' indexes.
  workerConcurrency: {
    env: 'WORKER_CONCURRENCY',
    type: 'int',
    default: 4,
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
      'pipeline threads per worker process: they extract files and chunk every document; one CPU is left to the event loop, which answers the API and writes the indexes',
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
    description: 'heap cap of each pipeline thread (a document that needs more fails `too_large`)',
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
  webhookMaxEndpoints: {
    env: 'WEBHOOK_MAX_ENDPOINTS',
    type: 'int',
    default: 10,
    min: 1,
    max: 1000,
    description: 'webhook endpoints one organisation may have',
  },
  webhookMaxPending: {
    env: 'WEBHOOK_MAX_PENDING',
    type: 'int',
    default: DEFAULT_MAX_PENDING,
    min: 1,
    max: 1_000_000,
    description:
      "messages one webhook endpoint may have waiting: beyond it `POST /v1/webhooks/{id}/test` answers 429 `backlog_full`, and a new event drops the oldest waiting one (counted in the endpoint's `dropped_messages`)",
  },
  webhookTimeoutMs: {
    env: 'WEBHOOK_TIMEOUT_MS',
    type: 'int',
    default: 10_000,
    min: 100,
    max: 60_000,
    description: 'time a webhook receiver has to answer (connect included); a 2xx within it is a delivery',
  },
  webhookRetryBaseMs: {
    env: 'WEBHOOK_RETRY_BASE_MS',
    type: 'int',
    default: 5_000,
    min: 10,
    max: 3_600_000,
    description: 'first webhook retry delay; doubled per attempt (with jitter) up to `WEBHOOK_RETRY_MAX_MS`',
  },
  webhookRetryMaxMs: {
    env: 'WEBHOOK_RETRY_MAX_MS',
    type: 'int',
    default: 3_600_000,
    min: 10,
    max: 86_400_000,
    description: 'longest delay between two attempts of one webhook message',
  },
  webhookRetryWindowMs: {
    env: 'WEBHOOK_RETRY_WINDOW_MS',
    type: 'int',
    default: 86_400_000,
    min: 1_000,
    max: 2_592_000_000,
    description: 'a webhook message is retried until it is this old (24 h), then given up',
  },
  webhookDisableAfterMs: {
    env: 'WEBHOOK_DISABLE_AFTER_MS',
    type: 'int',
    default: 432_000_000,
    min: 1_000,
    max: 31_536_000_000,
    description: 'an endpoint whose attempts have all failed for this long (5 days) is disabled',
  },
  webhookPollMs: {
    env: 'WEBHOOK_POLL_MS',
    type: 'int',
    default: 200,
    min: 10,
    max: 60_000,
    description: 'how often each process looks for due webhook messages when it found none',
  },
  webhookConcurrency: {
    env: 'WEBHOOK_CONCURRENCY',
    type: 'int',
    default: 16,
    min: 1,
    max: 256,
    description: 'webhook deliveries in flight at once per process',
  },
  webhookOrgConcurrency: {
    env: 'WEBHOOK_ORG_CONCURRENCY',
    type: 'int',
    default: 4,
    min: 1,
    max: 256,
    description:
      'webhook deliveries in flight at once for one organisation, across every process: its slow endpoints hold no more slots than this, the rest go to other organisations in turn (keep it below `WEBHOOK_CONCURRENCY`)',
  },
  webhookEndpointConcurrency: {
    env: 'WEBHOOK_ENDPOINT_CONCURRENCY',
    type: 'int',
    default: 2,
    min: 1,
    max: 256,
    description: 'webhook deliveries in flight at once for one endpoint, across every process',
  },
  requestTimeoutMs: {
    env: 'REQUEST_TIMEOUT_MS',
    type: 'int',
    default: 300_000,
    min: 1_000,
    max: 3_600_000,
    description: 'whole-request time cap',
  },
  headersTimeoutMs: {
    env: 'HEADERS_TIMEOUT_MS',
    type: 'int',
    default: 10_000,
    min: 500,
    max: 600_000,
    description: 'time cap for a client to send its headers (slow-loris)',
  },
  keepOriginals: {
    env: 'KEEP_ORIGINALS',
    type: 'bool',
    default: true,
    description:
      'keep each document’s uploaded or downloaded file after it is indexed (`GET /v1/documents/{id}/file`, reprocessing from the original); `false` deletes it once its version is ready, and those two then answer 410 `original_not_kept` and 409 `cannot_reprocess`',
  },
  otelExporterOtlpEndpoint: {
    env: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    type: 'url',
    scheme: /^https?:\/\//i,
    invalid: 'OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL (e.g. http://127.0.0.1:4318)',
    description:
      'turns traces on: the OTLP/HTTP collector they are sent to (JSON), e.g. `http://127.0.0.1:4318` (`/v1/traces` is appended); unset: no tracing code is loaded. See [TRACING.md](TRACING.md)',
  },
  otelExporterOtlpTracesEndpoint: {
    env: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    type: 'url',
    scheme: /^https?:\/\//i,
    invalid:
      'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be an http:// or https:// URL (e.g. http://127.0.0.1:4318/v1/traces)',
    description:
      'turns traces on too: the full OTLP/HTTP traces URL, used as it is; takes precedence over `OTEL_EXPORTER_OTLP_ENDPOINT`',
  },
  otelServiceName: {
    env: 'OTEL_SERVICE_NAME',
    type: 'string',
    default: 'docindex',
    description: "the traces' `service.name`",
  },
  otelSdkDisabled: {
    env: 'OTEL_SDK_DISABLED',
    type: 'bool',
    default: false,
    description: '`true` keeps traces off even when an endpoint is set',
  },
  otelTracesSampler: {
    env: 'OTEL_TRACES_SAMPLER',
    type: 'string',
    default: 'parentbased_always_on',
    oneOf: OTEL_SAMPLERS,
    description:
      'which traces are recorded: `parentbased_*` follow an incoming `traceparent`’s sampled flag, then `always_on`, `always_off` or `traceidratio` for new traces',
  },
  otelTracesSamplerArg: {
    env: 'OTEL_TRACES_SAMPLER_ARG',
    type: 'string',
    default: '1',
    pattern: {
      test: /^(0(\.\d+)?|1(\.0+)?|\.\d+)$/,
      invalid: 'OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1 (e.g. 0.25)',
    },
    description: 'the share of new traces the `traceidratio` samplers record',
  },
  otelBspScheduleDelay: {
    env: 'OTEL_BSP_SCHEDULE_DELAY',
    type: 'int',
    default: 5_000,
    min: 0,
    max: 3_600_000,
    description: 'traces: ms between two sends of the spans a process holds (sooner once a batch is full)',
  },
  otelBspExportTimeout: {
    env: 'OTEL_BSP_EXPORT_TIMEOUT',
    type: 'int',
    default: 30_000,
    min: 1,
    max: 3_600_000,
    description: 'traces: ms a send may take before its spans are given up',
  },
  otelBspMaxQueueSize: {
    env: 'OTEL_BSP_MAX_QUEUE_SIZE',
    type: 'int',
    default: 8_192,
    min: 1,
    max: 1_000_000,
    description:
      'traces: spans a process holds while they wait to be sent; beyond it new spans are dropped (a burst of ingest makes several per document)',
  },
  otelBspMaxExportBatchSize: {
    env: 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE',
    type: 'int',
    default: 1_024,
    min: 1,
    max: 1_000_000,
    description: 'traces: spans per send at most (at most `OTEL_BSP_MAX_QUEUE_SIZE`)',
  },
  trustProxy: {
    env: 'TRUST_PROXY',
    type: 'bool',
    default: false,
    description: 'take the client address from `X-Forwarded-For`',
  },
  logLevel: {
    env: 'LOG_LEVEL',
    type: 'string',
    default: 'info',
    oneOf: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
    description: '`fatal` … `trace`, or `silent`',
  },
  embeddings: {
    env: 'EMBEDDINGS',
    type: 'string',
    default: 'none',
    oneOf: EMBEDDINGS_PROVIDERS,
    description:
      'embedding provider for semantic and hybrid search: `none` (keyword search only), `openai` (any OpenAI-compatible `/v1/embeddings` server: OpenAI, Azure, Ollama, vLLM, TEI, llama.cpp) or `onnx` (a local sentence-transformer folder, run in a worker thread)',
  },
  embeddingsUrl: {
    env: 'EMBEDDINGS_URL',
    type: 'url',
    scheme: /^https?:\/\//i,
    invalid: 'EMBEDDINGS_URL must be an http:// or https:// URL (e.g. http://127.0.0.1:11434/v1)',
    description:
      '`openai`: base URL of the embeddings API, e.g. `http://127.0.0.1:11434/v1` (`/embeddings` is appended)',
  },
  embeddingsModel: {
    env: 'EMBEDDINGS_MODEL',
    type: 'string',
    default: '',
    defaultText: '—',
    description:
      '`openai`: the model name sent with each request (e.g. `text-embedding-3-small`, `nomic-embed-text`)',
  },
  embeddingsApiKey: {
    env: 'EMBEDDINGS_API_KEY',
    type: 'string',
    default: '',
    defaultText: '— (no `Authorization` header)',
    description: '`openai`: sent as `Authorization: Bearer …`',
  },
  embeddingsDimensions: {
    env: 'EMBEDDINGS_DIMENSIONS',
    type: 'int',
    default: 0,
    min: 0,
    max: 16_000,
    defaultText: '0 (the model’s own)',
    description:
      '`openai`: vector length asked of the model (`dimensions`, for models that can shorten their vectors); answers of another length fail with `dimension_mismatch`',
  },
  embeddingsModelDir: {
    env: 'EMBEDDINGS_MODEL_DIR',
    type: 'string',
    default: '',
    defaultText: '—',
    description:
      '`onnx`: folder of a sentence-transformer exported for transformers.js (`config.json`, `tokenizer.json`, `onnx/model.onnx`, e.g. bge-small-en-v1.5); nothing is ever downloaded',
  },
  embeddingsBatchSize: {
    env: 'EMBEDDINGS_BATCH_SIZE',
    type: 'int',
    default: 64,
    min: 1,
    max: 2048,
    description: 'texts per embedding request (`openai`) or model run (`onnx`)',
  },
  embeddingsConcurrency: {
    env: 'EMBEDDINGS_CONCURRENCY',
    type: 'int',
    default: 4,
    min: 1,
    max: 64,
    description: '`openai`: embedding requests in flight at once per process',
  },
  embeddingsTimeoutMs: {
    env: 'EMBEDDINGS_TIMEOUT_MS',
    type: 'int',
    default: 30_000,
    min: 100,
    max: 600_000,
    description: '`openai`: time cap of one embedding request',
  },
  embeddingsMaxRetries: {
    env: 'EMBEDDINGS_MAX_RETRIES',
    type: 'int',
    default: 4,
    min: 0,
    max: 20,
    description:
      '`openai`: retries of a request that timed out, lost its connection or got 429 (its `Retry-After` honoured) or 5xx, with exponential backoff',
  },
  vectorPrefilterMaxMb: {
    env: 'VECTOR_PREFILTER_MAX_MB',
    type: 'int',
    default: 1024,
    min: 1,
    max: 1024 * 1024,
    description:
      "memory for the semantic prefilter's sign bits in each process that searches (~56–70 bytes a 384-d vector); past it, the orgs searched least recently are let go and read again at their next semantic search",
  },
  rerank: {
    env: 'RERANK',
    type: 'string',
    default: 'none',
    oneOf: RERANK_PROVIDERS,
    description:
      'reranker that orders each query’s best candidates ([Reranking](SEARCH.md#reranking)): `none`, `http` (the `/rerank` API of Cohere, Jina, Voyage and Hugging Face TEI) or `onnx` (a local cross-encoder folder, run in a worker thread)',
  },
  rerankUrl: {
    env: 'RERANK_URL',
    type: 'url',
    scheme: /^https?:\/\//i,
    invalid: 'RERANK_URL must be an http:// or https:// URL (e.g. http://127.0.0.1:8081)',
    description:
      '`http`: base URL of the rerank API, e.g. `http://127.0.0.1:8081` (TEI) or `https://api.cohere.com/v2` (`/rerank` is appended)',
  },
  rerankModel: {
    env: 'RERANK_MODEL',
    type: 'string',
    default: '',
    defaultText: '— (no `model` sent)',
    description:
      '`http`: the model name sent with each request (e.g. `rerank-v3.5`, `jina-reranker-v2-base-multilingual`)',
  },
  rerankApiKey: {
    env: 'RERANK_API_KEY',
    type: 'string',
    default: '',
    defaultText: '— (no `Authorization` header)',
    description: '`http`: sent as `Authorization: Bearer …`',
  },
  rerankModelDir: {
    env: 'RERANK_MODEL_DIR',
    type: 'string',
    default: '',
    defaultText: '—',
    description:
      '`onnx`: folder of a cross-encoder exported for transformers.js (`config.json`, `tokenizer.json`, `onnx/model.onnx`, e.g. ms-marco-MiniLM-L-6-v2 or bge-reranker-base); nothing is ever downloaded',
  },
  rerankTimeoutMs: {
    env: 'RERANK_TIMEOUT_MS',
    type: 'int',
    default: 10_000,
    min: 100,
    max: 600_000,
    description:
      'how long a query waits for the reranker’s scores (`http`: one try per request, no retries); past it the query answers its first-stage order, `degraded`',
  },
  rerankBatchSize: {
    env: 'RERANK_BATCH_SIZE',
    type: 'int',
    default: 32,
    min: 1,
    max: 1000,
    description:
      'documents per rerank request (`http`, sent at once; TEI accepts 32 by default) or (query, text) pairs per model run (`onnx`)',
  },
  providerBreakerFailures: {
    env: 'PROVIDER_BREAKER_FAILURES',
    type: 'int',
    default: 5,
    min: 1,
    max: 1000,
    description:
      'consecutive failures (timeouts, lost connections, 429, 5xx, garbage) of a query’s calls to the embedding provider or the reranker after which that provider is skipped for `PROVIDER_BREAKER_COOLDOWN_MS`: queries answer without it at once, `degraded`',
  },
  providerBreakerCooldownMs: {
    env: 'PROVIDER_BREAKER_COOLDOWN_MS',
    type: 'int',
    default: 30_000,
    min: 100,
    max: 3_600_000,
    description:
      'how long a failing provider is skipped before one query’s call probes it again (success: back in use; failure: another cool-down)',
  },
};

/** Rules that involve several variables, checked once each variable has been read. */
/** OCR_LANGUAGES as used: English when unset. */
export function ocrLanguagesOf(config: Pick<Config, 'ocrLanguages'>): string[] {
  return config.ocrLanguages.length > 0 ? config.ocrLanguages : ['eng'];
}

export const RULES: Array<(config: Config) => string | null> = [
  (config) =>
    config.secretsKeyPrevious !== '' && config.secretsKey === ''
      ? 'SECRETS_KEY_PREVIOUS is set but SECRETS_KEY is not: a rotation needs the new key in SECRETS_KEY'
      : null,
  (config) => {
    const missing = missingOcrLanguages(ocrLanguagesOf(config));
    if (missing.length === 0) return null;
    const installed = installedOcrLanguages();
    return (
      `OCR_LANGUAGES names ${missing.map((code) => JSON.stringify(code)).join(', ')}, which ${missing.length === 1 ? 'is' : 'are'} not installed. ` +
      `Installed: ${installed.length > 0 ? installed.join(', ') : 'none'}. Add one with npm install @tesseract.js-data/<code>`
    );
  },
  (config) =>
    config.redisUrl !== null && config.databaseUrl === null
      ? 'REDIS_URL is set but DATABASE_URL is not: scale-out keeps records and the full-text index in ' +
        'PostgreSQL, and Redis only carries jobs and rate-limit counters. Set DATABASE_URL=postgres://… ' +
        'as well, or unset REDIS_URL to run embedded on SQLite'
      : null,
  (config) =>
    config.blobStore === 'postgres' && config.databaseUrl === null
      ? 'BLOB_STORE=postgres keeps files in the PostgreSQL database of DATABASE_URL, which is not set. ' +
        'Set DATABASE_URL=postgres://…, or choose BLOB_STORE=fs or BLOB_STORE=s3'
      : null,
  (config) =>
    config.blobStore === 's3' && config.s3Bucket === ''
      ? 'BLOB_STORE=s3 needs S3_BUCKET (the name of an existing bucket)'
      : null,
  (config) =>
    config.embeddings === 'openai' && (config.embeddingsUrl === null || config.embeddingsModel === '')
      ? 'EMBEDDINGS=openai needs EMBEDDINGS_URL (e.g. http://127.0.0.1:11434/v1) and EMBEDDINGS_MODEL'
      : null,
  (config) =>
    config.embeddings === 'onnx' && config.embeddingsModelDir === ''
      ? 'EMBEDDINGS=onnx needs EMBEDDINGS_MODEL_DIR (a local sentence-transformer folder with onnx/model.onnx)'
      : null,
  (config) =>
    config.rerank === 'http' && config.rerankUrl === null
      ? 'RERANK=http needs RERANK_URL (e.g. http://127.0.0.1:8081 for TEI, https://api.cohere.com/v2 for Cohere)'
      : null,
  (config) =>
    config.rerank === 'onnx' && config.rerankModelDir === ''
      ? 'RERANK=onnx needs RERANK_MODEL_DIR (a local cross-encoder folder with onnx/model.onnx)'
      : null,
  (config) =>
    (config.s3AccessKeyId === '') !== (config.s3SecretAccessKey === '')
      ? 'S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY go together: set both, or neither to use the AWS SDK default credential chain'
      : null,
];
