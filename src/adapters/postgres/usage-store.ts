// UsageStore on PostgreSQL: one counter row per org and UTC day, bumped by an atomic upsert, so
// every API process can count into the same row without losing an increment.
import type { UsageStore } from '../../domain/ports.js';
import { cleanText } from '../../domain/text.js';
import type { PgDatabase } from './database.js';

export class PgUsageStore implements UsageStore {
  private readonly usage: string;

  constructor(private readonly db: PgDatabase) {
    this.usage = db.table('usage_daily');
  }

  async increment(orgId: string, day: string): Promise<void> {
    await this.db.query(
      `INSERT INTO ${this.usage} AS u (org_id, day, count) VALUES ($1, $2, 1)
       ON CONFLICT (org_id, day) DO UPDATE SET count = u.count + 1`,
      [cleanText(orgId), cleanText(day)],
    );
  }

  async countsBetween(orgId: string, fromDay: string, toDay: string): Promise<Map<string, number>> {
    const { rows } = await this.db.query<{ day: string; count: string }>(
      `SELECT day, count FROM ${this.usage} WHERE org_id = $1 AND day BETWEEN $2 AND $3 ORDER BY day`,
      [cleanText(orgId), cleanText(fromDay), cleanText(toDay)],
    );
    return new Map(rows.map((r) => [r.day, Number(r.count)]));
  }

  async purgeOrg(orgId: string): Promise<number> {
    const r = await this.db.query(`DELETE FROM ${this.usage} WHERE org_id = $1`, [cleanText(orgId)]);
    return r.rowCount ?? 0;
  }
}
