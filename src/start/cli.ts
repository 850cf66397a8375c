// The `docindex` command: server and worker processes, migrations, and administration of
// organisations and keys, and the client commands (cli-client.ts). Results go to stdout; logs go
// to stderr.
import type { IncomingMessage } from 'node:http';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config/index.js';
import { ApiError } from '../domain/errors.js';
import { RequestRate } from '../pipeline/yield-to-api.js';
import { CLIENT_USAGE, isClientCommand, runClientCommand } from './cli-client.js';
import { createLogger } from './logger.js';
import type { Runtime } from './runtime.js';

const USAGE = `docindex — document ingestion, indexing and retrieval

Server:
  docindex serve [--no-worker]     start the API (and, unless --no-worker, the workers)
  docindex worker                  start workers only
  docindex migrate                 create or upgrade the database schema

Administration (uses the same DATA_DIR / DATABASE_URL as the server):
  docindex orgs create --name NAME [--rate-limit-rpm N] [--json]
  docindex orgs set-rate-limit ORG_ID N
  docindex keys create --org ORG_ID [--json]
  docindex keys revoke KEY_ID

${CLIENT_USAGE}

Configuration is read from the environment; see README.md.`;

class UsageError extends Error {}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return command ? 0 : 1;
  }
  // Client commands talk to a server over HTTP: they need neither its configuration nor its data.
  if (isClientCommand(command)) return runClientCommand(command, rest, process.env);
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      return 2;
    }
    throw error;
  }
  const logger = createLogger(config.logLevel);
  // Loaded here, not at the top: client commands (which return above) start without the server code.
  const { createRuntime } = await import('./runtime.js');
  try {
    switch (command) {
      case 'serve':
        return await serve(await createRuntime(config, logger), rest);
      case 'worker':
        return await worker(await createRuntime(config, logger));
      case 'migrate': {
        const runtime = await createRuntime(config, logger, undefined, { oneShot: true });
        await runtime.close();
        process.stdout.write('migrations applied\n');
        return 0;
      }
      case 'orgs':
      case 'keys':
        return await admin(command, rest, config, logger);
      default:
        throw new UsageError(`unknown command ${JSON.stringify(command)}`);
    }
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`docindex: ${error.message}\n\n${USAGE}\n`);
      return 2;
    }
    // Told apart by code, never by message text: an unknown org or key is the user's to fix.
    if (error instanceof ApiError && error.code === 'not_found') {
      process.stderr.write(`docindex: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}

async function serve(runtime: Runtime, args: string[]): Promise<number> {
  const { values } = parse(args, { 'no-worker': { type: 'boolean' } });
  const { config, logger } = runtime;
  const firstKey = await runtime.admin.bootstrapFirstOrg();
  const { buildApp } = await import('../app.js');
  const app = await buildApp(runtime.appDeps, logger);
  // Workers in this process give way to bursts of ingests (see pipeline/yield-to-api.ts); reads
  // and queries, however many, never hold documents back. Without such workers nothing counts.
  const yielding = !values['no-worker'] && config.workerYieldIngestRps > 0;
  const ingestRequests = yielding ? new RequestRate() : undefined;
  if (ingestRequests) {
    app.server.on('request', (req: IncomingMessage) => {
      if (req.method === 'POST' && req.url?.startsWith('/v1/ingest')) ingestRequests.record(Date.now());
    });
  }
  const worker = values['no-worker'] ? null : runtime.startWorker({ ingestRequests });
  const address = await app.listen({ host: config.host, port: config.port });
  logger.info({ address, worker: worker !== null }, 'docindex listening');
  if (firstKey) {
    process.stdout.write(
      [
        '',
        'docindex created a first organisation. Its API key is shown once — keep it:',
        '',
        `  org_id:  ${firstKey.org_id}`,
        `  api_key: ${firstKey.api_key}`,
        '',
        `Try: curl -H "Authorization: Bearer ${firstKey.api_key}" ${address}/v1/usage`,
        '',
      ].join('\n'),
    );
  }
  process.stdout.write(`docindex listening on ${address} (docs: ${address}/docs)\n`);
  await waitForSignal();
  logger.info('shutting down');
  await app.close();
  await worker?.stop();
  await runtime.close();
  return 0;
}

async function worker(runtime: Runtime): Promise<number> {
  const handle = runtime.startWorker();
  runtime.logger.info('docindex worker started');
  await waitForSignal();
  await handle.stop();
  await runtime.close();
  return 0;
}

async function admin(
  group: 'orgs' | 'keys',
  args: string[],
  config: ReturnType<typeof loadConfig>,
  logger: ReturnType<typeof createLogger>,
): Promise<number> {
  const [action, ...rest] = args;
  const { createRuntime } = await import('./runtime.js');
  const runtime = await createRuntime(config, logger, undefined, { oneShot: true });
  try {
    if (group === 'orgs' && action === 'create') {
      const { values } = parse(rest, {
        name: { type: 'string' },
        'rate-limit-rpm': { type: 'string' },
        json: { type: 'boolean' },
      });
      if (!values.name) throw new UsageError('orgs create needs --name NAME');
      const rpm = values['rate-limit-rpm'] === undefined ? undefined : positiveInt(values['rate-limit-rpm']);
      printIssued(await runtime.admin.createOrg(values.name, rpm), values.json === true);
      return 0;
    }
    if (group === 'orgs' && action === 'set-rate-limit') {
      const { positionals } = parse(rest, {}, 2);
      const [orgId, rpm] = positionals;
      if (!(await runtime.admin.setRateLimit(orgId!, positiveInt(rpm!)))) {
        throw new ApiError('not_found', `no organisation with id ${orgId}`);
      }
      process.stdout.write(`rate limit of ${orgId} set to ${rpm} requests per minute\n`);
      return 0;
    }
    if (group === 'keys' && action === 'create') {
      const { values } = parse(rest, { org: { type: 'string' }, json: { type: 'boolean' } });
      if (!values.org) throw new UsageError('keys create needs --org ORG_ID');
      printIssued(await runtime.admin.issueKey(values.org), values.json === true);
      return 0;
    }
    if (group === 'keys' && action === 'revoke') {
      const { positionals } = parse(rest, {}, 1);
      if (!(await runtime.admin.revokeKey(positionals[0]!))) {
        throw new ApiError('not_found', `no key with id ${positionals[0]} (or it is already revoked)`);
      }
      process.stdout.write(`key ${positionals[0]} revoked\n`);
      return 0;
    }
    throw new UsageError(`unknown command ${group} ${action ?? ''}`.trim());
  } finally {
    await runtime.close();
  }
}

function printIssued(issued: { org_id: string; key_id: string; api_key: string }, json: boolean): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(issued)}\n`);
    return;
  }
  process.stdout.write(
    `org_id:  ${issued.org_id}\nkey_id:  ${issued.key_id}\napi_key: ${issued.api_key}\n(the key is shown once; store it now)\n`,
  );
}

type OptionSpec = Record<string, { type: 'string' | 'boolean' }>;

function parse<T extends OptionSpec>(args: string[], options: T, positionalCount = 0) {
  let parsed: ReturnType<
    typeof parseArgs<{ args: string[]; options: T; allowPositionals: true; strict: true }>
  >;
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  if (parsed.positionals.length !== positionalCount) {
    throw new UsageError(`expected ${positionalCount} argument(s), got ${parsed.positionals.length}`);
  }
  return parsed;
}

function positiveInt(raw: string): number {
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > 10_000_000) {
    throw new UsageError(
      `expected a whole number of requests per minute (1..10000000), got ${JSON.stringify(raw)}`,
    );
  }
  return Number(raw);
}

function waitForSignal(): Promise<void> {
  return new Promise((resolve) => {
    const done = () => resolve();
    process.once('SIGINT', done);
    process.once('SIGTERM', done);
  });
}
