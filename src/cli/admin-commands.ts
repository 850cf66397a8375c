// The `docindex` commands that run the server or administer its data (serve, worker, migrate,
// reindex, orgs, keys). The orgs and keys commands act either directly on the server's stores (what the
// composition root, start/cli.ts, opens as a ServerSide) or, given an admin token, over the admin
// HTTP API of a running server (client/AdminClient): the same commands, the same output. This
// layer parses and prints, and knows no adapter, database or Fastify.

import { AdminClient } from '../client/admin-client.js';
import { DocindexError } from '../client/errors.js';
import type { AdminKey, AdminOrg } from '../client/types.js';
import { parseDateTime, parseFullDate } from '../domain/date-time.js';
import { ApiError } from '../domain/errors.js';
import { isPartitionName } from '../domain/partitions.js';
import type { ReindexProgress, ReindexReport } from '../domain/reindex.js';
import { isScope, SCOPES, type Scope } from '../domain/scopes.js';
import { didYouMean, parseArguments, principalFlags, UsageError } from './args.js';
import { SetupError } from './exit.js';
import { renderKeyTable, renderOrgTable, type TerminalIO } from './render.js';

export const ADMIN_USAGE = `Server:
  docindex serve [--no-worker]     start the API (and, unless --no-worker, the workers)
  docindex worker                  start workers only
  docindex migrate                 create or upgrade the database schema
  docindex reindex                 rewrite the keyword index for SEARCH_LANGUAGE (online; resumable)
  docindex reindex --vectors       re-embed every document with the EMBEDDINGS model (in the background, by the workers)

Administration (on the same DATA_DIR / DATABASE_URL as the server, or, with an admin token,
over the admin API of a running server: --url URL --admin-token TOKEN, or DOCINDEX_URL and
DOCINDEX_ADMIN_TOKEN):
  docindex orgs create --name NAME [--rate-limit-rpm N] [--json]
  docindex orgs list [--json]      every organisation: rate limit, active keys, queries, created
  docindex orgs set-rate-limit ORG_ID N
  docindex keys create --org ORG_ID [--scopes ${SCOPES.join(',')}] [--expires-at ISO-8601]
                       [--partition NAME]... [--principal P]... [--json]
                                   --partition (repeatable) limits the key to those partitions;
                                   --principal (repeatable) binds it to those principals: it sees
                                   only documents without an access list or naming one of them
  docindex keys list --org ORG_ID [--json]
                                   the organisation's keys: scopes, expiry, state (never the key itself)
  docindex keys revoke KEY_ID`;

export const ADMIN_COMMANDS = ['serve', 'worker', 'migrate', 'reindex', 'orgs', 'keys'] as const;

/** The actions of `docindex orgs` and `docindex keys`. */
const ADMIN_ACTIONS = [
  'orgs create',
  'orgs list',
  'orgs set-rate-limit',
  'keys create',
  'keys list',
  'keys revoke',
];

/** A key as the orgs and keys commands print it. */
export interface IssuedKeyLine {
  org_id: string;
  key_id: string;
  api_key: string;
  scopes?: readonly string[];
  expires_at?: Date | string | null;
  /** The partitions the key is limited to; null: every partition. */
  partitions?: readonly string[] | null;
  /** The principals the key is bound to; null: unbound. */
  principals?: readonly string[] | null;
}

/** What the orgs and keys commands need, over the server's stores or over the admin API. */
export interface OrgAdministration {
  createOrg(name: string, rateLimitRpm?: number): Promise<IssuedKeyLine>;
  issueKey(
    orgId: string,
    options?: { scopes?: Scope[]; expiresAt?: Date | null; partitions?: string[]; principals?: string[] },
  ): Promise<IssuedKeyLine>;
  /** false when the org does not exist. */
  setRateLimit(orgId: string, rpm: number): Promise<boolean>;
  /** false when the key does not exist (or, on the stores, was already revoked). */
  revokeKey(keyId: string): Promise<boolean>;
  /** Every organisation, newest first, as the admin API shows it. */
  everyOrg(): AsyncIterable<AdminOrg>;
  /** The organisation's keys, oldest first, revoked ones included; an unknown org is not_found. */
  keysOf(orgId: string): Promise<AdminKey[]>;
}

/** An organisation administrator over the server's stores, and how to let them go. */
export interface AdminSession {
  admin: OrgAdministration;
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
  /** Makes every document's vectors due again for the active profile; null without a provider. */
  reindexVectors(): Promise<{ documents: number; provider: string; model: string } | null>;
}

export async function runAdminCommand(
  command: string,
  args: string[],
  openServer: () => Promise<ServerSide>,
  env: Record<string, string | undefined>,
  io: TerminalIO,
): Promise<number> {
  switch (command) {
    case 'serve': {
      const { values } = parseArguments(args, { 'no-worker': { type: 'boolean' } }, 0);
      return (await openServer()).serve({ worker: !values['no-worker'] });
    }
    case 'worker':
      return (await openServer()).worker();
    case 'migrate':
      await (await openServer()).migrate();
      io.stdout.write('migrations applied\n');
      return 0;
    case 'reindex': {
      const { values } = parseArguments(args, { vectors: { type: 'boolean' } }, 0);
      if (!values.vectors) return reindex(await openServer(), io);
      const requeued = await (await openServer()).reindexVectors();
      if (requeued === null)
        throw new SetupError('EMBEDDINGS=none: there is no embedding model to re-embed with');
      io.stdout.write(
        `${requeued.documents} documents will be re-embedded with ${requeued.provider} model ${requeued.model} in the background by the workers; their vectors show pending until then, and queries keep using the vectors already there\n`,
      );
      return 0;
    }
    case 'orgs':
    case 'keys': {
      const { remote, rest } = takeRemoteFlags(args, env);
      const session = remote ? remoteSession(remote) : await (await openServer()).openAdmin();
      try {
        return await administer(command, rest, session.admin, io);
      } catch (error) {
        if (remote && error instanceof DocindexError && error.code === 'unauthorized') {
          throw new SetupError(
            `${remote.url} refused the admin token: check --admin-token or DOCINDEX_ADMIN_TOKEN (the server's ADMIN_TOKEN)`,
          );
        }
        throw error;
      } finally {
        await session.close();
      }
    }
    default:
      throw new UsageError(`unknown command ${JSON.stringify(command)}`);
  }
}

interface Remote {
  url: string;
  adminToken: string;
}

/**
 * `--url` and `--admin-token` (anywhere after the command), else DOCINDEX_URL and
 * DOCINDEX_ADMIN_TOKEN. Only an admin token selects the admin API: DOCINDEX_URL alone (set for
 * the client commands) leaves the commands on the server's stores.
 */
function takeRemoteFlags(
  args: string[],
  env: Record<string, string | undefined>,
): { remote: Remote | null; rest: string[] } {
  const rest: string[] = [];
  const flags: Record<string, string> = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const match = /^--(url|admin-token)(?:=(.*))?$/.exec(arg);
    if (!match) {
      rest.push(arg);
      continue;
    }
    const value = match[2] ?? args[++i];
    if (value === undefined || value === '') throw new UsageError(`--${match[1]} needs a value`);
    flags[match[1]!] = value;
  }
  const adminToken = flags['admin-token'] ?? env.DOCINDEX_ADMIN_TOKEN ?? '';
  const url = flags.url ?? env.DOCINDEX_URL ?? '';
  if (adminToken === '') {
    if (flags.url !== undefined) {
      throw new SetupError('--url needs an admin token too: --admin-token TOKEN or DOCINDEX_ADMIN_TOKEN');
    }
    return { remote: null, rest };
  }
  if (url === '') {
    throw new SetupError("an admin token needs the server's address: --url URL or DOCINDEX_URL");
  }
  try {
    new URL(url);
  } catch {
    throw new SetupError(`not a URL: ${JSON.stringify(url)}`);
  }
  return { remote: { url, adminToken }, rest };
}

/** The orgs and keys commands over the admin API. */
function remoteSession(remote: Remote): AdminSession {
  const client = new AdminClient({ baseUrl: remote.url, adminToken: remote.adminToken });
  const missing = (error: unknown) => error instanceof DocindexError && error.status === 404;
  const admin: OrgAdministration = {
    createOrg: async (name, rateLimitRpm) => {
      const org = await client.createOrg(name, rateLimitRpm === undefined ? {} : { rateLimitRpm });
      return { org_id: org.org_id, key_id: org.key_id, api_key: org.api_key };
    },
    issueKey: async (orgId, options = {}) => {
      const key = await client.createKey(orgId, {
        ...(options.scopes === undefined ? {} : { scopes: options.scopes }),
        ...(options.expiresAt ? { expiresAt: options.expiresAt } : {}),
        ...(options.partitions === undefined ? {} : { partitions: options.partitions }),
        ...(options.principals === undefined ? {} : { principals: options.principals }),
      });
      return { org_id: orgId, ...key };
    },
    setRateLimit: async (orgId, rpm) =>
      client.updateOrg(orgId, { rateLimitRpm: rpm }).then(
        () => true,
        (error: unknown) => (missing(error) ? false : Promise.reject(error)),
      ),
    revokeKey: async (keyId) =>
      client.revokeKey(keyId).then(
        () => true,
        (error: unknown) => (missing(error) ? false : Promise.reject(error)),
      ),
    everyOrg: () => client.iterateOrgs(),
    keysOf: (orgId) => client.listKeys(orgId),
  };
  return { admin, close: async () => {} };
}

async function administer(
  group: 'orgs' | 'keys',
  args: string[],
  admin: OrgAdministration,
  io: TerminalIO,
): Promise<number> {
  const [action, ...rest] = args;
  if (group === 'orgs' && action === 'create') {
    const { values } = parseArguments(
      rest,
      { name: { type: 'string' }, 'rate-limit-rpm': { type: 'string' }, json: { type: 'boolean' } },
      0,
    );
    if (!values.name) throw new UsageError('orgs create needs --name NAME');
    const rpm =
      values['rate-limit-rpm'] === undefined ? undefined : requestsPerMinute(values['rate-limit-rpm']);
    const issued = await admin.createOrg(values.name, rpm);
    // One line of exactly these three fields, which scripts read (docs/CLIENTS.md, `orgs create`).
    printIssued(io, { org_id: issued.org_id, key_id: issued.key_id, api_key: issued.api_key }, values.json);
    return 0;
  }
  if (group === 'orgs' && action === 'list') {
    const { values } = parseArguments(rest, { json: { type: 'boolean' } }, 0);
    const orgs: AdminOrg[] = [];
    for await (const org of admin.everyOrg()) orgs.push(org);
    io.stdout.write(values.json ? `${JSON.stringify(orgs, null, 2)}\n` : renderOrgTable(orgs));
    if (orgs.length === 0 && !values.json) {
      // An empty list is most often the wrong DATA_DIR or DATABASE_URL: say where to look.
      io.stderr.write(
        'no organisations here: is this the server’s DATA_DIR or DATABASE_URL? `docindex orgs create --name NAME` makes one\n',
      );
    }
    return 0;
  }
  if (group === 'keys' && action === 'list') {
    const { values } = parseArguments(rest, { org: { type: 'string' }, json: { type: 'boolean' } }, 0);
    if (!values.org) throw new UsageError('keys list needs --org ORG_ID');
    const keys = await admin.keysOf(values.org);
    io.stdout.write(values.json ? `${JSON.stringify(keys, null, 2)}\n` : renderKeyTable(keys, new Date()));
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
    const { values } = parseArguments(
      rest,
      {
        org: { type: 'string' },
        scopes: { type: 'string' },
        'expires-at': { type: 'string' },
        partition: { type: 'string', multiple: true },
        principal: { type: 'string', multiple: true },
        json: { type: 'boolean' },
      },
      0,
    );
    if (!values.org) throw new UsageError('keys create needs --org ORG_ID');
    const partitions = values.partition === undefined ? undefined : parsePartitions(values.partition);
    const principals =
      values.principal === undefined ? undefined : principalFlags(values.principal, '--principal');
    const scopes = values.scopes === undefined ? undefined : parseScopes(values.scopes);
    const expiresAt = values['expires-at'] === undefined ? undefined : parseExpiry(values['expires-at']);
    const issued = await admin.issueKey(values.org, {
      ...(scopes === undefined ? {} : { scopes }),
      ...(expiresAt === undefined ? {} : { expiresAt }),
      ...(partitions === undefined ? {} : { partitions }),
      ...(principals === undefined ? {} : { principals }),
    });
    printIssued(io, issued, values.json);
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
  const typed = `${group} ${action ?? ''}`.trim();
  throw new UsageError(
    `unknown command ${JSON.stringify(typed)}${didYouMean(typed, ADMIN_ACTIONS, (name) => JSON.stringify(name))}`,
  );
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
    io.stdout.write(
      `the keyword index is already written with the analysis '${configured}'; nothing to rewrite\n`,
    );
    return 0;
  }
  if (!report.done) {
    io.stdout.write(
      `stopped after ${report.rewritten} chunks; run \`docindex reindex\` again to carry on from there\n`,
    );
    return 1;
  }
  io.stdout.write(
    `keyword index rewritten from the analysis '${written}' to '${configured}' (each document in its own language): ${report.rewritten} chunks\n`,
  );
  return 0;
}

function printIssued(io: TerminalIO, issued: IssuedKeyLine, json: boolean | undefined): void {
  const expiresAt =
    issued.expires_at === undefined || issued.expires_at === null
      ? issued.expires_at
      : new Date(issued.expires_at).toISOString();
  if (json) {
    const line = {
      org_id: issued.org_id,
      key_id: issued.key_id,
      api_key: issued.api_key,
      ...(issued.scopes === undefined ? {} : { scopes: issued.scopes }),
      ...(expiresAt === undefined ? {} : { expires_at: expiresAt }),
      ...(issued.partitions === undefined ? {} : { partitions: issued.partitions }),
      ...(issued.principals === undefined ? {} : { principals: issued.principals }),
    };
    io.stdout.write(`${JSON.stringify(line)}\n`);
    return;
  }
  const lines = [`org_id:  ${issued.org_id}`, `key_id:  ${issued.key_id}`, `api_key: ${issued.api_key}`];
  if (issued.scopes !== undefined) lines.push(`scopes:  ${issued.scopes.join(',')}`);
  if (expiresAt !== undefined) lines.push(`expires: ${expiresAt ?? 'never'}`);
  if (issued.partitions != null) lines.push(`partitions: ${issued.partitions.join(',')}`);
  if (issued.principals != null) lines.push(`principals: ${issued.principals.join(',')}`);
  io.stdout.write(`${lines.join('\n')}\n(the key is shown once; store it now)\n`);
}

/** `--partition NAME`, each a partition name. */
function parsePartitions(names: readonly string[]): string[] {
  const bad = names.find((name) => !isPartitionName(name));
  if (bad !== undefined) {
    throw new UsageError(
      `--partition takes a partition name (lower-case letters, digits, _ and -, at most 64), got ${JSON.stringify(bad)}`,
    );
  }
  return [...names];
}

function parseScopes(raw: string): Scope[] {
  const names = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const unknown = names.filter((name) => !isScope(name));
  if (names.length === 0 || unknown.length > 0) {
    throw new UsageError(
      `--scopes takes a comma-separated list of ${SCOPES.join(', ')}${unknown.length > 0 ? `; unknown: ${unknown.join(', ')}` : ''}`,
    );
  }
  return names as Scope[];
}

/** An RFC 3339 date-time, or a date (midnight UTC), checked against the calendar. */
function parseExpiry(raw: string): Date {
  const at = parseDateTime(raw) ?? parseFullDate(raw);
  if (at === null) {
    throw new UsageError(
      `--expires-at takes a date (2027-01-01) or an RFC 3339 date-time (2027-01-01T00:00:00Z) that exists on the calendar, got ${JSON.stringify(raw)}`,
    );
  }
  return at;
}

function requestsPerMinute(raw: string): number {
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > 10_000_000) {
    throw new UsageError(
      `expected a whole number of requests per minute (1..10000000), got ${JSON.stringify(raw)}`,
    );
  }
  return Number(raw);
}
