// UsageStore on PostgreSQL: one counter row per org and UTC day, and one per org, day and
// partition bucket, bumped by atomic upserts, so every API process can count into the same rows
// without losing an increment.
import type { UsageStore } from '../../domain/ports.js';
import { cleanText } from '../../domain/text.js';
import type { PgDatabase } from './database.js';

export class PgUsageStore implements UsageStore {
  private readonly usage: string;
  private readonly buckets: string;

  constructor(private readonly db: PgDatabase) {
    this.usage = db.table('usage_daily');
    this.buckets = db.table('usage_partition_daily');
  }

  async increment(orgId: string, day: string, bucket: string | null = null): Promise<void> {
    const total = `INSERT INTO ${this.usage} AS u (org_id, day, count) VALUES ($1, $2, 1)
       ON CONFLICT (org_id, day) DO UPDATE SET count = u.count + 1`;
    if (bucket === null) {
      await this.db.query(total, [cleanText(orgId), cleanText(day)]);
      return;
    }
    // Both counters in one statement: one round trip, and neither without the other.
    await this.db.query(
      `WITH total AS (${total})
       INSERT INTO ${this.buckets} AS b (org_id, day, bucket, count) VALUES ($1, $2, $3, 1)
       ON CONFLICT (org_id, day, bucket) DO UPDATE SET count = b.count + 1`,
      [cleanText(orgId), cleanText(day), cleanText(bucket)],
    );
  }

  async countsBetween(
    orgId: string,
    fromDay: string,
    toDay: string,
    buckets?: readonly string[],
  ): Promise<Map<string, number>> {
    const params = [cleanText(orgId), cleanText(fromDay), cleanText(toDay)];
    const { rows } =
      buckets === undefined
        ? await this.db.query<{ day: string; count: string }>(
            `SELECT day, count FROM ${this.usage} WHERE org_id = $1 AND day BETWEEN $2 AND $3 ORDER BY day`,
            params,
          )
        : await this.db.query<{ day: string; count: string }>(
            `SELECT day, sum(count) AS count FROM ${this.buckets}
             WHERE org_id = $1 AND day BETWEEN $2 AND $3 AND bucket = ANY($4::text[])
             GROUP BY day ORDER BY day`,
            [...params, buckets.map(cleanText)],
          );
    return new Map(rows.map((r) => [r.day, Number(r.count)]));
  }

  async bucketTotals(orgId: string, fromDay: string, toDay: string): Promise<Map<string, number>> {
    const { rows } = await this.db.query<{ bucket: string; count: string }>(
      `SELECT bucket, sum(count) AS count FROM ${this.buckets}
       WHERE org_id = $1 AND day BETWEEN $2 AND $3 GROUP BY bucket ORDER BY bucket`,
      [cleanText(orgId), cleanText(fromDay), cleanText(toDay)],
    );
    return new Map(rows.map((r) => [r.bucket, Number(r.count)]));
  }

  async purgeOrg(orgId: string): Promise<number> {
    const r = await this.db.query(
      `WITH buckets AS (DELETE FROM ${this.buckets} WHERE org_id = $1) DELETE FROM ${this.usage} WHERE org_id = $1`,
      [cleanText(orgId)],
    );
    return r.rowCount ?? 0;
  }
}
