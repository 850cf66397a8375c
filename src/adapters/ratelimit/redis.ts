// RateLimiter whose counters live in Redis, shared by every API process of a scale-out deployment.
// rate-limiter-flexible's Redis store counts with one Lua script per request (SET NX EX, INCRBY,
// PTTL), which Redis runs atomically, so with rate_limit_rpm = N at most N requests of one org
// succeed per window however many processes serve them.
//
// Redis unavailable: a rate limiter must not take the API down with it, nor make requests wait.
// Commands fail fast (no offline queue, a short command timeout), and each failed decision is
// taken by an in-process fallback counter instead: every API process then enforces the limit on
// its own share, so an org gets at most N × processes per window until Redis answers again.
import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis } from 'rate-limiter-flexible';
import {
  type CountingStore,
  DEFAULT_WINDOW_SECONDS,
  type FixedWindowOptions,
  FixedWindowRateLimiter,
  UNREACHABLE_POINTS,
} from './fixed-window.js';

export interface RedisRateLimiterOptions extends FixedWindowOptions {
  /** redis:// or rediss:// URL. */
  url: string;
  /** Prefix of the counter keys, e.g. `<REDIS_PREFIX>:ratelimit`. */
  keyPrefix: string;
  /** A decision waits at most this long for Redis before the fallback takes it (default 500 ms). */
  commandTimeoutMs?: number;
  /** Called for every decision Redis could not take, and for connection errors. */
  onUnavailable?: (error: Error) => void;
}

export class RedisRateLimiter extends FixedWindowRateLimiter {
  private readonly client: Redis;

  constructor(opts: RedisRateLimiterOptions) {
    const windowSeconds = opts.windowSeconds ?? DEFAULT_WINDOW_SECONDS;
    const report = (error: Error) => {
      try {
        opts.onUnavailable?.(error);
      } catch {
        // Reporting must never turn into a failed request.
      }
    };
    const client = new Redis(opts.url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      commandTimeout: opts.commandTimeoutMs ?? 500,
      connectTimeout: 5_000,
    });
    // ioredis reconnects on its own; without a listener each failed attempt would be printed as
    // an unhandled error event.
    client.on('error', report);
    const shared = new RateLimiterRedis({
      storeClient: client,
      keyPrefix: opts.keyPrefix,
      // While disconnected, decide locally at once rather than wait for a reconnect.
      rejectIfRedisNotReady: true,
      points: UNREACHABLE_POINTS,
      duration: windowSeconds,
    });
    const fallback = new RateLimiterMemory({ points: UNREACHABLE_POINTS, duration: windowSeconds });
    const store: CountingStore = {
      async consume(key, points) {
        try {
          return await shared.consume(key, points);
        } catch (rejection) {
          // Not an Error: the library's result object, which FixedWindowRateLimiter reads.
          if (!(rejection instanceof Error)) throw rejection;
          report(rejection);
          return fallback.consume(key, points);
        }
      },
    };
    super(store);
    this.client = client;
  }

  /** Resolves once connected; rejects after timeoutMs (the limiter still works, on its fallback). */
  async ready(timeoutMs: number): Promise<void> {
    if (this.client.status === 'ready') return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.client.off('ready', onReady);
        reject(new Error(`Redis did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      timer.unref();
      const onReady = () => {
        clearTimeout(timer);
        resolve();
      };
      this.client.once('ready', onReady);
    });
  }

  /** Readiness: a round trip to Redis. */
  async ping(): Promise<void> {
    await this.client.ping();
  }

  async close(): Promise<void> {
    if (this.client.status === 'end') return;
    try {
      await this.client.quit();
    } catch {
      // Not connected: nothing to say goodbye to.
      this.client.disconnect();
    }
  }
}
