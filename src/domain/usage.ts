// The usage report: query counts per UTC day over the last 30 days, newest first, zero-filled.
import type { Clock, UsageStore } from './ports.js';

export const USAGE_PERIOD_DAYS = 30;
const DAY_MS = 86_400_000;

export interface UsageReport {
  org_id: string;
  period_days: number;
  total_queries: number;
  daily: { date: string; count: number }[];
  rate_limit_rpm: number;
}

export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

export class UsageService {
  constructor(
    private readonly usage: UsageStore,
    private readonly clock: Clock,
  ) {}

  recordQuery(orgId: string): Promise<void> {
    return this.usage.increment(orgId, utcDay(this.clock.now()));
  }

  async report(orgId: string, rateLimitRpm: number): Promise<UsageReport> {
    const today = Date.parse(utcDay(this.clock.now()));
    const days = Array.from({ length: USAGE_PERIOD_DAYS }, (_, i) => utcDay(new Date(today - i * DAY_MS)));
    const counts = await this.usage.countsBetween(orgId, days[days.length - 1]!, days[0]!);
    const daily = days.map((date) => ({ date, count: counts.get(date) ?? 0 }));
    return {
      org_id: orgId,
      period_days: USAGE_PERIOD_DAYS,
      total_queries: daily.reduce((sum, d) => sum + d.count, 0),
      daily,
      rate_limit_rpm: rateLimitRpm,
    };
  }
}
