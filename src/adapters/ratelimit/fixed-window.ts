// The one way every rate-limiter-flexible store is used here: a fixed 60 s window per key that
// counts every request, with the org's limit applied when deciding rather than when counting.
// Limits differ per org and change at run time, so the store is built with an unreachable
// `points` and the decision compares the count with the limit of the moment.
import type { RateDecision, RateLimiter } from '../../domain/ports.js';

/** The part of rate-limiter-flexible's limiters (memory, SQLite, Redis…) this adapter needs. */
export interface CountingStore {
  consume(key: string, points?: number): Promise<{ consumedPoints: number; msBeforeNext: number }>;
}

/** So high no key reaches it: the store itself never rejects. */
export const UNREACHABLE_POINTS = Number.MAX_SAFE_INTEGER;
export const DEFAULT_WINDOW_SECONDS = 60;

export interface FixedWindowOptions {
  /** Window length; 60 s in production, shorter in tests. */
  windowSeconds?: number;
}

export abstract class FixedWindowRateLimiter implements RateLimiter {
  protected constructor(private readonly store: CountingStore) {}

  async consume(key: string, limit: number): Promise<RateDecision> {
    let res: { consumedPoints: number; msBeforeNext: number };
    try {
      res = await this.store.consume(key, 1);
    } catch (rejection) {
      // rate-limiter-flexible rejects with its result object when points run out; with
      // UNREACHABLE_POINTS that cannot happen, so anything thrown is a store failure.
      if (rejection instanceof Error) throw rejection;
      res = rejection as { consumedPoints: number; msBeforeNext: number };
    }
    const allowed = res.consumedPoints <= limit;
    return {
      allowed,
      limit,
      remaining: Math.max(0, limit - res.consumedPoints),
      resetSeconds: Math.max(1, Math.ceil(res.msBeforeNext / 1000)),
    };
  }

  abstract close(): Promise<void>;
}
