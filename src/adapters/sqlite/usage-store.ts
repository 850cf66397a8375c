// UsageStore on SQLite: one counter row per org and UTC day, and one per org, day and partition
// bucket, bumped by atomic upserts.
import type { UsageStore } from '../../domain/ports.js';
import type { Database } from './database.js';
import { StatementCache } from './statements.js';

export class SqliteUsageStore implements UsageStore {
  private readonly sql: StatementCache;

  constructor(private readonly db: Database) {
    this.sql = new StatementCache(db);
  }

  async increment(orgId: string, day: string, bucket: string | null = null): Promise<void> {
    const total = this.sql.get(
      `INSERT INTO usage_daily (org_id, day, count) VALUES (?, ?, 1)
       ON CONFLICT (org_id, day) DO UPDATE SET count = count + 1`,
    );
    if (bucket === null) {
      total.run(orgId, day);
      return;
    }
    this.db.transaction(() => {
      total.run(orgId, day);
      this.sql
        .get(
          `INSERT INTO usage_partition_daily (org_id, day, bucket, count) VALUES (?, ?, ?, 1)
           ON CONFLICT (org_id, day, bucket) DO UPDATE SET count = count + 1`,
        )
        .run(orgId, day, bucket);
    })();
  }

  async countsBetween(
    orgId: string,
    fromDay: string,
    toDay: string,
    buckets?: readonly string[],
  ): Promise<Map<string, number>> {
    const rows =
      buckets === undefined
        ? this.sql
            .get<[string, string, string], { day: string; count: number }>(
              'SELECT day, count FROM usage_daily WHERE org_id = ? AND day BETWEEN ? AND ? ORDER BY day',
            )
            .all(orgId, fromDay, toDay)
        : this.sql
            .get<[string, string, string, string], { day: string; count: number }>(
              `SELECT day, sum(count) AS count FROM usage_partition_daily
               WHERE org_id = ? AND day BETWEEN ? AND ? AND bucket IN (SELECT value FROM json_each(?))
               GROUP BY day ORDER BY day`,
            )
            .all(orgId, fromDay, toDay, JSON.stringify(buckets));
    return new Map(rows.map((r) => [r.day, r.count]));
  }

  async bucketTotals(orgId: string, fromDay: string, toDay: string): Promise<Map<string, number>> {
    const rows = this.sql
      .get<[string, string, string], { bucket: string; count: number }>(
        `SELECT bucket, sum(count) AS count FROM usage_partition_daily
         WHERE org_id = ? AND day BETWEEN ? AND ? GROUP BY bucket ORDER BY bucket`,
      )
      .all(orgId, fromDay, toDay);
    return new Map(rows.map((r) => [r.bucket, r.count]));
  }

  async purgeOrg(orgId: string): Promise<number> {
    this.sql.get('DELETE FROM usage_partition_daily WHERE org_id = ?').run(orgId);
    return this.sql.get('DELETE FROM usage_daily WHERE org_id = ?').run(orgId).changes;
  }
}
