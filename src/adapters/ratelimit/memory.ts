// In-process RateLimiter (embedded mode: one process serves every request, so its memory is the
// whole truth). Fixed window semantics are shared with the other stores via FixedWindowRateLimiter.
import { RateLimiterMemory } from 'rate-limiter-flexible';
import {
  DEFAULT_WINDOW_SECONDS,
  type FixedWindowOptions,
  FixedWindowRateLimiter,
  UNREACHABLE_POINTS,
} from './fixed-window.js';

export class MemoryRateLimiter extends FixedWindowRateLimiter {
  constructor(opts: FixedWindowOptions = {}) {
    super(
      new RateLimiterMemory({
        points: UNREACHABLE_POINTS,
        duration: opts.windowSeconds ?? DEFAULT_WINDOW_SECONDS,
      }),
    );
  }

  async close(): Promise<void> {}
}
