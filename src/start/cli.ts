// The composition root of the `docindex` command (bin/docindex.js runs main): the command line
// itself is src/cli/; this file gives it the process's environment and streams, and, when an
// admin command runs, the configuration, the runtime and the HTTP server. Results go to stdout;
// logs go to stderr.
import type { IncomingMessage } from 'node:http';
import type { OrgAdministration, ServerSide } from '../cli/admin-commands.js';
import { SetupError } from '../cli/exit.js';
import { runCommandLine } from '../cli/main.js';
import { type Config, loadConfig } from '../config/index.js';
import type { CreatedOrg, OrgAdmin } from '../domain/orgs.js';
import type { ProviderStatus } from '../domain/provider-health.js';
import { reindexSearch } from '../domain/reindex.js';
import { toKeyJson, toOrgJson } from '../http/routes/admin/json.js';
import type { PipelineThreads } from '../pipeline/extract/index.js';
import { RequestRate } from '../pipeline/yield-to-api.js';
import { createLogger } from './logger.js';
import { PACKAGE_VERSION } from './package-version.js';
import type { Runtime } from './runtime.js';

/** Chunks per reindex transaction: a few tens of milliseconds of database time each. */
const REINDEX_BATCH_CHUNKS = 500;

export function main(argv: string[]): Promise<number> {
  return runCommandLine(argv, {
    version: PACKAGE_VERSION,
    env: process.env,
    io: { stdout: process.stdout, stderr: process.stderr },
    openServer: async () => openServer(loadConfig()),
    modelSettings: () => {
      const config = loadConfig();
      return { modelsDir: config.modelsDir, hubEndpoint: config.hfEndpoint, hubToken: config.hfToken };
    },
  });
}

function openServer(config: Config): ServerSide {
  const logger = createLogger(config.logLevel);
  // Loaded here, not at the top: client commands start without the server code.
  const runtime = async (oneShot = false, role?: 'serve' | 'worker') => {
    const { createRuntime } = await import('./runtime.js');
    return createRuntime(
      config,
      logger,
      undefined,
      oneShot ? { oneShot: true } : { ...(role ? { role } : {}) },
    );
  };
  return {
    reindexVectors: async () => {
      const oneShot = await runtime(true);
      try {
        if (oneShot.embedder === null) return null;
        const { VectorStage } = await import('../domain/vector-stage.js');
        // Learns the vectors' length from the provider when it is not configured.
        const profile = await new VectorStage(
          oneShot.embedder,
          oneShot.vectorStageStore,
          oneShot.clock,
        ).activeProfile();
        if (profile === null) throw new Error('the embedding provider answered no vector');
        const documents = await oneShot.vectorStageStore.requeueProfile(profile);
        return { documents, provider: oneShot.embedder.provider, model: oneShot.embedder.model };
      } finally {
        await oneShot.close();
      }
    },
    serve: async ({ worker }) => {
      const threads = worker ? await warmThreads(config) : undefined;
      return serve(await closingOnFailure(threads, runtime(false, 'serve')), threads);
    },
    worker: async () => {
      const threads = await warmThreads(config);
      return runWorker(await closingOnFailure(threads, runtime(false, 'worker')), threads);
    },
    migrate: async () => {
      await (await runtime(true)).close();
    },
    openAdmin: async () => {
      const oneShot = await runtime(true);
      return { admin: storesAdministration(oneShot.admin), close: () => oneShot.close() };
    },
    reindex: async (onProgress) => {
      const oneShot = await runtime(true);
      const stop = new AbortController();
      const abort = () => stop.abort();
      process.once('SIGINT', abort);
      process.once('SIGTERM', abort);
      try {
        return await reindexSearch(oneShot.keyword, {
          batchSize: REINDEX_BATCH_CHUNKS,
          onProgress,
          signal: stop.signal,
        });
      } finally {
        process.off('SIGINT', abort);
        process.off('SIGTERM', abort);
        await oneShot.close();
      }
    },
  };
}

/**
 * A worker's pipeline threads, started first: a thread's loading of its parsers and tokenizer
 * then runs beside the building of the rest of the process instead of after it.
 */
async function warmThreads(config: Config): Promise<PipelineThreads> {
  const { pipelineThreads } = await import('./pipeline.js');
  const threads = pipelineThreads(config);
  void threads.warm();
  return threads;
}

/** The runtime, once built; the threads started before it are stopped when it cannot be. */
async function closingOnFailure(
  threads: PipelineThreads | undefined,
  building: Promise<Runtime>,
): Promise<Runtime> {
  try {
    return await building;
  } catch (error) {
    await threads?.close();
    throw error;
  }
}

/** The orgs and keys commands on the server's stores, listing as the admin API does. */
function storesAdministration(admin: OrgAdmin): OrgAdministration {
  return {
    createOrg: (name, rateLimitRpm) => admin.createOrg(name, rateLimitRpm),
    issueKey: (orgId, options) => admin.issueKey(orgId, options),
    setRateLimit: (orgId, rpm) => admin.setRateLimit(orgId, rpm),
    revokeKey: (keyId) => admin.revokeKey(keyId),
    async *everyOrg() {
      let cursor: string | null = null;
      do {
        const page = await admin.listOrgs({ limit: 100, cursor });
        yield* page.orgs.map(toOrgJson);
        cursor = page.nextCursor;
      } while (cursor !== null);
    },
    keysOf: async (orgId) => (await admin.listKeys(orgId)).map(toKeyJson),
  };
}

/** `threads`: the worker's pipeline threads (warmThreads), when the process runs a worker. */
async function serve(runtime: Runtime, threads: PipelineThreads | undefined): Promise<number> {
  const withWorker = threads !== undefined;
  const { config, logger } = runtime;
  runtime.logProviders();
  // Workers in this process give way to bursts of ingests (see pipeline/yield-to-api.ts); reads
  // and queries, however many, never hold documents back. Without such workers nothing counts.
  const yielding = withWorker && config.workerYieldIngestRps > 0;
  const ingestRequests = yielding ? new RequestRate() : undefined;
  // Its pipeline thread has been loading since the process started (warmThreads).
  const worker = withWorker ? runtime.startWorker({ ingestRequests, threads }) : null;
  const { buildApp } = await import('../app.js');
  const app = await buildApp(runtime.appDeps, logger);
  if (ingestRequests) {
    app.server.on('request', (req: IncomingMessage) => {
      if (req.method === 'POST' && req.url?.startsWith('/v1/ingest')) ingestRequests.record(Date.now());
    });
  }
  // Listening only once a thread is ready: the first document is then as fast as any other.
  await worker?.ready;
  let address: string;
  try {
    address = await app.listen({ host: config.host, port: config.port });
  } catch (error) {
    await worker?.stop();
    await app.close();
    await runtime.close();
    throw listenFailure(error, config) ?? error;
  }
  const dispatcher = runtime.startDispatcher();
  logger.info({ address, worker: worker !== null }, 'docindex listening');
  // Only now that the server listens: a first key made by a start that then failed would be
  // shown to no one, and the next start would find an organisation and make none.
  const firstKey = await runtime.admin.bootstrapFirstOrg();
  process.stdout.write(startBanner(address, firstKey, runtime));
  await waitForSignal();
  logger.info('shutting down');
  await app.close();
  await worker?.stop();
  await dispatcher.stop();
  await runtime.close();
  return 0;
}

/** A listen error the user can fix by configuration, as one line; null for anything else. */
function listenFailure(error: unknown, config: Config): SetupError | null {
  const code = (error as NodeJS.ErrnoException).code;
  const where = `${config.host}:${config.port}`;
  switch (code) {
    case 'EADDRINUSE':
      return new SetupError(
        `cannot listen on ${where}: port ${config.port} is already in use; stop what listens there or set PORT to a free port`,
      );
    case 'EACCES':
      return new SetupError(
        `cannot listen on ${where}: port ${config.port} needs privileges this process lacks; set PORT to 1024 or above`,
      );
    case 'EADDRNOTAVAIL':
      return new SetupError(
        `cannot listen on ${where}: ${config.host} is not an address of this machine; set HOST (e.g. 127.0.0.1 or 0.0.0.0)`,
      );
    default:
      return null;
  }
}

/** What `docindex serve` prints once it listens: the first key if it made one, where things are. */
function startBanner(address: string, firstKey: CreatedOrg | null, runtime: Runtime): string {
  const lines: string[] = [];
  if (firstKey) {
    lines.push(
      '',
      'docindex created a first organisation. Its API key is shown once — keep it:',
      '',
      `  org_id:  ${firstKey.org_id}`,
      `  api_key: ${firstKey.api_key}`,
      '',
      `Try: curl -H "Authorization: Bearer ${firstKey.api_key}" ${address}/v1/usage`,
      '',
    );
  }
  lines.push(
    `docindex listening on ${address}`,
    `  console:  ${address}/console`,
    `  API docs: ${address}/docs (OpenAPI: ${address}/openapi.json)`,
    `  search:   ${describeProviders(runtime.providers)}`,
  );
  // A key is shown once, when it is made; a later start says how to get another.
  if (!firstKey) {
    lines.push(
      '  API keys: `docindex orgs list` names the organisations; `docindex keys create --org ORG_ID` makes a new key',
    );
  }
  return `${lines.join('\n')}\n`;
}

/** "keyword + embeddings openai nomic-embed-text, rerank none": never a URL or a key. */
function describeProviders(providers: readonly ProviderStatus[]): string {
  const named = (name: string) => {
    const provider = providers.find((p) => p.name === name);
    return provider ? `${provider.kind} ${provider.model}` : 'none';
  };
  return `keyword, embeddings ${named('embeddings')}, rerank ${named('rerank')}`;
}

async function runWorker(runtime: Runtime, threads: PipelineThreads): Promise<number> {
  runtime.logProviders();
  const handle = runtime.startWorker({ threads });
  const dispatcher = runtime.startDispatcher();
  runtime.logger.info('docindex worker started');
  await waitForSignal();
  await handle.stop();
  await dispatcher.stop();
  await runtime.close();
  return 0;
}

function waitForSignal(): Promise<void> {
  return new Promise((resolve) => {
    const done = () => resolve();
    process.once('SIGINT', done);
    process.once('SIGTERM', done);
  });
}
