// Per-org query counts by day, for the usage report.

export interface UsageStore {
  /**
   * Adds 1 to the org's count for `day` (YYYY-MM-DD, UTC) and, given a `bucket` (domain/usage.ts
   * usageBucket: the partitions a query was restricted to), to that bucket's count too, in one
   * atomic step.
   */
  increment(orgId: string, day: string, bucket?: string | null): Promise<void>;
  /**
   * Counts for days in [fromDay, toDay] inclusive; days without queries may be absent. Given
   * `buckets`, the sum of those buckets' counts instead of the org's total.
   */
  countsBetween(
    orgId: string,
    fromDay: string,
    toDay: string,
    buckets?: readonly string[],
  ): Promise<Map<string, number>>;
  /** Each bucket's count over the days in [fromDay, toDay]; buckets without queries may be absent. */
  bucketTotals(orgId: string, fromDay: string, toDay: string): Promise<Map<string, number>>;
  /** Forgets every count of the org; how many day rows (of the org's totals) there were. */
  purgeOrg(orgId: string): Promise<number>;
}
