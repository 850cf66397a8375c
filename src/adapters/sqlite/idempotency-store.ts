// Idempotency-Key records in the embedded database. A claim is one INSERT … ON CONFLICT that only
// replaces an expired or abandoned record, so concurrent requests with one key get one owner.
import type { IdempotencyRecord, IdempotencyStore } from '../../domain/ports.js';
import type { Database } from './database.js';
import { StatementCache } from './statements.js';

interface Row {
  org_id: string;
  key: string;
  fingerprint: string;
  state: 'in_flight' | 'done';
  status: number | null;
  body: string | null;
  created_at: number;
}

/** Expired records are purged on one claim in this many, keeping the table to about a day of keys. */
const PURGE_EVERY = 256;

export class SqliteIdempotencyStore implements IdempotencyStore {
  private readonly sql: StatementCache;
  private claims = 0;

  constructor(private readonly db: Database) {
    this.sql = new StatementCache(db);
  }

  async claim(
    record: { orgId: string; key: string; fingerprint: string; createdAt: Date },
    limits: { ttlMs: number; staleInFlightMs: number },
  ): Promise<IdempotencyRecord | null> {
    const now = record.createdAt.getTime();
    const claim = this.db.transaction((): Row | null => {
      if (++this.claims % PURGE_EVERY === 0) {
        this.sql.get('DELETE FROM idempotency_keys WHERE created_at < ?').run(now - limits.ttlMs);
      }
      const inserted = this.sql
        .get(
          `INSERT INTO idempotency_keys (org_id, key, fingerprint, state, status, body, created_at)
           VALUES (?, ?, ?, 'in_flight', NULL, NULL, ?)
           ON CONFLICT (org_id, key) DO UPDATE SET
             fingerprint = excluded.fingerprint, state = 'in_flight', status = NULL, body = NULL,
             created_at = excluded.created_at
           WHERE idempotency_keys.created_at < ?
              OR (idempotency_keys.state = 'in_flight' AND idempotency_keys.created_at < ?)`,
        )
        .run(
          record.orgId,
          record.key,
          record.fingerprint,
          now,
          now - limits.ttlMs,
          now - limits.staleInFlightMs,
        );
      if (inserted.changes > 0) return null;
      return this.sql
        .get<[string, string], Row>('SELECT * FROM idempotency_keys WHERE org_id = ? AND key = ?')
        .get(record.orgId, record.key) as Row;
    });
    const existing = claim.immediate();
    if (!existing) return null;
    return {
      orgId: existing.org_id,
      key: existing.key,
      fingerprint: existing.fingerprint,
      state: existing.state,
      status: existing.status,
      body: existing.body,
      createdAt: new Date(existing.created_at),
    };
  }

  async complete(orgId: string, key: string, status: number, body: string): Promise<void> {
    completeAnswer(this.sql, orgId, key, status, body);
  }

  async release(orgId: string, key: string): Promise<void> {
    this.sql
      .get(`DELETE FROM idempotency_keys WHERE org_id = ? AND key = ? AND state = 'in_flight'`)
      .run(orgId, key);
  }

  async purgeOrg(orgId: string): Promise<number> {
    return this.sql.get('DELETE FROM idempotency_keys WHERE org_id = ?').run(orgId).changes;
  }
}

/** Stores a key's response as done; synchronous, so a write's transaction can include it. */
export function completeAnswer(
  sql: StatementCache,
  orgId: string,
  key: string,
  status: number,
  body: string,
): void {
  sql
    .get(`UPDATE idempotency_keys SET state = 'done', status = ?, body = ? WHERE org_id = ? AND key = ?`)
    .run(status, body, orgId, key);
}
