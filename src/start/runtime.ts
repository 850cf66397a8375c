// The composition root: reads the config, picks an adapter for every port (embedded SQLite or
// PostgreSQL/Redis), and wires the domain services, the worker and the HTTP dependencies.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { LeaseQueue } from '../adapters/lease-queue/engine.js';
import { MemoryRateLimiter } from '../adapters/ratelimit/memory.js';
import { s3SourceType } from '../adapters/sources/s3/s3-source.js';
import { webSourceType } from '../adapters/sources/web/web-source.js';
import { startCheckpointer } from '../adapters/sqlite/checkpointer.js';
import { openSqlite } from '../adapters/sqlite/database.js';
import { SqliteDocumentStore } from '../adapters/sqlite/document-store.js';
import { SqliteEvaluationQueue, SqliteEvaluationStore } from '../adapters/sqlite/evaluation-store.js';
import { SqliteIdempotencyStore } from '../adapters/sqlite/idempotency-store.js';
import { SqliteKeywordIndex } from '../adapters/sqlite/keyword/index.js';
import { SqliteOrgStore } from '../adapters/sqlite/org-store.js';
import { SqlitePartitionPurgeRows } from '../adapters/sqlite/partition-purge-rows.js';
import { SqliteSourceRunRows, SqliteSourceStore } from '../adapters/sqlite/source-store.js';
import { SqliteTableQueue } from '../adapters/sqlite/table-queue.js';
import { SqliteUsageStore } from '../adapters/sqlite/usage-store.js';
import { SqliteVectorIndex } from '../adapters/sqlite/vector-index.js';
import { SqliteWebhookOutbox, SqliteWebhookStore } from '../adapters/sqlite/webhook-store.js';
import type { Config } from '../config/index.js';
import { Authenticator } from '../domain/auth.js';
import { TOKENIZER_NAME } from '../domain/chunk-settings.js';
import { CircuitBreaker, type CircuitState } from '../domain/circuit-breaker.js';
import { DocumentService } from '../domain/documents.js';
import { EvaluationRunner } from '../domain/evaluation-runner.js';
import { EvaluationService } from '../domain/evaluations.js';
import { IdempotencyService } from '../domain/idempotency.js';
import { IngestionService } from '../domain/ingestion.js';
import { OrgAdmin } from '../domain/orgs.js';
import { PartitionService } from '../domain/partition-service.js';
import {
  type Clock,
  type Embedder,
  type JobConsumer,
  noopTracer,
  type Reranker,
  systemClock,
  type Tracer,
} from '../domain/ports.js';
import { guardEmbedder, guardReranker, type ProviderStatus } from '../domain/provider-health.js';
import { QueryService } from '../domain/query.js';
import { QueryEmbeddings } from '../domain/query-embeddings.js';
import { documentAnalyzer, fallbackLanguage } from '../domain/search-words.js';
import { parseSecretsKey, SecretBox } from '../domain/secrets.js';
import { SourceSync } from '../domain/source-sync.js';
import { SourceService, type SourceType, type SourceTypeName } from '../domain/sources.js';
import { UsageService } from '../domain/usage.js';
import { VectorStage } from '../domain/vector-stage.js';
import { VectorStatusService } from '../domain/vector-status.js';
import { WebhookService } from '../domain/webhooks.js';
import type { AppDeps } from '../http/deps.js';
import { toRunEventJson } from '../http/routes/sources/json.js';
import type { PipelineThreads } from '../pipeline/extract/index.js';
import { createAddressPolicy, redactUrl } from '../pipeline/fetch/index.js';
import type { RequestRate } from '../pipeline/yield-to-api.js';
import { type Adapters, PURGE_QUEUE_OPTIONS } from './adapters.js';
import { type BlobStoreHandle, createBlobStore } from './blob-store.js';
import { createEmbedder } from './embedder.js';
import type { Logger } from './logger.js';
import { createMetrics } from './metrics.js';
import { PACKAGE_VERSION } from './package-version.js';
import { startDocumentLanes, submitChecks, submittedUrlRefusal } from './pipeline.js';
import { createReranker } from './reranker.js';
import { startTracing, type Tracing } from './tracing.js';
import { WEBHOOK_LOG_LIMIT, webhookDispatcherStarter } from './webhook-dispatcher.js';

/** Evaluations a worker runs at once (each sends its queries one after another). */
const EVALUATION_CONCURRENCY = 2;
/** How often a worker looks for scheduled sources that are due (and removals left without a run). */
const SOURCE_SCHEDULE_POLL_MS = 30_000;
/** Source runs one worker process runs at once. */
const SOURCE_RUN_CONCURRENCY = 2;
/** Partitions one worker process purges at once. */
const PURGE_CONCURRENCY = 1;

export interface Runtime extends Adapters {
  config: Config;
  logger: Logger;
  clock: Clock;
  /** EMBEDDINGS' provider; null when EMBEDDINGS=none (keyword search only). */
  embedder: Embedder | null;
  /** RERANK's provider; null when RERANK=none. */
  reranker: Reranker | null;
  /** The providers queries call, each with its circuit breaker's state. */
  providers: ProviderStatus[];
  /** Logs the providers (kind, model, URL without credentials): once, by a serving process. */
  logProviders(): void;
  admin: OrgAdmin;
  appDeps: AppDeps;
  /**
   * Starts consuming jobs and the reconciler; returns a handle that stops both. Given the API's
   * ingest request rate (workers in the API's process), processing gives way to ingest bursts.
   */
  startWorker(options?: {
    ingestRequests?: RequestRate | undefined;
    threads?: PipelineThreads | undefined;
  }): {
    /** Resolves once an extraction thread has loaded the tokenizer (or could not start). */
    ready: Promise<void>;
    stop(): Promise<void>;
  };
  /** Starts sending the webhook outbox (every `serve` and `worker` process runs one). */
  startDispatcher(): { stop(): Promise<void> };
  /** Spans of requests and jobs (start/tracing.ts); the no-op tracer when tracing is off. */
  tracer: Tracer;
}

export interface RuntimeOptions {
  /**
   * A command that runs and exits (migrate, orgs, keys): no WAL checkpoint thread, which would
   * only add its start-up to every run; SQLite checkpoints on the connection instead.
   */
  oneShot?: boolean;
  /**
   * The process's part (`serve`, `worker`), on every span it sends. Traces are started only for
   * such a process, never for a one-shot command.
   */
  role?: string;
}

export async function createAdapters(
  config: Config,
  logger: Logger,
  clock: Clock,
  { oneShot = false }: RuntimeOptions = {},
): Promise<Adapters> {
  if (config.databaseUrl !== null || config.redisUrl !== null) {
    const { createScaleOutAdapters } = await import('./scale-out.js');
    return createScaleOutAdapters(config, logger, clock);
  }
  mkdirSync(config.dataDir, { recursive: true });
  const dbFile = path.join(config.dataDir, 'docindex.db');
  const db = openSqlite(dbFile);
  const checkpointer = oneShot
    ? null
    : startCheckpointer(db, dbFile, {
        onError: (error) => logger.warn({ err: error }, 'WAL checkpoints moved back to the main thread'),
      });
  const queueOptions = { leaseMs: config.jobLeaseMs, maxAttempts: config.jobMaxAttempts };
  const queue = new SqliteTableQueue(db, { ...queueOptions, lane: 'process' });
  const downloadQueue = new SqliteTableQueue(db, { ...queueOptions, lane: 'download' });
  const evaluationQueue = new SqliteEvaluationQueue(db, { ...queueOptions, clock });
  const sourceQueue = new LeaseQueue(new SqliteSourceRunRows(db, clock), { ...queueOptions, pollMs: 200 });
  const partitionPurgeQueue = new LeaseQueue(new SqlitePartitionPurgeRows(db, clock), PURGE_QUEUE_OPTIONS);
  const rateLimiter = new MemoryRateLimiter();
  const keyword = new SqliteKeywordIndex(db, { language: config.searchLanguage });
  const outbox = new SqliteWebhookOutbox(db, clock, { maxPending: config.webhookMaxPending });
  let blobStore: BlobStoreHandle;
  try {
    blobStore = await createBlobStore(config, null);
  } catch (error) {
    await checkpointer?.close();
    db.close();
    throw error;
  }
  // The chunk vectors: what queries search and what the vector stage writes, one index.
  const vectors = new SqliteVectorIndex(db, {
    prefilterMaxBytes: config.vectorPrefilterMaxMb * 1024 * 1024,
    outbox,
  });
  return {
    orgs: new SqliteOrgStore(db),
    documents: new SqliteDocumentStore(db, { keyword, outbox }),
    keyword,
    vectorSearch: vectors,
    vectorStageStore: vectors,
    usage: new SqliteUsageStore(db),
    queue,
    downloadQueue,
    rateLimiter,
    blobs: blobStore.blobs,
    idempotency: new SqliteIdempotencyStore(db),
    evaluations: new SqliteEvaluationStore(db, clock),
    evaluationQueue,
    webhooks: new SqliteWebhookStore(db),
    sources: new SqliteSourceStore(db, clock),
    sourceQueue,
    partitionPurgeQueue,
    readiness: [
      {
        name: 'sqlite',
        check: async () => {
          db.prepare('SELECT 1').get();
        },
      },
    ],
    async close() {
      await queue.close();
      await downloadQueue.close();
      await evaluationQueue.close();
      await sourceQueue.close();
      await partitionPurgeQueue.close();
      await rateLimiter.close();
      await blobStore.close();
      await checkpointer?.close();
      db.close();
    },
  };
}

export async function createRuntime(
  config: Config,
  logger: Logger,
  clock: Clock = systemClock,
  options: RuntimeOptions = {},
): Promise<Runtime> {
  const tracing: Tracing =
    options.oneShot || options.role === undefined
      ? { tracer: noopTracer, shutdown: async () => {} }
      : await startTracing(config, options.role);
  const { tracer } = tracing;
  const adapters = await createAdapters(config, logger, clock, options);
  await adapters.keyword.adoptAnalysis();
  const analysis = await adapters.keyword.analysisState();
  if (analysis.reindexNeeded) {
    logger.warn(
      { configured: analysis.configured, written: analysis.written },
      'the keyword index must be rewritten (SEARCH_LANGUAGE changed, or PostgreSQL chunks predate its RUM index): run `docindex reindex` (online; until it ends queries find every chunk as before)',
    );
  }
  const { orgs, documents, usage, queue, downloadQueue, rateLimiter, blobs } = adapters;
  const embedder = await createEmbedder(config);
  const reranker = await createReranker(config);
  // A query's provider calls go through a circuit breaker per provider; the background vector
  // stage calls the embedder directly and keeps its own backoff.
  const breakerFor = (name: string) =>
    new CircuitBreaker(name, clock, {
      failureThreshold: config.providerBreakerFailures,
      coolDownMs: config.providerBreakerCooldownMs,
      onStateChange: (to: CircuitState, from: CircuitState) => {
        const message = `${name} provider ${to === 'open' ? 'failing: skipped by queries for a cool-down' : to === 'half-open' ? 'probed again' : 'back in use'}`;
        if (to === 'open') logger.warn({ provider: name, from, to }, message);
        else logger.info({ provider: name, from, to }, message);
      },
    });
  const embeddingsBreaker = embedder === null ? null : breakerFor('embeddings');
  const rerankBreaker = reranker === null ? null : breakerFor('rerank');
  const providers: ProviderStatus[] = [];
  if (embedder !== null && embeddingsBreaker !== null) {
    providers.push({
      name: 'embeddings',
      kind: embedder.provider,
      model: embedder.model,
      state: () => embeddingsBreaker.state(),
    });
  }
  if (reranker !== null && rerankBreaker !== null) {
    providers.push({
      name: 'rerank',
      kind: reranker.provider,
      model: reranker.model,
      state: () => rerankBreaker.state(),
    });
  }
  const logProviders = () =>
    logger.info(
      {
        embeddings: embedder === null ? null : providerLine(embedder, config.embeddingsUrl),
        rerank: reranker === null ? null : providerLine(reranker, config.rerankUrl),
      },
      'providers',
    );
  const policy = createAddressPolicy({ allow: config.urlFetchAllow });
  const checks = submitChecks(policy);
  const usageService = new UsageService(usage, clock);
  const metrics = createMetrics(documents, adapters.webhooks, adapters.vectorSearch, clock, providers);

  const ingestion = new IngestionService({
    documents,
    queue,
    downloadQueue,
    blobs,
    clock,
    pipeline: checks,
    limits: {
      maxQueuedDocuments: config.maxQueuedDocuments,
      maxUploadBytes: config.maxUploadBytes,
      tokenizer: TOKENIZER_NAME,
    },
    onEnqueueError: (error) =>
      logger.warn({ err: error }, 'enqueue after commit failed; the reconciler will retry'),
    tracer,
  });

  const secrets =
    config.secretsKey === ''
      ? null
      : new SecretBox(
          parseSecretsKey(config.secretsKey),
          config.secretsKeyPrevious === '' ? null : parseSecretsKey(config.secretsKeyPrevious),
        );
  const sourceTypes = new Map<SourceTypeName, SourceType>([
    ['s3', s3SourceType({ policy })],
    [
      'web',
      webSourceType({
        policy,
        maxBytes: config.maxUploadBytes,
        connectTimeoutMs: config.urlFetchConnectTimeoutMs,
        totalTimeoutMs: config.urlFetchTimeoutMs,
        maxRedirects: config.urlFetchMaxRedirects,
      }),
    ],
  ]);
  const sources = new SourceService({
    store: adapters.sources,
    queue: adapters.sourceQueue,
    types: sourceTypes,
    secrets,
    screenUrl: submittedUrlRefusal(checks),
    clock,
  });

  const admin = new OrgAdmin(
    {
      orgs,
      documents,
      usage,
      idempotency: adapters.idempotency,
      blobs,
      webhooks: adapters.webhooks,
      evaluations: adapters.evaluations,
      sources: adapters.sources,
    },
    usageService,
    clock,
    config.defaultRateLimitRpm,
  );

  const documentService = new DocumentService(documents, blobs);
  const partitions = new PartitionService(documents, documentService, clock);
  const queryService = new QueryService(
    adapters.keyword,
    usageService,
    embedder === null
      ? null
      : {
          embedder,
          embeddings: new QueryEmbeddings(
            embeddingsBreaker === null ? embedder : guardEmbedder(embedder, embeddingsBreaker),
          ),
          vectors: adapters.vectorSearch,
          embeddingDeadlineMs: config.embeddingsTimeoutMs,
        },
    config.searchProximity ? documentAnalyzer(fallbackLanguage(config.searchLanguage)) : null,
    reranker === null || rerankBreaker === null
      ? null
      : { reranker: guardReranker(reranker, rerankBreaker), deadlineMs: config.rerankTimeoutMs },
    tracer,
  );
  const evaluations = new EvaluationService(
    adapters.evaluations,
    adapters.evaluationQueue,
    {
      defaultMode: queryService.defaultMode,
      semantic: embedder !== null,
      rerank: queryService.rerankByDefault,
    },
    clock,
  );

  const appDeps: AppDeps = {
    version: PACKAGE_VERSION,
    authenticator: new Authenticator(orgs, clock),
    rateLimiter,
    ingestion,
    idempotency: new IdempotencyService(adapters.idempotency, clock),
    documents: documentService,
    partitions,
    sources,
    vectorStatus: new VectorStatusService(embedder, adapters.vectorStageStore),
    query: queryService,
    evaluations,
    usage: usageService,
    webhooks: new WebhookService(adapters.webhooks, clock, {
      maxEndpointsPerOrg: config.webhookMaxEndpoints,
      maxPending: config.webhookMaxPending,
      logLimit: WEBHOOK_LOG_LIMIT,
      screenUrl: submittedUrlRefusal(checks),
    }),
    readiness: adapters.readiness,
    ...(adapters.requestScope ? { orgScope: adapters.requestScope } : {}),
    providers,
    metrics,
    ...(tracer === noopTracer ? {} : { tracer }),
    ...(config.adminToken === '' ? {} : { admin: { token: config.adminToken, orgs: admin } }),
    limits: {
      maxJsonBodyBytes: config.maxJsonBodyBytes,
      maxUploadBytes: config.maxUploadBytes,
      unauthenticatedRateLimitRpm: config.unauthenticatedRateLimitRpm,
    },
    http: {
      trustProxy: config.trustProxy,
      requestTimeoutMs: config.requestTimeoutMs,
      headersTimeoutMs: config.headersTimeoutMs,
    },
  };

  const startWorker = ({
    ingestRequests,
    threads,
  }: {
    ingestRequests?: RequestRate | undefined;
    threads?: PipelineThreads | undefined;
  } = {}) => {
    const lanes = startDocumentLanes({
      config,
      documents,
      queue,
      downloadQueue,
      blobs,
      clock,
      policy,
      checks,
      logger,
      tracer,
      onOutcome: (outcome) => metrics.documentOutcome(outcome),
      ingestRequests,
      threads,
    });
    const sync = new SourceSync({
      store: adapters.sources,
      types: sourceTypes,
      secrets,
      ingestion,
      documents: documentService,
      clock,
      renderRun: toRunEventJson,
      onEscaped: (runId, error) =>
        logger.error({ err: error, run_id: runId }, 'source run failed on its last try'),
      onFinished: (run) =>
        logger.info(
          {
            org_id: run.orgId,
            source_id: run.sourceId,
            run_id: run.id,
            status: run.status,
            added: run.added,
            updated: run.updated,
            deleted: run.deleted,
            unchanged: run.unchanged,
            failed: run.failed,
          },
          'source run finished',
        ),
    });
    const consumers: JobConsumer[] = [
      adapters.evaluationQueue.consume(
        new EvaluationRunner({
          store: adapters.evaluations,
          documents,
          orgs,
          query: queryService,
          rateLimiter,
          clock,
          onFailed: (id, orgId, error) =>
            logger.warn({ evaluation_id: id, org_id: orgId, code: error.code }, 'evaluation failed'),
        }).handle,
        // Evaluations query one at a time; one slot keeps them from crowding out a second org's.
        { concurrency: EVALUATION_CONCURRENCY, maxPerOrg: 1 },
      ),
      adapters.sourceQueue.consume(sync.handle, { concurrency: SOURCE_RUN_CONCURRENCY }),
      adapters.partitionPurgeQueue.consume(partitions.purgeJob, { concurrency: PURGE_CONCURRENCY }),
    ];
    const startDueSources = () =>
      sources
        .startDue()
        .catch((error: unknown) => logger.warn({ err: error }, 'scheduled source runs failed'));
    void startDueSources();
    const sourceTimer = setInterval(startDueSources, SOURCE_SCHEDULE_POLL_MS);
    sourceTimer.unref();
    // The second stage: ready documents' chunks embedded in the background (EMBEDDINGS set).
    const vectorStage =
      embedder === null
        ? null
        : new VectorStage(embedder, adapters.vectorStageStore, clock, {
            tracer,
            onEvent: ({ documentId, orgId, outcome, error }) => {
              if (outcome === 'ready')
                logger.debug({ document_id: documentId, org_id: orgId }, 'vectors ready');
              else
                logger.warn(
                  { document_id: documentId, org_id: orgId, code: error?.code, err: error },
                  `vectors ${outcome}`,
                );
            },
          });
    vectorStage?.start();
    return {
      ready: lanes.ready,
      async stop() {
        clearInterval(sourceTimer);
        await vectorStage?.stop();
        await Promise.all([lanes.stop(), ...consumers.map((c) => c.stop())]);
      },
    };
  };

  const startDispatcher = webhookDispatcherStarter({
    config,
    webhooks: adapters.webhooks,
    policy,
    clock,
    embedder,
    metrics,
    logger,
  });

  return {
    ...adapters,
    async close() {
      await embedder?.close();
      await reranker?.close();
      await adapters.close();
      // Last: the spans of everything closed above are sent before the process exits.
      await tracing.shutdown();
    },
    config,
    logger,
    clock,
    embedder,
    reranker,
    providers,
    logProviders,
    admin,
    appDeps,
    startWorker,
    startDispatcher,
    tracer,
  };
}

/** What the start-up log says of a provider: its kind, model and URL without credentials or query. */
function providerLine(provider: { provider: string; model: string }, url: string | null) {
  return { kind: provider.provider, model: provider.model, ...(url === null ? {} : { url: redactUrl(url) }) };
}
