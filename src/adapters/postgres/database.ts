// The scale-out database handle: one pg Pool per process, every table qualified with the configured
// schema (no search_path, so transaction-mode poolers such as PgBouncer work too), and every
// connection failure turned into the domain's `service_unavailable` error, so an outage answers
// 503 instead of 500 and never leaves a request waiting on a dead socket.
import pg from 'pg';
import { ApiError, ERRORS } from '../../domain/errors.js';
import { PgChannelListener } from './notifications.js';
import { OrgConnectionShare } from './org-share.js';

export interface PgDatabaseOptions {
  connectionString: string;
  /** Schema holding docindex's tables; created by migratePostgres when missing. */
  schema: string;
  /** Pool size of this process (default 10). */
  maxConnections?: number;
  /** How long a query waits for a free or new connection before failing (default 5 s). */
  connectTimeoutMs?: number;
  /** Server-side cap on any one statement (default 60 s). */
  statementTimeoutMs?: number;
  /** Errors of idle pooled connections (a server restart, a network cut); they are not fatal. */
  onIdleError?: (error: unknown) => void;
  applicationName?: string;
  /**
   * Caps the connections one organisation's requests hold at once (OrgConnectionShare):
   * `currentOrg` names the org of the request running now (undefined outside requests: workers,
   * start-up), and a query or transaction of that org waits for its share before it takes a
   * connection from the pool.
   */
  orgShare?: { currentOrg: () => string | undefined; maxConnections: number };
}

export interface Queryable {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(
    sql: string,
    params?: unknown[],
  ): Promise<pg.QueryResult<R>>;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

// Socket-level failures, SQLSTATE class 08 (connection exception) and the server refusing work
// while it starts, stops or is full: the database is unavailable, not the request malformed.
const CONNECTION_ERRNOS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);
const CONNECTION_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error',
  'Client was closed and is not queryable',
  'Cannot use a pool after calling end on the pool',
];

export function isConnectionError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (CONNECTION_ERRNOS.has(code) || UNAVAILABLE_SQLSTATES.has(code) || code.startsWith('08')) return true;
  }
  if (error instanceof AggregateError && error.errors.some(isConnectionError)) return true;
  return CONNECTION_MESSAGES.some((m) => error.message.includes(m));
}

/** The error a caller sees: `service_unavailable` for an unreachable database, anything else as is. */
export function toStoreError(error: unknown): unknown {
  if (error instanceof ApiError || !isConnectionError(error)) return error;
  const unavailable = ERRORS.unavailable('database');
  unavailable.cause = error;
  return unavailable;
}

export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

export class PgDatabase implements Queryable {
  readonly pool: pg.Pool;
  readonly schema: string;
  private readonly schemaIdent: string;
  private closed = false;
  private readonly connectionString: string;
  private readonly applicationName: string;
  private readonly connectTimeoutMs: number;
  private readonly onIdleError: ((error: unknown) => void) | undefined;
  /** Each channel's one LISTEN connection and the callbacks it wakes. */
  private readonly channels = new Map<string, { listener: PgChannelListener; callbacks: Set<() => void> }>();
  private readonly share: { currentOrg: () => string | undefined; gate: OrgConnectionShare } | null;

  constructor(opts: PgDatabaseOptions) {
    // The name ends up in DDL and in every statement; the config checks it too, but this adapter
    // must not depend on that.
    if (!SCHEMA_NAME.test(opts.schema)) throw new Error(`invalid PostgreSQL schema name: ${opts.schema}`);
    this.schema = opts.schema;
    this.schemaIdent = quoteIdent(opts.schema);
    this.connectionString = opts.connectionString;
    this.applicationName = opts.applicationName ?? 'docindex';
    this.connectTimeoutMs = opts.connectTimeoutMs ?? 5_000;
    this.onIdleError = opts.onIdleError;
    this.pool = new pg.Pool({
      connectionString: opts.connectionString,
      max: opts.maxConnections ?? 10,
      connectionTimeoutMillis: this.connectTimeoutMs,
      idleTimeoutMillis: 30_000,
      statement_timeout: opts.statementTimeoutMs ?? 60_000,
      application_name: this.applicationName,
      keepAlive: true,
    });
    // Without a listener an idle client's error would crash the process; the next query simply
    // gets a fresh connection.
    this.pool.on('error', (error) => opts.onIdleError?.(error));
    // A checked-out client between queries (a session holding an advisory lock) whose backend is
    // ended gets the same: an error event no one listens to would end the process; its next query
    // fails instead, and the caller releases it as broken.
    this.pool.on('connect', (client) => {
      client.on('error', (error) => opts.onIdleError?.(error));
    });
    this.share = opts.orgShare
      ? {
          currentOrg: opts.orgShare.currentOrg,
          gate: new OrgConnectionShare(opts.orgShare.maxConnections, opts.connectTimeoutMs ?? 5_000),
        }
      : null;
  }

  /** Waits for the current request's org to have a connection to spare; the release function. */
  private async enterShare(): Promise<(() => void) | null> {
    const orgId = this.share?.currentOrg();
    return orgId === undefined || !this.share ? null : this.share.gate.enter(orgId);
  }

  /** `"schema"."name"`: every statement names its tables through this. */
  table(name: string): string {
    return `${this.schemaIdent}.${quoteIdent(name)}`;
  }

  get quotedSchema(): string {
    return this.schemaIdent;
  }

  async query<R extends pg.QueryResultRow = pg.QueryResultRow>(
    sql: string,
    params: unknown[] = [],
  ): Promise<pg.QueryResult<R>> {
    const leave = await this.enterShare();
    try {
      return await this.pool.query<R>(sql, params);
    } catch (error) {
      throw toStoreError(error);
    } finally {
      leave?.();
    }
  }

  /** Runs `fn` in one transaction on one connection; rolls back if it throws. */
  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    const leave = await this.enterShare();
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      leave?.();
      throw toStoreError(error);
    }
    const tx: Queryable = {
      query: async <R extends pg.QueryResultRow>(sql: string, params: unknown[] = []) => {
        try {
          return await client.query<R>(sql, params);
        } catch (error) {
          throw toStoreError(error);
        }
      },
    };
    let broken = false;
    try {
      await tx.query('BEGIN');
      const result = await fn(tx);
      await tx.query('COMMIT');
      return result;
    } catch (error) {
      try {
        await client.query('ROLLBACK');
      } catch {
        // The connection itself failed: it must not go back to the pool.
        broken = true;
      }
      throw error;
    } finally {
      client.release(broken);
      leave?.();
    }
  }

  /** A connection on which the caller holds session state (advisory locks); release it after. */
  async connect(): Promise<pg.PoolClient> {
    try {
      return await this.pool.connect();
    } catch (error) {
      throw toStoreError(error);
    }
  }

  /**
   * Calls `callback` after each commit of a transaction that notified `channel` (pg_notify), in
   * any process. The channel's LISTEN holds one connection of its own, outside the pool, opened
   * by the first callback and closed with the last; while it is down, nothing is called (see
   * PgChannelListener). Returns the unsubscribe.
   */
  listen(channel: string, callback: () => void): () => void {
    // A closed handle listens no more: its caller polls, as it would while the connection is down.
    if (this.closed) return () => {};
    let entry = this.channels.get(channel);
    if (!entry) {
      const callbacks = new Set<() => void>();
      const listener = new PgChannelListener({
        connectionString: this.connectionString,
        channel,
        applicationName: `${this.applicationName} listen`,
        connectTimeoutMs: this.connectTimeoutMs,
        onNotify: () => {
          for (const fn of callbacks) fn();
        },
        ...(this.onIdleError ? { onError: this.onIdleError } : {}),
      });
      entry = { listener, callbacks };
      this.channels.set(channel, entry);
      void listener.start();
    }
    const current = entry;
    current.callbacks.add(callback);
    return () => {
      current.callbacks.delete(callback);
      if (current.callbacks.size > 0 || this.channels.get(channel) !== current) return;
      this.channels.delete(channel);
      void current.listener.stop();
    };
  }

  /** Readiness: a round trip to the server. */
  async ping(): Promise<void> {
    await this.query('SELECT 1');
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const listeners = [...this.channels.values()].map((entry) => entry.listener.stop());
    this.channels.clear();
    await Promise.all([...listeners, this.pool.end()]);
  }
}

/** Non-negative whole number from a bigint / numeric column (pg returns those as strings). */
export function toNumber(value: string | number | null): number | null {
  return value === null ? null : Number(value);
}
