// Idempotency-Key records in PostgreSQL, shared by every API process: a claim is one INSERT … ON
// CONFLICT that only replaces an expired or abandoned record, so of several concurrent requests
// with one key (on any process) exactly one becomes its owner.
import type { IdempotencyRecord, IdempotencyStore } from '../../domain/ports.js';
import { cleanText } from '../../domain/text.js';
import type { PgDatabase, Queryable } from './database.js';

interface Row {
  org_id: string;
  key: string;
  fingerprint: string;
  state: 'in_flight' | 'done';
  status: number | null;
  body: string | null;
  created_at: Date;
}

/** Expired records are purged on one claim in this many, keeping the table to about a day of keys. */
const PURGE_EVERY = 256;
/** A record released between our failed insert and our read is claimed again, a bounded number of times. */
const CLAIM_TRIES = 3;

export class PgIdempotencyStore implements IdempotencyStore {
  private readonly table: string;
  private claims = 0;

  constructor(private readonly db: PgDatabase) {
    this.table = db.table('idempotency_keys');
  }

  async claim(
    record: { orgId: string; key: string; fingerprint: string; createdAt: Date },
    limits: { ttlMs: number; staleInFlightMs: number },
  ): Promise<IdempotencyRecord | null> {
    const now = record.createdAt.getTime();
    const orgId = cleanText(record.orgId);
    const key = cleanText(record.key);
    if (++this.claims % PURGE_EVERY === 0) {
      await this.db.query(`DELETE FROM ${this.table} WHERE created_at < $1`, [new Date(now - limits.ttlMs)]);
    }
    for (let attempt = 0; attempt < CLAIM_TRIES; attempt++) {
      const inserted = await this.db.query(
        `INSERT INTO ${this.table} AS k (org_id, key, fingerprint, state, status, body, created_at)
         VALUES ($1, $2, $3, 'in_flight', NULL, NULL, $4)
         ON CONFLICT (org_id, key) DO UPDATE SET
           fingerprint = excluded.fingerprint, state = 'in_flight', status = NULL, body = NULL,
           created_at = excluded.created_at
         WHERE k.created_at < $5 OR (k.state = 'in_flight' AND k.created_at < $6)
         RETURNING 1`,
        [
          orgId,
          key,
          cleanText(record.fingerprint),
          record.createdAt,
          new Date(now - limits.ttlMs),
          new Date(now - limits.staleInFlightMs),
        ],
      );
      if ((inserted.rowCount ?? 0) > 0) return null;
      const { rows } = await this.db.query<Row>(
        `SELECT org_id, key, fingerprint, state, status, body, created_at FROM ${this.table}
         WHERE org_id = $1 AND key = $2`,
        [orgId, key],
      );
      const existing = rows[0];
      if (!existing) continue;
      return {
        orgId: existing.org_id,
        key: existing.key,
        fingerprint: existing.fingerprint,
        state: existing.state,
        status: existing.status,
        body: existing.body,
        createdAt: existing.created_at,
      };
    }
    throw new Error('idempotency key kept changing hands; retry the request');
  }

  async complete(orgId: string, key: string, status: number, body: string): Promise<void> {
    await completeAnswer(this.db, this.table, { orgId, key, status }, body);
  }

  async release(orgId: string, key: string): Promise<void> {
    await this.db.query(`DELETE FROM ${this.table} WHERE org_id = $1 AND key = $2 AND state = 'in_flight'`, [
      cleanText(orgId),
      cleanText(key),
    ]);
  }

  async purgeOrg(orgId: string): Promise<number> {
    const r = await this.db.query(`DELETE FROM ${this.table} WHERE org_id = $1`, [cleanText(orgId)]);
    return r.rowCount ?? 0;
  }
}

/** Stores a key's response as done, on `db`: a write's transaction can include it. */
export async function completeAnswer(
  db: Queryable,
  table: string,
  answer: { orgId: string; key: string; status: number },
  body: string,
): Promise<void> {
  await db.query(
    `UPDATE ${table} SET state = 'done', status = $1, body = $2 WHERE org_id = $3 AND key = $4`,
    [answer.status, cleanText(body), cleanText(answer.orgId), cleanText(answer.key)],
  );
}
