// Requests per key per minute.

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the current window ends (≥ 1). */
  resetSeconds: number;
}

export interface RateLimiter {
  /** Counts one request for `key` against `limit` requests per 60 s window. */
  consume(key: string, limit: number): Promise<RateDecision>;
  close(): Promise<void>;
}
