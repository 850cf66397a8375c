// The usage report: query counts per UTC day over the last 30 days, newest first, zero-filled,
// and on request a breakdown by partition (the report's fields are otherwise exactly those the
// interface names, for an org that uses partitions too).
//
// Each query is counted once in the org's total and once in one bucket of the breakdown, so the
// buckets add up to the total: the bucket is the partition's name when the query ran over one
// partition, SEVERAL_PARTITIONS when over two or more (named, or the partitions of a key limited
// to them), EVERY_PARTITION when over the whole org (none named by a key that sees them all). Only
// the first two are stored; the third is the rest of the total, so an org that never names a
// partition writes no more than the total.
import { ERRORS } from './errors.js';
import { ALL_PARTITIONS, canSee, checkPartitionName, type DocumentAccess } from './partitions.js';
import type { Clock, UsageStore } from './ports.js';

export const USAGE_PERIOD_DAYS = 30;
const DAY_MS = 86_400_000;

/** The bucket of queries over two or more partitions (no partition can be named so). */
export const SEVERAL_PARTITIONS = '(several)';
/** The bucket of queries over every partition of the org. */
export const EVERY_PARTITION = '(all)';

export interface UsageReport {
  org_id: string;
  period_days: number;
  total_queries: number;
  daily: { date: string; count: number }[];
  rate_limit_rpm: number;
  /**
   * The window's queries by bucket, by name; buckets without queries left out (but a partition
   * asked for). Only when asked for: by partition, or for one partition.
   */
  partitions?: { partition: string; total_queries: number }[];
}

export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/** The stored bucket of a query over these partitions; null: the whole org (EVERY_PARTITION, not stored). */
export function usageBucket(partitions: readonly string[] | null): string | null {
  if (partitions === null) return null;
  return partitions.length === 1 ? (partitions[0] ?? null) : SEVERAL_PARTITIONS;
}

export class UsageService {
  constructor(
    private readonly usage: UsageStore,
    private readonly clock: Clock,
  ) {}

  /** Counts one query that ran over `partitions` (null: every partition of the org). */
  recordQuery(orgId: string, partitions: readonly string[] | null = null): Promise<void> {
    return this.usage.increment(orgId, utcDay(this.clock.now()), usageBucket(partitions));
  }

  /**
   * The org's report. Given `partition`, that partition's queries only (403 partition_forbidden
   * when the key may not see it), with its entry of the breakdown; `byPartition` adds the
   * breakdown to the whole report. A key limited to partitions sees the queries of its own
   * partitions only: the total is theirs, and queries over several partitions are left out.
   */
  async report(
    orgId: string,
    rateLimitRpm: number,
    access: DocumentAccess = ALL_PARTITIONS,
    partition?: string,
    byPartition = false,
  ): Promise<UsageReport> {
    const today = Date.parse(utcDay(this.clock.now()));
    const days = Array.from({ length: USAGE_PERIOD_DAYS }, (_, i) => utcDay(new Date(today - i * DAY_MS)));
    const from = days[days.length - 1]!;
    const to = days[0]!;
    let only: readonly string[] | undefined;
    if (partition !== undefined) {
      checkPartitionName(partition, '/query/partition');
      if (!canSee(access, { partition })) throw ERRORS.partitionForbidden(partition);
      only = [partition];
    } else if (access.partitions !== null) {
      only = access.partitions;
    }
    const counts = await this.usage.countsBetween(orgId, from, to, only);
    const daily = days.map((date) => ({ date, count: counts.get(date) ?? 0 }));
    const total = daily.reduce((sum, d) => sum + d.count, 0);
    const report: UsageReport = {
      org_id: orgId,
      period_days: USAGE_PERIOD_DAYS,
      total_queries: total,
      daily,
      rate_limit_rpm: rateLimitRpm,
    };
    if (!byPartition && partition === undefined) return report;
    const buckets = await this.usage.bucketTotals(orgId, from, to);
    let breakdown: UsageReport['partitions'];
    if (only === undefined) {
      const restricted = [...buckets.values()].reduce((sum, n) => sum + n, 0);
      breakdown = [...buckets, [EVERY_PARTITION, total - restricted] as const]
        .filter(([, count]) => count > 0)
        .map(([name, count]) => ({ partition: name, total_queries: count }));
    } else {
      breakdown = only
        .map((name) => ({ partition: name, total_queries: buckets.get(name) ?? 0 }))
        .filter((entry) => partition !== undefined || entry.total_queries > 0);
    }
    breakdown.sort((a, b) => (a.partition < b.partition ? -1 : a.partition > b.partition ? 1 : 0));
    return { ...report, partitions: breakdown };
  }
}
