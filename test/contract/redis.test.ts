// Runs the RateLimiter contract against RedisRateLimiter on a real Redis, each test under a key
// prefix of its own that is deleted afterwards; plus what happens without Redis: decisions fall
// back to in-process counting at once, never a hang and never an error.
import { describe, expect, it } from 'vitest';
import { RedisRateLimiter } from '../../src/adapters/ratelimit/redis.js';
import { checkServices, deleteRedisPrefix, describeScaleOut, freshPrefix } from '../scale-out/services.js';
import { rateLimiterContract } from './rate-limiter.contract.js';

const services = await checkServices(['REDIS_URL']);
const url = services.urls.REDIS_URL ?? '';

describeScaleOut('Redis adapters', services, () => {
  rateLimiterContract('RedisRateLimiter', async ({ windowSeconds }) => {
    const prefix = freshPrefix();
    const limiter = new RedisRateLimiter({ url, keyPrefix: `${prefix}:ratelimit`, windowSeconds });
    await limiter.ready(5000);
    return {
      limiter,
      async close() {
        await limiter.close();
        await deleteRedisPrefix(url, prefix);
      },
    };
  });

  describe('Redis specifics', () => {
    it('shares one count between limiters of different processes', async () => {
      const prefix = freshPrefix();
      const a = new RedisRateLimiter({ url, keyPrefix: `${prefix}:ratelimit` });
      const b = new RedisRateLimiter({ url, keyPrefix: `${prefix}:ratelimit` });
      try {
        await Promise.all([a.ready(5000), b.ready(5000)]);
        const decisions = await Promise.all(
          Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? a : b).consume('org:shared', 25)),
        );
        expect(decisions.filter((d) => d.allowed)).toHaveLength(25);
      } finally {
        await Promise.all([a.close(), b.close()]);
        await deleteRedisPrefix(url, prefix);
      }
    });
  });
});

describe('Redis unreachable (rate limiter)', () => {
  it('decides from an in-process count at once and reports the outage', async () => {
    const reported: Error[] = [];
    // Port 1 on loopback: nothing listens.
    const limiter = new RedisRateLimiter({
      url: 'redis://127.0.0.1:1',
      keyPrefix: 'unreachable:ratelimit',
      onUnavailable: (e) => reported.push(e),
    });
    try {
      const t0 = Date.now();
      const decisions = [];
      for (let i = 0; i < 4; i++) decisions.push(await limiter.consume('org:x', 3));
      expect(Date.now() - t0).toBeLessThan(1000);
      expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false]);
      expect(decisions[0]).toMatchObject({ limit: 3, remaining: 2 });
      expect(reported.length).toBeGreaterThan(0);
      await expect(limiter.ping()).rejects.toThrow();
    } finally {
      await limiter.close();
    }
  });
});
