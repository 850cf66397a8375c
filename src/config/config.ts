// The configuration loadConfig (index.ts) gives the rest of the program: one field per variable
// of variables/, and the values a few of them choose between.
import type { SearchLanguage } from '../domain/search-words.js';

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

/** Who reorders a query's first-stage candidates (RERANK): nobody, an HTTP rerank server, or a local cross-encoder. */
export type RerankProvider = 'none' | 'http' | 'onnx';

export const RERANK_PROVIDERS: readonly RerankProvider[] = ['none', 'http', 'onnx'];

/** Who turns text into vectors (EMBEDDINGS): nobody (keyword search only), an HTTP server, or a local model. */
export type EmbeddingsProvider = 'none' | 'openai' | 'onnx';

export const EMBEDDINGS_PROVIDERS: readonly EmbeddingsProvider[] = ['none', 'openai', 'onnx'];
