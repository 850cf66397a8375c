// Webhooks on PostgreSQL: endpoints, the outbox and the delivery log (WebhookStore), and the outbox
// writer the document store calls inside its own transactions (PgWebhookOutbox). Claims take
// turns under an advisory lock and lease due rows (owner + expiry), so any number of processes
// share the outbox, each message is held by one of them at a time, and the per-org and
// per-endpoint caps hold across all of them.
import { cleanText } from '../../domain/text.js';
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
import type { PgDatabase, Queryable } from './database.js';
import { schemaChannel } from './notifications.js';

const asDate = (value: Date) => value;

/** SQL for a new outbox message's id. */
export const NEW_MESSAGE_ID = `'msg_' || replace(gen_random_uuid()::text, '-', '')`;

/**
 * The channel every statement that adds outbox messages notifies, in the RETURNING of its INSERT:
 * once per transaction (PostgreSQL folds a transaction's identical notifications), only when a row
 * went in, delivered at commit. Dispatchers in every process listen on it (onEnqueued).
 */
export function outboxChannel(db: PgDatabase): string {
  return schemaChannel('outbox', db.schema);
}

/**
 * Writes outbox rows for a document's event: call `emit` with the transaction that makes the
 * change. One statement: a row per enabled endpoint of the document's org subscribed to the
 * event, none at all for orgs without one. An endpoint left with more than `maxPending` messages
 * loses its oldest ones not in flight, counted on it.
 */
export class PgWebhookOutbox {
  private readonly insert: string;
  private readonly bound: string;
  private readonly maxPending: number;
  private readonly channel: string;

  constructor(db: PgDatabase, options: { maxPending?: number } = {}) {
    this.channel = outboxChannel(db);
    const snapshot = snapshotArguments('d', (_column, ref) => ref);
    const messages = db.table('webhook_messages');
    const endpoints = db.table('webhook_endpoints');
    this.maxPending = options.maxPending ?? DEFAULT_MAX_PENDING;
    this.insert = `INSERT INTO ${messages}
        (id, endpoint_id, org_id, event_type, document_id, payload, created_at, next_attempt_at)
      SELECT ${NEW_MESSAGE_ID}, e.id, d.org_id, $2, d.id, jsonb_build_object(${snapshot}), $3, $3
      FROM ${db.table('documents')} d JOIN ${endpoints} e ON e.org_id = d.org_id
      WHERE d.id = $1 AND e.disabled_at IS NULL
        AND position(',' || $2 || ',' in ',' || e.events || ',') > 0
      RETURNING endpoint_id, pg_notify($4, '')`;
    // Messages first, then the endpoint: the order a settling delivery locks them in.
    this.bound = `WITH over AS (
        SELECT endpoint_id, count(*) - $2 AS excess FROM ${messages}
        WHERE endpoint_id = ANY($1::text[]) GROUP BY endpoint_id HAVING count(*) > $2),
      dropped AS (
        DELETE FROM ${messages} m WHERE m.id IN (
          SELECT x.id FROM over o CROSS JOIN LATERAL (
            SELECT id FROM ${messages}
            WHERE endpoint_id = o.endpoint_id AND (lease_until IS NULL OR lease_until < $3)
            ORDER BY created_at, id LIMIT o.excess) x)
        RETURNING m.endpoint_id)
      UPDATE ${endpoints} e SET dropped_messages = e.dropped_messages + d.n
      FROM (SELECT endpoint_id, count(*)::int AS n FROM dropped GROUP BY endpoint_id) d
      WHERE e.id = d.endpoint_id`;
  }

  /** How many messages were written (one per subscribed endpoint). */
  async emit(tx: Queryable, type: WebhookEventType, documentId: string, at: Date): Promise<number> {
    const { rows } = await tx.query<{ endpoint_id: string }>(this.insert, [
      cleanText(documentId),
      type,
      at,
      this.channel,
    ]);
    if (rows.length > 0) {
      await tx.query(this.bound, [rows.map((r) => r.endpoint_id), this.maxPending, at]);
    }
    return rows.length;
  }
}

interface ClaimRow {
  id: string;
  endpoint_id: string;
  org_id: string;
  event_type: string;
  payload: object | null;
  created_at: Date;
  attempts: number;
  url: string;
  secret: string;
}

export class PgWebhookStore implements WebhookStore {
  private readonly endpoints: string;
  private readonly messages: string;
  private readonly attempts: string;

  constructor(private readonly db: PgDatabase) {
    this.endpoints = db.table('webhook_endpoints');
    this.messages = db.table('webhook_messages');
    this.attempts = db.table('webhook_attempts');
  }

  async createEndpoint(e: WebhookEndpoint, maxPerOrg: number): Promise<boolean> {
    const org = cleanText(e.orgId);
    return this.db.transaction(async (tx) => {
      // Under READ COMMITTED two transactions would both count the same rows: a lock per org
      // (and schema) makes each create count what the one before it inserted.
      await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`${this.endpoints}:create:${org}`]);
      const r = await tx.query(
        `INSERT INTO ${this.endpoints} (id, org_id, url, events, description, secret, created_at,
           disabled_at, disabled_reason, failing_since)
         SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10
         WHERE (SELECT count(*) FROM ${this.endpoints} WHERE org_id = $2) < $11`,
        [
          e.id,
          org,
          cleanText(e.url),
          e.events.join(','),
          e.description === null ? null : cleanText(e.description),
          e.secret,
          e.createdAt,
          e.disabledAt,
          e.disabledReason,
          e.failingSince,
          maxPerOrg,
        ],
      );
      return (r.rowCount ?? 0) > 0;
    });
  }

  async countEndpoints(orgId: string): Promise<number> {
    const { rows } = await this.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${this.endpoints} WHERE org_id = $1`,
      [cleanText(orgId)],
    );
    return rows[0]?.n ?? 0;
  }

  async listEndpoints(orgId: string): Promise<WebhookEndpoint[]> {
    const { rows } = await this.db.query<EndpointRow<Date>>(
      `SELECT * FROM ${this.endpoints} WHERE org_id = $1 ORDER BY created_at, id`,
      [cleanText(orgId)],
    );
    return rows.map((row) => toEndpoint(row, asDate));
  }

  async getEndpoint(orgId: string, id: string): Promise<WebhookEndpoint | null> {
    const { rows } = await this.db.query<EndpointRow<Date>>(
      `SELECT * FROM ${this.endpoints} WHERE id = $1 AND org_id = $2`,
      [cleanText(id), cleanText(orgId)],
    );
    return rows[0] ? toEndpoint(rows[0], asDate) : null;
  }

  async deleteEndpoint(orgId: string, id: string): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      // Messages first, then the endpoint (its log goes with it, ON DELETE CASCADE): the order a
      // settling delivery and a bounded outbox write lock them in, so neither deadlocks with this.
      await tx.query(`DELETE FROM ${this.messages} WHERE endpoint_id = $1 AND org_id = $2`, [
        cleanText(id),
        cleanText(orgId),
      ]);
      const r = await tx.query(`DELETE FROM ${this.endpoints} WHERE id = $1 AND org_id = $2`, [
        cleanText(id),
        cleanText(orgId),
      ]);
      return (r.rowCount ?? 0) > 0;
    });
  }

  /** New messages committed by any process, told by the outbox channel's notifications. */
  onEnqueued(listener: () => void): () => void {
    return this.db.listen(outboxChannel(this.db), listener);
  }

  async enqueueTest(orgId: string, endpointId: string, at: Date, maxPending: number): Promise<EnqueueResult> {
    return this.db.transaction(async (tx): Promise<EnqueueResult> => {
      // The endpoint's row lock makes concurrent tests count each other's messages.
      const endpoint = await tx.query(
        `SELECT 1 FROM ${this.endpoints} WHERE id = $1 AND org_id = $2 AND disabled_at IS NULL FOR UPDATE`,
        [cleanText(endpointId), cleanText(orgId)],
      );
      if (!endpoint.rowCount) return 'no_endpoint';
      const { rows } = await tx.query<{ id: string }>(
        `INSERT INTO ${this.messages} (id, endpoint_id, org_id, event_type, document_id, payload, created_at, next_attempt_at)
         SELECT ${NEW_MESSAGE_ID}, $1, $2, 'webhook.test', NULL, NULL, $3, $3
         WHERE (SELECT count(*) FROM ${this.messages} WHERE endpoint_id = $1) < $4
         RETURNING id, pg_notify($5, '')`,
        [cleanText(endpointId), cleanText(orgId), at, maxPending, outboxChannel(this.db)],
      );
      return rows[0] ? { messageId: rows[0].id } : 'backlog_full';
    });
  }

  async claimDue(owner: string, now: Date, leaseUntil: Date, limits: ClaimLimits): Promise<ClaimedMessage[]> {
    const rows = await this.db.transaction(async (tx) => {
      // Claims take turns (a lock per schema, held to the commit): two claimers counting the
      // same live leases at once would each fill an org's cap.
      await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`${this.messages}:claim`]);
      const { rows } = await tx.query<ClaimRow>(
        `WITH live AS (SELECT endpoint_id, org_id FROM ${this.messages} WHERE lease_until >= $2),
         endpoint_busy AS (SELECT endpoint_id, count(*) AS n FROM live GROUP BY endpoint_id),
         org_busy AS (SELECT org_id, count(*) AS n FROM live GROUP BY org_id),
         due AS (
           SELECT w.id, w.org_id, w.endpoint_id, w.next_attempt_at,
             row_number() OVER (PARTITION BY w.endpoint_id ORDER BY w.next_attempt_at, w.id) AS endpoint_rank
           FROM ${this.messages} w JOIN ${this.endpoints} e ON e.id = w.endpoint_id
           WHERE w.next_attempt_at <= $2 AND (w.lease_until IS NULL OR w.lease_until < $2)
             AND e.disabled_at IS NULL),
         endpoint_fit AS (
           SELECT d.id, d.org_id, d.next_attempt_at,
             row_number() OVER (PARTITION BY d.org_id ORDER BY d.endpoint_rank, d.next_attempt_at, d.id) AS org_rank
           FROM due d LEFT JOIN endpoint_busy b ON b.endpoint_id = d.endpoint_id
           WHERE d.endpoint_rank + coalesce(b.n, 0) <= $5),
         picked AS (
           SELECT f.id FROM endpoint_fit f LEFT JOIN org_busy b ON b.org_id = f.org_id
           WHERE f.org_rank + coalesce(b.n, 0) <= $6
           ORDER BY f.org_rank, f.next_attempt_at, f.id
           LIMIT $4)
         UPDATE ${this.messages} m SET lease_owner = $1, lease_until = $3, attempts = m.attempts + 1
         FROM picked, ${this.endpoints} e
         WHERE m.id = picked.id AND e.id = m.endpoint_id
         RETURNING m.id, m.endpoint_id, m.org_id, m.event_type, m.payload, m.created_at, m.attempts, e.url, e.secret`,
        [owner, now, leaseUntil, Math.max(0, Math.floor(limits.messages)), limits.perEndpoint, limits.perOrg],
      );
      return rows;
    });
    return rows.map((r) => ({
      id: r.id,
      endpointId: r.endpoint_id,
      orgId: r.org_id,
      url: r.url,
      secret: r.secret,
      type: r.event_type,
      // A source event's payload is the run as the API shows it; a document event's, the record.
      ...(isSourceEvent(r.event_type)
        ? { record: null, data: r.payload as unknown }
        : { record: r.payload === null ? null : snapshotToRecord(r.payload) }),
      createdAt: r.created_at,
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
    if (result.kind === 'delivered') return this.settleDelivered(message, result, at, logLimit);
    return this.db.transaction(async (tx): Promise<DeliveryOutcome | null> => {
      const held = await tx.query(
        `SELECT 1 FROM ${this.messages} WHERE id = $1 AND lease_owner = $2 AND attempts = $3 FOR UPDATE`,
        [message.id, message.leaseOwner, message.attempt],
      );
      if (!held.rowCount) return null;
      let failingSince: Date | null = null;
      if (result.kind === 'delivered') {
        await tx.query(
          `UPDATE ${this.endpoints} SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL`,
          [message.endpointId],
        );
      } else {
        const { rows } = await tx.query<{ failing_since: Date }>(
          `UPDATE ${this.endpoints} SET failing_since = coalesce(failing_since, $2) WHERE id = $1
           RETURNING failing_since`,
          [message.endpointId, at],
        );
        failingSince = rows[0]?.failing_since ?? at;
      }
      const { outcome, disable } = settlementOf(result, failingSince, retry);
      if (disable !== null) {
        await tx.query(`UPDATE ${this.endpoints} SET disabled_at = $2, disabled_reason = $3 WHERE id = $1`, [
          message.endpointId,
          at,
          disable,
        ]);
        await tx.query(`DELETE FROM ${this.messages} WHERE endpoint_id = $1`, [message.endpointId]);
      } else if (outcome === 'retrying') {
        await tx.query(
          `UPDATE ${this.messages} SET next_attempt_at = $2, lease_owner = NULL, lease_until = NULL WHERE id = $1`,
          [message.id, retry.nextAttemptAt],
        );
      } else {
        await tx.query(`DELETE FROM ${this.messages} WHERE id = $1`, [message.id]);
      }
      await tx.query(
        `INSERT INTO ${this.attempts} (endpoint_id, org_id, message_id, event_type, attempt, status_code,
           duration_ms, error, outcome, at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [
          message.endpointId,
          message.orgId,
          message.id,
          message.type,
          message.attempt,
          result.statusCode,
          result.durationMs,
          result.error === null ? null : cleanText(result.error),
          outcome,
          at,
        ],
      );
      await tx.query(
        `DELETE FROM ${this.attempts} WHERE endpoint_id = $1 AND id <= (
           SELECT id FROM ${this.attempts} WHERE endpoint_id = $1 ORDER BY id DESC LIMIT 1 OFFSET $2)`,
        [message.endpointId, Math.max(1, logLimit)],
      );
      return outcome;
    });
  }

  /**
   * A delivered message, as settle() does it, in one statement instead of a transaction of six:
   * nearly every settle is this one, and each statement waits its turn on a loaded database. The
   * message goes if this owner still holds it, and only then is the endpoint's failure run ended,
   * the attempt logged and the log pruned. Every part of a statement sees the tables as they were
   * before it, so the prune keeps `logLimit - 1` earlier attempts beside the new one.
   */
  private async settleDelivered(
    message: ClaimedMessage,
    result: AttemptResult,
    at: Date,
    logLimit: number,
  ): Promise<DeliveryOutcome | null> {
    const { rows } = await this.db.query<{ held: boolean }>(
      `WITH held AS (
         DELETE FROM ${this.messages} WHERE id = $1 AND lease_owner = $2 AND attempts = $3 RETURNING id
       ), mended AS (
         UPDATE ${this.endpoints} SET failing_since = NULL
         WHERE id = $4 AND failing_since IS NOT NULL AND EXISTS (SELECT 1 FROM held)
       ), logged AS (
         INSERT INTO ${this.attempts} (endpoint_id, org_id, message_id, event_type, attempt, status_code,
           duration_ms, error, outcome, at)
         SELECT $4::text, $5::text, $1::text, $6::text, $3::integer, $7::integer, $8::integer, NULL,
           'delivered', $9::timestamptz
         FROM held
       ), pruned AS (
         DELETE FROM ${this.attempts} WHERE endpoint_id = $4 AND EXISTS (SELECT 1 FROM held) AND id <= (
           SELECT id FROM ${this.attempts} WHERE endpoint_id = $4 ORDER BY id DESC LIMIT 1 OFFSET $10)
       )
       SELECT EXISTS (SELECT 1 FROM held) AS held`,
      [
        message.id,
        message.leaseOwner,
        message.attempt,
        message.endpointId,
        message.orgId,
        message.type,
        result.statusCode,
        result.durationMs,
        at,
        Math.max(1, logLimit) - 1,
      ],
    );
    return rows[0]?.held === true ? 'delivered' : null;
  }

  async listAttempts(orgId: string, endpointId: string, limit: number): Promise<DeliveryAttempt[] | null> {
    if ((await this.getEndpoint(orgId, endpointId)) === null) return null;
    const { rows } = await this.db.query<AttemptRow<string, Date>>(
      `SELECT * FROM ${this.attempts} WHERE endpoint_id = $1 ORDER BY id DESC LIMIT $2`,
      [cleanText(endpointId), Math.max(0, Math.floor(limit))],
    );
    return rows.map((row) => toAttempt(row, asDate));
  }

  async countPending(endpointId: string): Promise<number> {
    const { rows } = await this.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${this.messages} WHERE endpoint_id = $1`,
      [cleanText(endpointId)],
    );
    return rows[0]?.n ?? 0;
  }

  async stats(): Promise<OutboxStats> {
    const { rows } = await this.db.query<{ n: number; oldest: Date | null }>(
      `SELECT count(*)::int AS n, min(created_at) AS oldest FROM ${this.messages}`,
    );
    return { depth: rows[0]?.n ?? 0, oldest: rows[0]?.oldest ?? null };
  }

  async purgeOrg(orgId: string): Promise<number> {
    const org = cleanText(orgId);
    return this.db.transaction(async (tx) => {
      // Messages first, then endpoints: the order a settling delivery locks them in (its message,
      // then its endpoint). Deleting the endpoints first, whose cascade then waits for a message a
      // delivery holds while that delivery waits for its endpoint, is a deadlock.
      await tx.query(`DELETE FROM ${this.messages} WHERE org_id = $1`, [org]);
      const r = await tx.query(`DELETE FROM ${this.endpoints} WHERE org_id = $1`, [org]);
      return r.rowCount ?? 0;
    });
  }
}
