// The wait before a retry, for everything that retries (job queues, webhook deliveries, downloads,
// embedding requests, the vector stage's pauses, the HTTP client): a base doubled with each retry,
// up to a cap, and the "equal jitter" that keeps callers which failed together from retrying in
// step.

export interface Backoff {
  /** The wait before the first retry. */
  baseMs: number;
  /** No wait is longer. */
  maxMs: number;
}

/** The wait before retry `retry` (0 for the first; below 0 counts as 0): baseMs × 2^retry, at most maxMs. */
export function exponentialBackoffMs(retry: number, { baseMs, maxMs }: Backoff): number {
  return Math.min(maxMs, baseMs * 2 ** Math.max(0, retry));
}

/**
 * The wait after one of `previousMs` (0 when none came before): doubled, at least baseMs and
 * `atLeastMs` (a Retry-After), at most maxMs. For a caller that keeps its last wait rather than
 * counting retries.
 */
export function doubledBackoffMs(previousMs: number, { baseMs, maxMs }: Backoff, atLeastMs = 0): number {
  return Math.min(maxMs, Math.max(baseMs, previousMs * 2, atLeastMs));
}

/** "Equal jitter": half of `ms` kept, the other half scaled by `random()` (in [0, 1)). */
export function equalJitter(ms: number, random: () => number = Math.random): number {
  return ms * (0.5 + random() / 2);
}
