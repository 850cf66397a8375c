// Webhooks on SQLite: endpoints, the outbox and the delivery log (WebhookStore), and the outbox
// writer the document store calls inside its own transactions (SqliteWebhookOutbox). Claims are
// leases (owner + expiry) taken in one IMMEDIATE transaction, so two processes on one file never
// hold the same message.
import { type Clock, systemClock } from '../../domain/ports.js';
import type {
  AttemptResult,
  ClaimedMessage,
  ClaimLimits,
  DeliveryAttempt,
  DeliveryOutcome,
  EnqueueResult,
  OutboxStats,
  RetryPlan,
  WebhookEndpoint,
  WebhookEventType,
  WebhookStore,
} from '../../domain/webhooks.js';
import { DEFAULT_MAX_PENDING, isSourceEvent, settlementOf } from '../../domain/webhooks.js';
import { snapshotArguments, snapshotToRecord } from '../sql-rows/record-snapshot.js';
import { type AttemptRow, type EndpointRow, toAttempt, toEndpoint } from '../sql-rows/webhook-row.js';
import type { Database } from './database.js';
import { StatementCache } from './statements.js';

type SqliteEndpointRow = EndpointRow<number>;

const fromEpoch = (ms: number) => new Date(ms);

const NEW_MESSAGE_ID = `'msg_' || lower(hex(randomblob(16)))`;

/** The document row as an event's payload: the record's columns, JSON ones embedded as JSON. */
const SNAPSHOT = snapshotArguments('d', (column, ref) =>
  column === 'metadata' || column === 'pending' || column === 'access' ? `json(${ref})` : ref,
);

/**
 * The ids a claim takes: due messages of enabled endpoints, at most @perEndpoint leased per
 * endpoint and @perOrg per org (live leases of every owner counted), the orgs taking turns: each
 * org's n-th message (its endpoints' oldest due first, in turn) comes before any org's n+1-th.
 */
const FAIR_DUE_SQL = `
  WITH live AS (SELECT endpoint_id, org_id FROM webhook_messages WHERE lease_until >= @now),
  endpoint_busy AS (SELECT endpoint_id, count(*) AS n FROM live GROUP BY endpoint_id),
  org_busy AS (SELECT org_id, count(*) AS n FROM live GROUP BY org_id),
  due AS (
    SELECT w.id, w.org_id, w.endpoint_id, w.next_attempt_at,
      row_number() OVER (PARTITION BY w.endpoint_id ORDER BY w.next_attempt_at, w.id) AS endpoint_rank
    FROM webhook_messages w JOIN webhook_endpoints e ON e.id = w.endpoint_id
    WHERE w.next_attempt_at <= @now AND (w.lease_until IS NULL OR w.lease_until < @now)
      AND e.disabled_at IS NULL),
  endpoint_fit AS (
    SELECT d.id, d.org_id, d.next_attempt_at,
      row_number() OVER (PARTITION BY d.org_id ORDER BY d.endpoint_rank, d.next_attempt_at, d.id) AS org_rank
    FROM due d LEFT JOIN endpoint_busy b ON b.endpoint_id = d.endpoint_id
    WHERE d.endpoint_rank + coalesce(b.n, 0) <= @perEndpoint)
  SELECT f.id FROM endpoint_fit f LEFT JOIN org_busy b ON b.org_id = f.org_id
  WHERE f.org_rank + coalesce(b.n, 0) <= @perOrg
  ORDER BY f.org_rank, f.next_attempt_at, f.id
  LIMIT @limit`;

/**
 * Listeners of each database connection's new outbox messages: a dispatcher in the process that
 * wrote them starts at once instead of at its next poll. Called once the writing turn is over
 * (setImmediate), by when the writer's transaction has committed.
 */
const enqueuedListeners = new WeakMap<Database, Set<() => void>>();

function notifyEnqueued(db: Database): void {
  const listeners = enqueuedListeners.get(db);
  if (!listeners || listeners.size === 0) return;
  setImmediate(() => {
    for (const listener of listeners) listener();
  });
}

/**
 * Writes outbox rows for a document's event: call `emit` inside the transaction that makes the
 * change (it runs synchronous statements only). One statement: a row per enabled endpoint of the
 * document's org subscribed to the event, none at all for orgs without one. An endpoint left
 * with more than `maxPending` messages loses its oldest ones not in flight, counted on it.
 */
export class SqliteWebhookOutbox {
  private readonly sql: StatementCache;
  private readonly clock: Clock;
  private readonly maxPending: number;

  constructor(
    private readonly db: Database,
    clock: Clock = systemClock,
    options: { maxPending?: number } = {},
  ) {
    this.sql = new StatementCache(db);
    this.clock = clock;
    this.maxPending = options.maxPending ?? DEFAULT_MAX_PENDING;
  }

  /** How many messages were written (one per subscribed endpoint). */
  emit(type: WebhookEventType, documentId: string): number {
    const now = this.clock.now().getTime();
    // A read, then one single-row INSERT per message. A statement that may write several rows
    // (INSERT … SELECT) opens a statement savepoint, and FTS5 writes its pending terms out as a
    // segment at every savepoint: emitted after a document's chunks, it made one index segment per
    // document instead of one per transaction, and cost as much as the chunks' own writes. An org
    // without a subscribed endpoint (most) costs one indexed read.
    const messages = this.sql
      .get<[{ type: string; id: string }], { endpoint_id: string; org_id: string; payload: string }>(
        `SELECT e.id AS endpoint_id, d.org_id, json_object(${SNAPSHOT}) AS payload
         FROM documents d JOIN webhook_endpoints e ON e.org_id = d.org_id
         WHERE d.id = @id AND e.disabled_at IS NULL
           AND instr(',' || e.events || ',', ',' || @type || ',') > 0`,
      )
      .all({ type, id: documentId });
    if (messages.length === 0) return 0;
    const insert = this.sql.get(
      `INSERT INTO webhook_messages (id, endpoint_id, org_id, event_type, document_id, payload, created_at, next_attempt_at)
       VALUES (${NEW_MESSAGE_ID}, @endpoint, @org, @type, @document, @payload, @now, @now)`,
    );
    for (const m of messages) {
      insert.run({
        endpoint: m.endpoint_id,
        org: m.org_id,
        type,
        document: documentId,
        payload: m.payload,
        now,
      });
      this.bound(m.endpoint_id, now);
    }
    notifyEnqueued(this.db);
    return messages.length;
  }

  /** Drops the endpoint's oldest messages not in flight beyond `maxPending`, and counts them. */
  private bound(endpointId: string, now: number): void {
    const waiting =
      this.sql
        .get<[string], number>('SELECT count(*) FROM webhook_messages WHERE endpoint_id = ?')
        .pluck()
        .get(endpointId) ?? 0;
    if (waiting <= this.maxPending) return;
    const dropped = this.sql
      .get(
        `DELETE FROM webhook_messages WHERE id IN (
           SELECT id FROM webhook_messages
           WHERE endpoint_id = @e AND (lease_until IS NULL OR lease_until < @now)
           ORDER BY created_at, id LIMIT @excess)`,
      )
      .run({ e: endpointId, now, excess: waiting - this.maxPending }).changes;
    if (dropped > 0) {
      this.sql
        .get('UPDATE webhook_endpoints SET dropped_messages = dropped_messages + ? WHERE id = ?')
        .run(dropped, endpointId);
    }
  }
}

export class SqliteWebhookStore implements WebhookStore {
  private readonly sql: StatementCache;

  constructor(private readonly db: Database) {
    this.sql = new StatementCache(db);
  }

  async createEndpoint(e: WebhookEndpoint, maxPerOrg: number): Promise<boolean> {
    // One statement: the count and the insert happen together, whichever connection writes.
    const made = this.sql
      .get(
        `INSERT INTO webhook_endpoints (id, org_id, url, events, description, secret, created_at,
           disabled_at, disabled_reason, failing_since)
         SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
         WHERE (SELECT count(*) FROM webhook_endpoints WHERE org_id = ?) < ?`,
      )
      .run(
        e.id,
        e.orgId,
        e.url,
        e.events.join(','),
        e.description,
        e.secret,
        e.createdAt.getTime(),
        e.disabledAt?.getTime() ?? null,
        e.disabledReason,
        e.failingSince?.getTime() ?? null,
        e.orgId,
        maxPerOrg,
      ).changes;
    return made > 0;
  }

  async countEndpoints(orgId: string): Promise<number> {
    return (
      this.sql
        .get<[string], number>('SELECT count(*) FROM webhook_endpoints WHERE org_id = ?')
        .pluck()
        .get(orgId) ?? 0
    );
  }

  async listEndpoints(orgId: string): Promise<WebhookEndpoint[]> {
    return this.sql
      .get<[string], SqliteEndpointRow>(
        'SELECT * FROM webhook_endpoints WHERE org_id = ? ORDER BY created_at, id',
      )
      .all(orgId)
      .map((row) => toEndpoint(row, fromEpoch));
  }

  async getEndpoint(orgId: string, id: string): Promise<WebhookEndpoint | null> {
    const row = this.sql
      .get<[string, string], SqliteEndpointRow>('SELECT * FROM webhook_endpoints WHERE id = ? AND org_id = ?')
      .get(id, orgId);
    return row ? toEndpoint(row, fromEpoch) : null;
  }

  async deleteEndpoint(orgId: string, id: string): Promise<boolean> {
    return this.db
      .transaction(() => {
        const exists = this.sql
          .get<[string, string], number>('SELECT 1 FROM webhook_endpoints WHERE id = ? AND org_id = ?')
          .pluck()
          .get(id, orgId);
        if (exists === undefined) return false;
        this.removeEndpoints('id = ?', id);
        return true;
      })
      .immediate();
  }

  /** Messages and log first, explicitly: a connection without foreign_keys would skip the cascade. */
  private removeEndpoints(where: string, value: string): number {
    this.sql
      .get(
        `DELETE FROM webhook_messages WHERE endpoint_id IN (SELECT id FROM webhook_endpoints WHERE ${where})`,
      )
      .run(value);
    this.sql
      .get(
        `DELETE FROM webhook_attempts WHERE endpoint_id IN (SELECT id FROM webhook_endpoints WHERE ${where})`,
      )
      .run(value);
    return this.sql.get(`DELETE FROM webhook_endpoints WHERE ${where}`).run(value).changes;
  }

  onEnqueued(listener: () => void): () => void {
    let listeners = enqueuedListeners.get(this.db);
    if (!listeners) {
      listeners = new Set();
      enqueuedListeners.set(this.db, listeners);
    }
    listeners.add(listener);
    return () => listeners.delete(listener);
  }

  async enqueueTest(orgId: string, endpointId: string, at: Date, maxPending: number): Promise<EnqueueResult> {
    return this.db
      .transaction((): EnqueueResult => {
        const endpoint = this.sql
          .get<[string, string], number>(
            'SELECT 1 FROM webhook_endpoints WHERE id = ? AND org_id = ? AND disabled_at IS NULL',
          )
          .pluck()
          .get(endpointId, orgId);
        if (endpoint === undefined) return 'no_endpoint';
        const waiting =
          this.sql
            .get<[string], number>('SELECT count(*) FROM webhook_messages WHERE endpoint_id = ?')
            .pluck()
            .get(endpointId) ?? 0;
        if (waiting >= maxPending) return 'backlog_full';
        const id = this.sql
          .get<[{ org: string; id: string; now: number }], string>(
            `INSERT INTO webhook_messages (id, endpoint_id, org_id, event_type, document_id, payload, created_at, next_attempt_at)
             VALUES (${NEW_MESSAGE_ID}, @id, @org, 'webhook.test', NULL, NULL, @now, @now)
             RETURNING id`,
          )
          .pluck()
          .get({ org: orgId, id: endpointId, now: at.getTime() }) as string;
        notifyEnqueued(this.db);
        return { messageId: id };
      })
      .immediate();
  }

  async claimDue(owner: string, now: Date, leaseUntil: Date, limits: ClaimLimits): Promise<ClaimedMessage[]> {
    const t = now.getTime();
    // A read first: an idle outbox costs no write lock, polled as often as it is.
    const due = this.sql
      .get<[number, number], number>(
        `SELECT 1 FROM webhook_messages WHERE next_attempt_at <= ? AND (lease_until IS NULL OR lease_until < ?) LIMIT 1`,
      )
      .pluck()
      .get(t, t);
    if (due === undefined) return [];
    type Row = {
      id: string;
      endpoint_id: string;
      org_id: string;
      event_type: string;
      payload: string | null;
      created_at: number;
      attempts: number;
      url: string;
      secret: string;
    };
    const rows = this.db
      .transaction(() => {
        // Inside the IMMEDIATE transaction, so the leases counted are every connection's.
        const ids = this.sql
          .get<[{ now: number; limit: number; perOrg: number; perEndpoint: number }], string>(FAIR_DUE_SQL)
          .pluck()
          .all({
            now: t,
            limit: Math.max(0, Math.floor(limits.messages)),
            perOrg: limits.perOrg,
            perEndpoint: limits.perEndpoint,
          });
        if (ids.length === 0) return [];
        return this.sql
          .get<[{ owner: string; until: number; ids: string }], Row>(
            `UPDATE webhook_messages SET lease_owner = @owner, lease_until = @until, attempts = attempts + 1
             WHERE id IN (SELECT value FROM json_each(@ids))
             RETURNING id, endpoint_id, org_id, event_type, payload, created_at, attempts,
               (SELECT e.url FROM webhook_endpoints e WHERE e.id = webhook_messages.endpoint_id) AS url,
               (SELECT e.secret FROM webhook_endpoints e WHERE e.id = webhook_messages.endpoint_id) AS secret`,
          )
          .all({ owner, until: leaseUntil.getTime(), ids: JSON.stringify(ids) });
      })
      .immediate();
    return rows.map((r) => ({
      id: r.id,
      endpointId: r.endpoint_id,
      orgId: r.org_id,
      url: r.url,
      secret: r.secret,
      type: r.event_type,
      // A source event's payload is the run as the API shows it; a document event's, the record.
      ...(isSourceEvent(r.event_type)
        ? { record: null, data: r.payload === null ? null : (JSON.parse(r.payload) as unknown) }
        : { record: r.payload === null ? null : snapshotToRecord(r.payload) }),
      createdAt: new Date(r.created_at),
      attempt: r.attempts,
      leaseOwner: owner,
    }));
  }

  async settle(
    message: ClaimedMessage,
    result: AttemptResult,
    retry: RetryPlan,
    at: Date,
    logLimit: number,
  ): Promise<DeliveryOutcome | null> {
    const now = at.getTime();
    return this.db
      .transaction((): DeliveryOutcome | null => {
        const held = this.sql
          .get<[string, string, number], number>(
            'SELECT 1 FROM webhook_messages WHERE id = ? AND lease_owner = ? AND attempts = ?',
          )
          .pluck()
          .get(message.id, message.leaseOwner, message.attempt);
        if (held === undefined) return null;
        let failingSince: number | null = null;
        if (result.kind === 'delivered') {
          this.sql
            .get('UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ?')
            .run(message.endpointId);
        } else {
          this.sql
            .get('UPDATE webhook_endpoints SET failing_since = coalesce(failing_since, ?) WHERE id = ?')
            .run(now, message.endpointId);
          failingSince =
            this.sql
              .get<[string], number | null>('SELECT failing_since FROM webhook_endpoints WHERE id = ?')
              .pluck()
              .get(message.endpointId) ?? now;
        }
        const { outcome, disable } = settlementOf(
          result,
          failingSince === null ? null : new Date(failingSince),
          retry,
        );
        if (disable !== null) {
          this.sql
            .get('UPDATE webhook_endpoints SET disabled_at = ?, disabled_reason = ? WHERE id = ?')
            .run(now, disable, message.endpointId);
          this.sql.get('DELETE FROM webhook_messages WHERE endpoint_id = ?').run(message.endpointId);
        } else if (outcome === 'retrying') {
          this.sql
            .get(
              'UPDATE webhook_messages SET next_attempt_at = ?, lease_owner = NULL, lease_until = NULL WHERE id = ?',
            )
            .run(retry.nextAttemptAt!.getTime(), message.id);
        } else {
          this.sql.get('DELETE FROM webhook_messages WHERE id = ?').run(message.id);
        }
        this.sql
          .get(
            `INSERT INTO webhook_attempts (endpoint_id, org_id, message_id, event_type, attempt, status_code,
               duration_ms, error, outcome, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          )
          .run(
            message.endpointId,
            message.orgId,
            message.id,
            message.type,
            message.attempt,
            result.statusCode,
            result.durationMs,
            result.error,
            outcome,
            now,
          );
        this.sql
          .get(
            `DELETE FROM webhook_attempts WHERE endpoint_id = @e AND id <= (
               SELECT id FROM webhook_attempts WHERE endpoint_id = @e ORDER BY id DESC LIMIT 1 OFFSET @keep)`,
          )
          .run({ e: message.endpointId, keep: Math.max(1, logLimit) });
        return outcome;
      })
      .immediate();
  }

  async listAttempts(orgId: string, endpointId: string, limit: number): Promise<DeliveryAttempt[] | null> {
    if ((await this.getEndpoint(orgId, endpointId)) === null) return null;
    return this.sql
      .get<[string, number], AttemptRow<number, number>>(
        'SELECT * FROM webhook_attempts WHERE endpoint_id = ? ORDER BY id DESC LIMIT ?',
      )
      .all(endpointId, Math.max(0, Math.floor(limit)))
      .map((row) => toAttempt(row, fromEpoch));
  }

  async countPending(endpointId: string): Promise<number> {
    return (
      this.sql
        .get<[string], number>('SELECT count(*) FROM webhook_messages WHERE endpoint_id = ?')
        .pluck()
        .get(endpointId) ?? 0
    );
  }

  async stats(): Promise<OutboxStats> {
    const row = this.sql
      .get<[], { n: number; oldest: number | null }>(
        'SELECT count(*) AS n, min(created_at) AS oldest FROM webhook_messages',
      )
      .get();
    return { depth: row?.n ?? 0, oldest: row?.oldest == null ? null : new Date(row.oldest) };
  }

  async purgeOrg(orgId: string): Promise<number> {
    return this.db.transaction(() => this.removeEndpoints('org_id = ?', orgId)).immediate();
  }
}
