// The one place that reads process.env: parses and checks every variable at boot and lists
// every bad one at once, so a misconfigured deployment fails with one clear message.
import { availableParallelism } from 'node:os';
import path from 'node:path';

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  databaseUrl: string | null;
  redisUrl: string | null;
  /** PostgreSQL schema that holds docindex's tables (scale-out). */
  databaseSchema: string;
  /** Prefix of docindex's Redis keys and BullMQ queue names (scale-out). */
  redisPrefix: string;
  blobDir: string;
  defaultRateLimitRpm: number;
  unauthenticatedRateLimitRpm: number;
  logLevel: string;
  workerConcurrency: number;
  downloadConcurrency: number;
  workerYieldIngestRps: number;
  extractWorkers: number;
  extractTimeoutMs: number;
  extractMaxHeapMb: number;
  pdfMaxPages: number;
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
  trustProxy: boolean;
  requestTimeoutMs: number;
  headersTimeoutMs: number;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

interface IntRule {
  min: number;
  max: number;
}

type Env = Record<string, string | undefined>;

export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];

  const str = (name: string, fallback: string): string => {
    const raw = env[name];
    return raw === undefined || raw === '' ? fallback : raw;
  };
  const optional = (name: string): string | null => {
    const raw = env[name];
    return raw === undefined || raw === '' ? null : raw;
  };
  const int = (name: string, fallback: number, rule: IntRule): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    if (!/^\d+$/.test(raw.trim())) {
      problems.push(`${name} must be a whole number, got ${JSON.stringify(raw)}`);
      return fallback;
    }
    const value = Number(raw.trim());
    if (value < rule.min || value > rule.max) {
      problems.push(`${name} must be between ${rule.min} and ${rule.max}, got ${value}`);
      return fallback;
    }
    return value;
  };
  const bool = (name: string, fallback: boolean): boolean => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    if (['1', 'true', 'yes'].includes(raw.toLowerCase())) return true;
    if (['0', 'false', 'no'].includes(raw.toLowerCase())) return false;
    problems.push(`${name} must be true or false, got ${JSON.stringify(raw)}`);
    return fallback;
  };

  const dataDir = path.resolve(str('DATA_DIR', './data'));
  const databaseUrl = optional('DATABASE_URL');
  if (databaseUrl !== null && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    problems.push(
      'DATABASE_URL must be a postgres:// or postgresql:// URL (leave it unset for embedded SQLite)',
    );
  }
  const redisUrl = optional('REDIS_URL');
  if (redisUrl !== null && !/^rediss?:\/\//.test(redisUrl)) {
    problems.push('REDIS_URL must be a redis:// or rediss:// URL');
  }
  if (redisUrl !== null && databaseUrl === null) {
    problems.push(
      'REDIS_URL is set but DATABASE_URL is not: scale-out keeps records and the full-text index in ' +
        'PostgreSQL, and Redis only carries jobs and rate-limit counters. Set DATABASE_URL=postgres://… ' +
        'as well, or unset REDIS_URL to run embedded on SQLite',
    );
  }

  const config: Config = {
    host: str('HOST', '127.0.0.1'),
    port: int('PORT', 8080, { min: 0, max: 65535 }),
    dataDir,
    databaseUrl,
    redisUrl,
    databaseSchema: str('DATABASE_SCHEMA', 'public'),
    redisPrefix: str('REDIS_PREFIX', 'docindex'),
    blobDir: path.resolve(str('BLOB_DIR', path.join(dataDir, 'blobs'))),
    defaultRateLimitRpm: int('DEFAULT_RATE_LIMIT_RPM', 600, { min: 1, max: 10_000_000 }),
    unauthenticatedRateLimitRpm: int('UNAUTHENTICATED_RATE_LIMIT_RPM', 120, { min: 1, max: 10_000_000 }),
    logLevel: str('LOG_LEVEL', 'info'),
    // Measured on 2 cores (bench/RESULTS.md, section 2): with 4 documents in flight the pipeline
    // threads stay busy while the event loop writes finished documents' indexes.
    workerConcurrency: int('WORKER_CONCURRENCY', 4, { min: 1, max: 256 }),
    downloadConcurrency: int('DOWNLOAD_CONCURRENCY', 8, { min: 1, max: 256 }),
    // Workers in the API's process give way to bursts of ingests at this many ingest requests
    // per second (0: never). Reads and queries are not counted: they never hold documents back.
    workerYieldIngestRps: int('WORKER_YIELD_INGEST_RPS', 500, { min: 0, max: 10_000_000 }),
    // One CPU is left to the event loop, which answers the API and writes every index: on 2 cores
    // a second pipeline thread made ingest slower, not faster (bench/RESULTS.md, section 2).
    extractWorkers: int('EXTRACT_WORKERS', Math.max(1, availableParallelism() - 1), { min: 1, max: 64 }),
    extractTimeoutMs: int('EXTRACT_TIMEOUT_MS', 120_000, { min: 100, max: 3_600_000 }),
    extractMaxHeapMb: int('EXTRACT_MAX_HEAP_MB', 512, { min: 32, max: 16_384 }),
    pdfMaxPages: int('PDF_MAX_PAGES', 5_000, { min: 1, max: 1_000_000 }),
    maxJsonBodyBytes: int('MAX_JSON_BODY_BYTES', 10 * 1024 * 1024, { min: 1024, max: 1024 * 1024 * 1024 }),
    maxUploadBytes: int('MAX_UPLOAD_BYTES', 104_857_600, { min: 1, max: 10 * 1024 * 1024 * 1024 }),
    maxQueuedDocuments: int('MAX_QUEUED_DOCUMENTS', 50_000, { min: 1, max: 100_000_000 }),
    urlFetchAllow: str('URL_FETCH_ALLOW', '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s.length > 0),
    urlFetchConnectTimeoutMs: int('URL_FETCH_CONNECT_TIMEOUT_MS', 10_000, { min: 100, max: 600_000 }),
    urlFetchTimeoutMs: int('URL_FETCH_TIMEOUT_MS', 120_000, { min: 100, max: 3_600_000 }),
    urlFetchMaxRedirects: int('URL_FETCH_MAX_REDIRECTS', 5, { min: 0, max: 20 }),
    jobLeaseMs: int('JOB_LEASE_MS', 30_000, { min: 1_000, max: 3_600_000 }),
    jobMaxAttempts: int('JOB_MAX_ATTEMPTS', 5, { min: 1, max: 100 }),
    reconcileIntervalMs: int('RECONCILE_INTERVAL_MS', 30_000, { min: 1_000, max: 3_600_000 }),
    trustProxy: bool('TRUST_PROXY', false),
    requestTimeoutMs: int('REQUEST_TIMEOUT_MS', 300_000, { min: 1_000, max: 3_600_000 }),
    headersTimeoutMs: int('HEADERS_TIMEOUT_MS', 10_000, { min: 500, max: 600_000 }),
  };

  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(config.databaseSchema)) {
    problems.push('DATABASE_SCHEMA must be a lower-case SQL identifier (letters, digits, underscore)');
  }
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(config.redisPrefix)) {
    problems.push('REDIS_PREFIX must be 1-64 characters of letters, digits, `_`, `.` or `-`');
  }

  const levels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
  if (!levels.includes(config.logLevel)) {
    problems.push(`LOG_LEVEL must be one of ${levels.join(', ')}, got ${JSON.stringify(config.logLevel)}`);
  }

  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}
