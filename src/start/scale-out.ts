// Scale-out adapters: PostgreSQL for records, index and usage; BullMQ on Redis for jobs; Redis for
// the rate limiter. Selected by DATABASE_URL / REDIS_URL:
//   DATABASE_URL + REDIS_URL  PostgreSQL stores, BullMQ queue, Redis limiter (the reference layout)
//   DATABASE_URL only         PostgreSQL stores, PgTableQueue (documents rows are the jobs) and a
//                             PostgreSQL limiter: fewer moving parts, exact limits all the same
//   REDIS_URL only            refused: Redis holds no records, and SQLite cannot be shared by hosts
// Uploaded files (BLOB_STORE) go to PostgreSQL by default, so the processes share nothing but
// PostgreSQL and Redis; `s3` puts them in a bucket, `fs` in BLOB_DIR, a folder all of them mount.
import { AsyncLocalStorage } from 'node:async_hooks';
import { BullmqJobQueue } from '../adapters/bullmq/bullmq-queue.js';
import { LeaseQueue } from '../adapters/lease-queue/engine.js';
import { PgDatabase } from '../adapters/postgres/database.js';
import { PgDocumentStore } from '../adapters/postgres/document-store.js';
import { PgEvaluationQueue, PgEvaluationStore } from '../adapters/postgres/evaluation-store.js';
import { PgIdempotencyStore } from '../adapters/postgres/idempotency-store.js';
import { PgKeywordIndex } from '../adapters/postgres/keyword/index.js';
import { migratePostgres } from '../adapters/postgres/migrations.js';
import { PgOrgStore } from '../adapters/postgres/org-store.js';
import { PgPartitionPurgeRows } from '../adapters/postgres/partition-purge-rows.js';
import { PgRateLimiter } from '../adapters/postgres/rate-limiter.js';
import { PgSourceRunRows, PgSourceStore } from '../adapters/postgres/source-store.js';
import { PgTableQueue } from '../adapters/postgres/table-queue.js';
import { PgUsageStore } from '../adapters/postgres/usage-store.js';
import { PgVectorIndex } from '../adapters/postgres/vector-index.js';
import { PgWebhookOutbox, PgWebhookStore } from '../adapters/postgres/webhook-store.js';
import { RedisRateLimiter } from '../adapters/ratelimit/redis.js';
import type { Config } from '../config/index.js';
import type { Clock, JobQueue, RateLimiter } from '../domain/ports.js';
import type { ReadinessCheck } from '../http/deps.js';
import { type Adapters, PURGE_QUEUE_OPTIONS } from './adapters.js';
import { type BlobStoreHandle, createBlobStore } from './blob-store.js';
import type { Logger } from './logger.js';

/** How long start-up waits for Redis before carrying on degraded (see docs/OPERATIONS.md, "When something fails"). */
const REDIS_STARTUP_WAIT_MS = 5_000;
/** The same outage logs at most once per this interval per source, with a count of the rest. */
const LOG_EVERY_MS = 30_000;

export class ScaleOutConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ScaleOutConfigError';
  }
}

/**
 * A warning that repeats while a backing service is down (every request would log it) is logged
 * once, then at most once per LOG_EVERY_MS with how many were suppressed.
 */
function throttledWarning(logger: Logger, msg: string, context: Record<string, unknown>) {
  let last = 0;
  let suppressed = 0;
  return (error: unknown) => {
    const now = Date.now();
    if (now - last < LOG_EVERY_MS) {
      suppressed += 1;
      return;
    }
    logger.warn({ ...context, err: error, suppressed }, msg);
    last = now;
    suppressed = 0;
  };
}

export async function createScaleOutAdapters(
  config: Config,
  logger: Logger,
  clock: Clock,
): Promise<Adapters> {
  if (config.databaseUrl === null) {
    throw new ScaleOutConfigError(
      'REDIS_URL is set but DATABASE_URL is not. Scale-out keeps records and the full-text index in ' +
        'PostgreSQL; Redis only carries jobs and rate-limit counters. Set DATABASE_URL=postgres://… ' +
        'as well, or unset REDIS_URL to run embedded on SQLite.',
    );
  }

  // Requests and jobs each hold a connection for one statement or one short transaction; the
  // worker side adds heartbeats and claims.
  const maxConnections = Math.max(10, config.workerConcurrency * 2 + 4);
  // The org of the API request running now (set by the authenticated scope through
  // `requestScope`): its queries wait for the org's share of the pool.
  const requestOrg = new AsyncLocalStorage<string>();
  const db = new PgDatabase({
    connectionString: config.databaseUrl,
    schema: config.databaseSchema,
    maxConnections,
    orgShare: {
      currentOrg: () => requestOrg.getStore(),
      maxConnections: config.databaseOrgMaxConnections || Math.max(1, Math.floor(maxConnections / 2)),
    },
    onIdleError: throttledWarning(logger, 'idle PostgreSQL connection failed', { service: 'postgres' }),
  });
  try {
    const { applied } = await migratePostgres(db);
    if (applied.length > 0) logger.info({ applied, schema: config.databaseSchema }, 'database migrated');
  } catch (error) {
    await db.close().catch(() => {});
    throw error;
  }

  let blobStore: BlobStoreHandle;
  try {
    blobStore = await createBlobStore(config, db);
  } catch (error) {
    await db.close().catch(() => {});
    throw error;
  }

  const readiness: ReadinessCheck[] = [{ name: 'postgres', check: () => db.ping() }];
  // Two lanes, as in embedded mode: downloads of (short-lived, pre-signed) URLs must not wait
  // behind a backlog of extractions.
  let queue: JobQueue;
  let downloadQueue: JobQueue;
  let rateLimiter: RateLimiter;

  if (config.redisUrl !== null) {
    const lane = (name: 'process' | 'download') =>
      new BullmqJobQueue({
        url: config.redisUrl as string,
        prefix: config.redisPrefix,
        name,
        leaseMs: config.jobLeaseMs,
        maxAttempts: config.jobMaxAttempts,
        onError: throttledWarning(logger, 'job queue (Redis) error', { service: 'redis', queue: name }),
      });
    const processLane = lane('process');
    const downloadLane = lane('download');
    const redisLimiter = new RedisRateLimiter({
      url: config.redisUrl,
      keyPrefix: `${config.redisPrefix}:ratelimit`,
      onUnavailable: throttledWarning(
        logger,
        'Redis unavailable: rate limits are counted per process until it is back',
        { service: 'redis' },
      ),
    });
    queue = processLane;
    downloadQueue = downloadLane;
    rateLimiter = redisLimiter;
    readiness.push({
      name: 'redis',
      check: async () => {
        await Promise.all([redisLimiter.ping(), processLane.ping()]);
      },
    });
    try {
      await Promise.all([
        processLane.ready(REDIS_STARTUP_WAIT_MS),
        downloadLane.ready(REDIS_STARTUP_WAIT_MS),
        redisLimiter.ready(REDIS_STARTUP_WAIT_MS),
      ]);
    } catch (error) {
      // Starting anyway keeps reads and queries up; /readyz says what is missing, the limiter
      // counts per process, and the reconciler enqueues accepted documents once Redis is back.
      logger.warn({ err: error, service: 'redis' }, 'Redis is not reachable; starting degraded');
    }
  } else {
    const lane = (name: 'process' | 'download') =>
      new PgTableQueue(db, {
        lane: name,
        leaseMs: config.jobLeaseMs,
        maxAttempts: config.jobMaxAttempts,
        onError: throttledWarning(logger, 'job queue (PostgreSQL) error', {
          service: 'postgres',
          queue: name,
        }),
      });
    queue = lane('process');
    downloadQueue = lane('download');
    rateLimiter = new PgRateLimiter(db);
  }

  // Evaluations are few and long: their rows are their jobs on PostgreSQL, with or without Redis.
  const evaluationQueue = new PgEvaluationQueue(db, {
    leaseMs: config.jobLeaseMs,
    maxAttempts: config.jobMaxAttempts,
    onError: throttledWarning(logger, 'evaluation queue (PostgreSQL) error', {
      service: 'postgres',
      queue: 'evaluations',
    }),
  });
  // Source runs are few and long: their rows in PostgreSQL are their jobs, with or without Redis,
  // so a run is queued in the transaction that creates it and one run per source holds everywhere.
  const sourceQueue = new LeaseQueue(new PgSourceRunRows(db), {
    leaseMs: config.jobLeaseMs,
    maxAttempts: config.jobMaxAttempts,
    onError: throttledWarning(logger, 'source run queue (PostgreSQL) error', { service: 'postgres' }),
  });
  const partitionPurgeQueue = new LeaseQueue(new PgPartitionPurgeRows(db), {
    leaseMs: config.jobLeaseMs,
    ...PURGE_QUEUE_OPTIONS,
    onError: throttledWarning(logger, 'partition purge queue (PostgreSQL) error', { service: 'postgres' }),
  });
  const keyword = new PgKeywordIndex(db, { language: config.searchLanguage });
  const outbox = new PgWebhookOutbox(db, { maxPending: config.webhookMaxPending });
  // The chunk vectors: what queries search and what the vector stage writes, one index.
  const vectors = new PgVectorIndex(db, {
    prefilterMaxBytes: config.vectorPrefilterMaxMb * 1024 * 1024,
    outbox,
  });
  return {
    orgs: new PgOrgStore(db),
    documents: new PgDocumentStore(db, clock, {
      tableQueue: config.redisUrl === null,
      keyword,
      outbox,
    }),
    keyword,
    vectorSearch: vectors,
    vectorStageStore: vectors,
    usage: new PgUsageStore(db),
    queue,
    downloadQueue,
    rateLimiter,
    blobs: blobStore.blobs,
    idempotency: new PgIdempotencyStore(db),
    evaluations: new PgEvaluationStore(db),
    evaluationQueue,
    webhooks: new PgWebhookStore(db),
    sources: new PgSourceStore(db),
    sourceQueue,
    partitionPurgeQueue,
    readiness,
    requestScope: { run: (orgId, fn) => requestOrg.run(orgId, fn) },
    async close() {
      await Promise.all([
        queue.close(),
        downloadQueue.close(),
        evaluationQueue.close(),
        sourceQueue.close(),
        partitionPurgeQueue.close(),
      ]);
      await rateLimiter.close();
      await blobStore.close();
      await db.close();
    },
  };
}
