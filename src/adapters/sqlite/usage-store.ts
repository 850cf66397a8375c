// UsageStore on SQLite: one counter row per org and UTC day, bumped by an atomic upsert.
import type { UsageStore } from '../../domain/ports.js';
import type { Database } from './database.js';
import { StatementCache } from './statements.js';

export class SqliteUsageStore implements UsageStore {
  private readonly sql: StatementCache;

  constructor(db: Database) {
    this.sql = new StatementCache(db);
  }

  async increment(orgId: string, day: string): Promise<void> {
    this.sql
      .get(
        `INSERT INTO usage_daily (org_id, day, count) VALUES (?, ?, 1)
         ON CONFLICT (org_id, day) DO UPDATE SET count = count + 1`,
      )
      .run(orgId, day);
  }

  async countsBetween(orgId: string, fromDay: string, toDay: string): Promise<Map<string, number>> {
    const rows = this.sql
      .get<[string, string, string], { day: string; count: number }>(
        'SELECT day, count FROM usage_daily WHERE org_id = ? AND day BETWEEN ? AND ? ORDER BY day',
      )
      .all(orgId, fromDay, toDay);
    return new Map(rows.map((r) => [r.day, r.count]));
  }

  async purgeOrg(orgId: string): Promise<number> {
    return this.sql.get('DELETE FROM usage_daily WHERE org_id = ?').run(orgId).changes;
  }
}
