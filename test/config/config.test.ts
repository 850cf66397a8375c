// The environment as loadConfig reads it: defaults, limits and the exact messages a user sees
// when a variable is wrong (all of them at once, exit 2 from the command).
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { tracesUrlOf } from '../../src/start/tracing.js';

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('has a default for every variable', () => {
    expect(loadConfig({})).toEqual({
      host: '127.0.0.1',
      port: 8080,
      dataDir: path.resolve('./data'),
      databaseUrl: null,
      redisUrl: null,
      blobStore: 'fs',
      s3Endpoint: null,
      s3Bucket: '',
      s3Region: 'us-east-1',
      s3AccessKeyId: '',
      s3SecretAccessKey: '',
      s3ForcePathStyle: false,
      databaseSchema: 'public',
      databaseOrgMaxConnections: 0,
      redisPrefix: 'docindex',
      blobDir: path.resolve('./data/blobs'),
      modelsDir: path.resolve('./data/models'),
      hfEndpoint: 'https://huggingface.co',
      hfToken: '',
      defaultRateLimitRpm: 600,
      unauthenticatedRateLimitRpm: 120,
      searchLanguage: 'auto',
      searchProximity: false,
      adminToken: '',
      secretsKey: '',
      secretsKeyPrevious: '',
      logLevel: 'info',
      embeddings: 'none',
      embeddingsUrl: null,
      embeddingsModel: '',
      embeddingsApiKey: '',
      embeddingsDimensions: 0,
      embeddingsModelDir: '',
      embeddingsBatchSize: 64,
      embeddingsConcurrency: 4,
      embeddingsTimeoutMs: 30_000,
      embeddingsMaxRetries: 4,
      rerank: 'none',
      rerankUrl: null,
      rerankModel: '',
      rerankApiKey: '',
      rerankModelDir: '',
      rerankTimeoutMs: 10_000,
      rerankBatchSize: 32,
      providerBreakerFailures: 5,
      providerBreakerCooldownMs: 30_000,
      workerConcurrency: 8,
      downloadConcurrency: 8,
      workerYieldIngestRps: 500,
      extractWorkers: Math.max(1, availableParallelism() - 1),
      extractIdleStopMs: 300_000,
      extractTimeoutMs: 120_000,
      extractMaxHeapMb: 512,
      pdfMaxPages: 5_000,
      extractMaxTextRatio: 16,
      extractTextFloorChars: 4 * 1024 * 1024,
      ocr: 'on',
      ocrLanguages: [],
      maxJsonBodyBytes: 10_485_760,
      maxUploadBytes: 104_857_600,
      maxQueuedDocuments: 50_000,
      urlFetchAllow: [],
      urlFetchConnectTimeoutMs: 10_000,
      urlFetchTimeoutMs: 120_000,
      vectorPrefilterMaxMb: 1024,
      webhookMaxEndpoints: 10,
      webhookMaxPending: 10_000,
      webhookTimeoutMs: 10_000,
      webhookRetryBaseMs: 5_000,
      webhookRetryMaxMs: 3_600_000,
      webhookRetryWindowMs: 86_400_000,
      webhookDisableAfterMs: 432_000_000,
      webhookPollMs: 200,
      webhookConcurrency: 16,
      webhookOrgConcurrency: 4,
      webhookEndpointConcurrency: 2,
      urlFetchMaxRedirects: 5,
      jobLeaseMs: 30_000,
      jobMaxAttempts: 5,
      reconcileIntervalMs: 30_000,
      keepOriginals: true,
      otelExporterOtlpEndpoint: null,
      otelExporterOtlpTracesEndpoint: null,
      otelServiceName: 'docindex',
      otelSdkDisabled: false,
      otelTracesSampler: 'parentbased_always_on',
      otelTracesSamplerArg: '1',
      otelBspScheduleDelay: 5_000,
      otelBspExportTimeout: 30_000,
      otelBspMaxQueueSize: 8_192,
      otelBspMaxExportBatchSize: 1_024,
      trustProxy: false,
      requestTimeoutMs: 300_000,
      headersTimeoutMs: 10_000,
    });
  });

  it('turns traces on with an OTLP endpoint, off with OTEL_SDK_DISABLED, and refuses bad tracing values', () => {
    expect(tracesUrlOf(loadConfig({}))).toBeNull();
    expect(tracesUrlOf(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318/' }))).toBe(
      'http://127.0.0.1:4318/v1/traces',
    );
    expect(
      tracesUrlOf(
        loadConfig({
          OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
          OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://collector.example/otlp/traces',
        }),
      ),
    ).toBe('https://collector.example/otlp/traces');
    expect(
      tracesUrlOf(
        loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' }),
      ),
    ).toBeNull();
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://127.0.0.1:4317' })).toThrow(
      /OTEL_EXPORTER_OTLP_ENDPOINT must be an http/,
    );
    expect(() => loadConfig({ OTEL_TRACES_SAMPLER: 'sometimes' })).toThrow(
      /OTEL_TRACES_SAMPLER must be one of/,
    );
    expect(() => loadConfig({ OTEL_TRACES_SAMPLER_ARG: '1.5' })).toThrow(
      /OTEL_TRACES_SAMPLER_ARG must be a ratio/,
    );
    expect(
      loadConfig({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' }),
    ).toMatchObject({
      otelTracesSampler: 'traceidratio',
      otelTracesSamplerArg: '0.25',
    });
    expect(
      loadConfig({ OTEL_BSP_SCHEDULE_DELAY: '200', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '64' }),
    ).toMatchObject({ otelBspScheduleDelay: 200, otelBspMaxExportBatchSize: 64 });
    expect(() => loadConfig({ OTEL_BSP_MAX_QUEUE_SIZE: '0' })).toThrow(/OTEL_BSP_MAX_QUEUE_SIZE/);
  });

  it('treats an empty variable as unset', () => {
    expect(loadConfig({ PORT: '', HOST: '', TRUST_PROXY: '', DATABASE_URL: '' })).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      trustProxy: false,
      databaseUrl: null,
    });
  });

  it('reads every kind of variable', () => {
    const config = loadConfig({
      HOST: '0.0.0.0',
      PORT: ' 0 ',
      DATA_DIR: '/srv/docindex',
      DATABASE_URL: 'postgresql://u:p@db/docs',
      REDIS_URL: 'rediss://cache:6380',
      DATABASE_SCHEMA: 'tenant_a',
      REDIS_PREFIX: 'di.prod-1',
      TRUST_PROXY: 'YES',
      URL_FETCH_ALLOW: ' 10.0.0.0/8, files.local:8443 ,,',
      LOG_LEVEL: 'silent',
      EXTRACT_WORKERS: '64',
      URL_FETCH_MAX_REDIRECTS: '0',
    });
    expect(config).toMatchObject({
      host: '0.0.0.0',
      port: 0,
      dataDir: '/srv/docindex',
      blobDir: '/srv/docindex/blobs',
      databaseUrl: 'postgresql://u:p@db/docs',
      redisUrl: 'rediss://cache:6380',
      databaseSchema: 'tenant_a',
      redisPrefix: 'di.prod-1',
      trustProxy: true,
      urlFetchAllow: ['10.0.0.0/8', 'files.local:8443'],
      logLevel: 'silent',
      extractWorkers: 64,
      urlFetchMaxRedirects: 0,
    });
    expect(loadConfig({ BLOB_DIR: 'shared/blobs', TRUST_PROXY: 'no' })).toMatchObject({
      blobDir: path.resolve('shared/blobs'),
      trustProxy: false,
    });
  });

  it('names every bad variable, with its limits, in one error', () => {
    let error: unknown;
    try {
      loadConfig({ PORT: 'eighty', JOB_MAX_ATTEMPTS: '101' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toBe(
      'invalid configuration:\n' +
        '  - PORT must be a whole number, got "eighty"\n' +
        '  - JOB_MAX_ATTEMPTS must be between 1 and 100, got 101',
    );
  });

  it.each([
    ['PORT', '-1', 'PORT must be a whole number, got "-1"'],
    ['PORT', '65536', 'PORT must be between 0 and 65535, got 65536'],
    ['DEFAULT_RATE_LIMIT_RPM', '0', 'DEFAULT_RATE_LIMIT_RPM must be between 1 and 10000000, got 0'],
    ['EXTRACT_WORKERS', '65', 'EXTRACT_WORKERS must be between 1 and 64, got 65'],
    ['EXTRACT_MAX_HEAP_MB', '31', 'EXTRACT_MAX_HEAP_MB must be between 32 and 16384, got 31'],
    ['MAX_JSON_BODY_BYTES', '1023', 'MAX_JSON_BODY_BYTES must be between 1024 and 1073741824, got 1023'],
    [
      'MAX_UPLOAD_BYTES',
      '10737418241',
      'MAX_UPLOAD_BYTES must be between 1 and 10737418240, got 10737418241',
    ],
    ['URL_FETCH_MAX_REDIRECTS', '21', 'URL_FETCH_MAX_REDIRECTS must be between 0 and 20, got 21'],
    ['HEADERS_TIMEOUT_MS', '499', 'HEADERS_TIMEOUT_MS must be between 500 and 600000, got 499'],
    ['WORKER_CONCURRENCY', '1.5', 'WORKER_CONCURRENCY must be a whole number, got "1.5"'],
    ['TRUST_PROXY', 'maybe', 'TRUST_PROXY must be true or false, got "maybe"'],
    [
      'DATABASE_URL',
      'mysql://db',
      'DATABASE_URL must be a postgres:// or postgresql:// URL (leave it unset for embedded SQLite)',
    ],
    [
      'DATABASE_SCHEMA',
      'Tenant',
      'DATABASE_SCHEMA must be a lower-case SQL identifier (letters, digits, underscore)',
    ],
    ['BLOB_STORE', 'nfs', 'BLOB_STORE must be one of fs, postgres, s3, got "nfs"'],
    [
      'S3_ENDPOINT',
      'minio:9000',
      'S3_ENDPOINT must be an http:// or https:// URL (leave it unset for AWS S3)',
    ],
    ['S3_FORCE_PATH_STYLE', 'sometimes', 'S3_FORCE_PATH_STYLE must be true or false, got "sometimes"'],
    ['REDIS_PREFIX', 'a b', 'REDIS_PREFIX must be 1-64 characters of letters, digits, `_`, `.` or `-`'],
    [
      'LOG_LEVEL',
      'loud',
      'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "loud"',
    ],
  ])('%s=%s is refused', (name, value, problem) => {
    expect(problemsOf({ [name]: value })).toEqual([problem]);
  });

  it('refuses REDIS_URL without DATABASE_URL, and a REDIS_URL that is not redis://', () => {
    expect(problemsOf({ REDIS_URL: 'redis://cache' })).toEqual([
      'REDIS_URL is set but DATABASE_URL is not: scale-out keeps records and the full-text index in ' +
        'PostgreSQL, and Redis only carries jobs and rate-limit counters. Set DATABASE_URL=postgres://… ' +
        'as well, or unset REDIS_URL to run embedded on SQLite',
    ]);
    expect(problemsOf({ DATABASE_URL: 'postgres://db', REDIS_URL: 'http://cache' })).toEqual([
      'REDIS_URL must be a redis:// or rediss:// URL',
    ]);
  });

  it('turns OCR on and off, and takes only installed OCR languages, naming the installed ones', () => {
    expect(loadConfig({}).ocr).toBe('on');
    expect(loadConfig({ OCR: 'off' }).ocr).toBe('off');
    expect(loadConfig({ OCR_LANGUAGES: 'eng' }).ocrLanguages).toEqual(['eng']);
    expect(problemsOf({ OCR: 'maybe' })).toHaveLength(1);
    expect(problemsOf({ OCR_LANGUAGES: 'eng, klingon' })).toEqual([
      'OCR_LANGUAGES names "klingon", which is not installed. Installed: eng. Add one with npm install @tesseract.js-data/<code>',
    ]);
  });

  it('keeps files in PostgreSQL by default once DATABASE_URL is set, and in a folder otherwise', () => {
    expect(loadConfig({}).blobStore).toBe('fs');
    expect(loadConfig({ DATABASE_URL: 'postgres://db' }).blobStore).toBe('postgres');
    expect(loadConfig({ DATABASE_URL: 'postgres://db', BLOB_STORE: 'fs' }).blobStore).toBe('fs');
    expect(loadConfig({ BLOB_STORE: 's3', S3_BUCKET: 'docs' }).blobStore).toBe('s3');
  });

  it('processes 8 documents at once embedded and 4 once DATABASE_URL is set, unless told', () => {
    expect(loadConfig({}).workerConcurrency).toBe(8);
    expect(loadConfig({ DATABASE_URL: 'postgres://db' }).workerConcurrency).toBe(4);
    expect(loadConfig({ DATABASE_URL: 'postgres://db', WORKER_CONCURRENCY: '6' }).workerConcurrency).toBe(6);
    expect(loadConfig({ WORKER_CONCURRENCY: '2' }).workerConcurrency).toBe(2);
  });

  it('puts pulled models under DATA_DIR unless MODELS_DIR says otherwise, and checks HF_ENDPOINT', () => {
    expect(loadConfig({ DATA_DIR: '/srv/docindex' }).modelsDir).toBe(path.resolve('/srv/docindex/models'));
    expect(loadConfig({ DATA_DIR: '/srv/docindex', MODELS_DIR: 'models' }).modelsDir).toBe(
      path.resolve('models'),
    );
    expect(loadConfig({ HF_ENDPOINT: 'https://hf-mirror.example/', HF_TOKEN: 'hf_x' })).toMatchObject({
      hfEndpoint: 'https://hf-mirror.example/',
      hfToken: 'hf_x',
    });
    expect(() => loadConfig({ HF_ENDPOINT: 'huggingface.co' })).toThrow(
      'HF_ENDPOINT must be an http:// or https:// URL (e.g. https://huggingface.co)',
    );
  });

  it('reads the S3 settings', () => {
    expect(
      loadConfig({
        BLOB_STORE: 's3',
        S3_ENDPOINT: 'http://127.0.0.1:9000',
        S3_BUCKET: 'docs',
        S3_REGION: 'eu-west-3',
        S3_ACCESS_KEY_ID: 'AKIDEXAMPLE',
        S3_SECRET_ACCESS_KEY: 'secret',
        S3_FORCE_PATH_STYLE: 'true',
      }),
    ).toMatchObject({
      blobStore: 's3',
      s3Endpoint: 'http://127.0.0.1:9000',
      s3Bucket: 'docs',
      s3Region: 'eu-west-3',
      s3AccessKeyId: 'AKIDEXAMPLE',
      s3SecretAccessKey: 'secret',
      s3ForcePathStyle: true,
    });
  });

  it('refuses a blob store that lacks what it needs', () => {
    expect(problemsOf({ BLOB_STORE: 'postgres' })).toEqual([
      'BLOB_STORE=postgres keeps files in the PostgreSQL database of DATABASE_URL, which is not set. ' +
        'Set DATABASE_URL=postgres://…, or choose BLOB_STORE=fs or BLOB_STORE=s3',
    ]);
    expect(problemsOf({ BLOB_STORE: 's3' })).toEqual([
      'BLOB_STORE=s3 needs S3_BUCKET (the name of an existing bucket)',
    ]);
    expect(problemsOf({ BLOB_STORE: 's3', S3_BUCKET: 'docs', S3_ACCESS_KEY_ID: 'AKIDEXAMPLE' })).toEqual([
      'S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY go together: set both, or neither to use the AWS SDK default credential chain',
    ]);
  });
});

describe('embedding configuration', () => {
  it('EMBEDDINGS=openai needs a URL and a model; EMBEDDINGS=onnx a model folder; the provider must be known', () => {
    expect(() => loadConfig({ EMBEDDINGS: 'openai' })).toThrow(/EMBEDDINGS=openai needs EMBEDDINGS_URL/);
    expect(() => loadConfig({ EMBEDDINGS: 'onnx' })).toThrow(/EMBEDDINGS=onnx needs EMBEDDINGS_MODEL_DIR/);
    expect(() => loadConfig({ EMBEDDINGS: 'cohere' })).toThrow(
      /EMBEDDINGS must be one of none, openai, onnx/,
    );
    expect(() =>
      loadConfig({ EMBEDDINGS: 'openai', EMBEDDINGS_URL: 'ftp://x', EMBEDDINGS_MODEL: 'm' }),
    ).toThrow(/EMBEDDINGS_URL must be an http/);
    const config = loadConfig({
      EMBEDDINGS: 'openai',
      EMBEDDINGS_URL: 'http://127.0.0.1:11434/v1',
      EMBEDDINGS_MODEL: 'nomic-embed-text',
      EMBEDDINGS_DIMENSIONS: '256',
    });
    expect(config).toMatchObject({
      embeddings: 'openai',
      embeddingsModel: 'nomic-embed-text',
      embeddingsDimensions: 256,
    });
  });
});

describe('rerank and provider-health configuration', () => {
  it('RERANK=http needs a URL, RERANK=onnx a model folder; the reranker must be known; breaker bounds hold', () => {
    expect(() => loadConfig({ RERANK: 'http' })).toThrow(/RERANK=http needs RERANK_URL/);
    expect(() => loadConfig({ RERANK: 'onnx' })).toThrow(/RERANK=onnx needs RERANK_MODEL_DIR/);
    expect(() => loadConfig({ RERANK: 'cohere' })).toThrow(/RERANK must be one of none, http, onnx/);
    expect(() => loadConfig({ RERANK: 'http', RERANK_URL: 'ftp://x' })).toThrow(/RERANK_URL must be an http/);
    expect(() => loadConfig({ PROVIDER_BREAKER_FAILURES: '0' })).toThrow(/PROVIDER_BREAKER_FAILURES/);
    const config = loadConfig({
      RERANK: 'http',
      RERANK_URL: 'https://api.cohere.com/v2',
      RERANK_MODEL: 'rerank-v3.5',
      RERANK_API_KEY: 'co-key',
      RERANK_TIMEOUT_MS: '2500',
      PROVIDER_BREAKER_COOLDOWN_MS: '5000',
    });
    expect(config).toMatchObject({
      rerank: 'http',
      rerankUrl: 'https://api.cohere.com/v2',
      rerankModel: 'rerank-v3.5',
      rerankApiKey: 'co-key',
      rerankTimeoutMs: 2500,
      providerBreakerFailures: 5,
      providerBreakerCooldownMs: 5000,
    });
  });
});
