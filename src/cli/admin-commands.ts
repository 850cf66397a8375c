// The `docindex` commands that run the server or administer its data directly (serve, worker,
// migrate, orgs, keys). What they act on comes from the composition root (start/cli.ts) as a
// ServerSide: this layer parses and prints, and knows no adapter, database or Fastify.

import { ApiError } from '../domain/errors.js';
import type { OrgAdmin } from '../domain/orgs.js';
import type { ReindexProgress, ReindexReport } from '../domain/reindex.js';
import { parseArguments, UsageError } from './args.js';
import type { TerminalIO } from './render.js';

export const ADMIN_USAGE = `Server:
  docindex serve [--no-worker]     start the API (and, unless --no-worker, the workers)
  docindex worker                  start workers only
  docindex migrate                 create or upgrade the database schema
  docindex reindex                 rewrite the keyword index for SEARCH_LANGUAGE (online; resumable)

Administration (uses the same DATA_DIR / DATABASE_URL as the server):
  docindex orgs create --name NAME [--rate-limit-rpm N] [--json]
  docindex orgs set-rate-limit ORG_ID N
  docindex keys create --org ORG_ID [--json]
  docindex keys revoke KEY_ID`;

/** An organisation administrator over the server's stores, and how to let them go. */
export interface AdminSession {
  admin: Pick<OrgAdmin, 'createOrg' | 'setRateLimit' | 'issueKey' | 'revokeKey'>;
  close(): Promise<void>;
}

/** The server, configured: what the admin commands start or open. */
export interface ServerSide {
  /** Runs the API (and workers, unless told not to) until SIGINT or SIGTERM; the exit code. */
  serve(options: { worker: boolean }): Promise<number>;
  /** Runs workers until SIGINT or SIGTERM; the exit code. */
  worker(): Promise<number>;
  /** Creates or upgrades the schema. */
  migrate(): Promise<void>;
  openAdmin(): Promise<AdminSession>;
  /** Rewrites the keyword index with the configured analysis until done or SIGINT/SIGTERM. */
  reindex(onProgress: (progress: ReindexProgress) => void): Promise<ReindexReport>;
}

export async function runAdminCommand(
  command: string,
  args: string[],
  server: ServerSide,
  io: TerminalIO,
): Promise<number> {
  switch (command) {
    case 'serve': {
      const { values } = parseArguments(args, { 'no-worker': { type: 'boolean' } }, 0);
      return server.serve({ worker: !values['no-worker'] });
    }
    case 'worker':
      return server.worker();
    case 'migrate':
      await server.migrate();
      io.stdout.write('migrations applied\n');
      return 0;
    case 'reindex':
      parseArguments(args, {}, 0);
      return reindex(server, io);
    case 'orgs':
    case 'keys':
      return administer(command, args, server, io);
    default:
      throw new UsageError(`unknown command ${JSON.stringify(command)}`);
  }
}

async function administer(
  group: 'orgs' | 'keys',
  args: string[],
  server: ServerSide,
  io: TerminalIO,
): Promise<number> {
  const [action, ...rest] = args;
  const { admin, close } = await server.openAdmin();
  try {
    if (group === 'orgs' && action === 'create') {
      const { values } = parseArguments(
        rest,
        { name: { type: 'string' }, 'rate-limit-rpm': { type: 'string' }, json: { type: 'boolean' } },
        0,
      );
      if (!values.name) throw new UsageError('orgs create needs --name NAME');
      const rpm =
        values['rate-limit-rpm'] === undefined ? undefined : requestsPerMinute(values['rate-limit-rpm']);
      printIssued(io, await admin.createOrg(values.name, rpm), values.json === true);
      return 0;
    }
    if (group === 'orgs' && action === 'set-rate-limit') {
      const [orgId, rpm] = parseArguments(rest, {}, 2).positionals;
      if (!(await admin.setRateLimit(orgId!, requestsPerMinute(rpm!)))) {
        throw new ApiError('not_found', `no organisation with id ${orgId}`);
      }
      io.stdout.write(`rate limit of ${orgId} set to ${rpm} requests per minute\n`);
      return 0;
    }
    if (group === 'keys' && action === 'create') {
      const { values } = parseArguments(rest, { org: { type: 'string' }, json: { type: 'boolean' } }, 0);
      if (!values.org) throw new UsageError('keys create needs --org ORG_ID');
      printIssued(io, await admin.issueKey(values.org), values.json === true);
      return 0;
    }
    if (group === 'keys' && action === 'revoke') {
      const [keyId] = parseArguments(rest, {}, 1).positionals;
      if (!(await admin.revokeKey(keyId!))) {
        throw new ApiError('not_found', `no key with id ${keyId} (or it is already revoked)`);
      }
      io.stdout.write(`key ${keyId} revoked\n`);
      return 0;
    }
    throw new UsageError(`unknown command ${group} ${action ?? ''}`.trim());
  } finally {
    await close();
  }
}

async function reindex(server: ServerSide, io: TerminalIO): Promise<number> {
  let reported = 0;
  const report = await server.reindex(({ rewritten }) => {
    if (rewritten - reported >= 10_000) {
      reported = rewritten;
      io.stderr.write(`${rewritten} chunks rewritten\n`);
    }
  });
  const { configured, written } = report.before;
  if (!report.before.reindexNeeded && report.rewritten === 0) {
    io.stdout.write(`the keyword index already uses SEARCH_LANGUAGE=${configured}; nothing to rewrite\n`);
    return 0;
  }
  if (!report.done) {
    io.stdout.write(
      `stopped after ${report.rewritten} chunks; run \`docindex reindex\` again to carry on from there\n`,
    );
    return 1;
  }
  io.stdout.write(
    `keyword index rewritten from SEARCH_LANGUAGE=${written} to ${configured}: ${report.rewritten} chunks\n`,
  );
  return 0;
}

function printIssued(
  io: TerminalIO,
  issued: { org_id: string; key_id: string; api_key: string },
  json: boolean,
): void {
  if (json) {
    io.stdout.write(`${JSON.stringify(issued)}\n`);
    return;
  }
  io.stdout.write(
    `org_id:  ${issued.org_id}\nkey_id:  ${issued.key_id}\napi_key: ${issued.api_key}\n(the key is shown once; store it now)\n`,
  );
}

function requestsPerMinute(raw: string): number {
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > 10_000_000) {
    throw new UsageError(
      `expected a whole number of requests per minute (1..10000000), got ${JSON.stringify(raw)}`,
    );
  }
  return Number(raw);
}
