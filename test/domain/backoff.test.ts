// The retry wait every retrying part uses: doubling from the base (or from the last wait), held at
// the cap, and the equal jitter that keeps at least half of the wait.
import { describe, expect, it } from 'vitest';
import { doubledBackoffMs, equalJitter, exponentialBackoffMs } from '../../src/domain/backoff.js';
import { backoffMs as webhookBackoffMs } from '../../src/domain/webhook-dispatcher.js';

describe('exponential backoff', () => {
  it('doubles from the base with each retry and stops at the cap', () => {
    const waits = [0, 1, 2, 3, 4, 5].map((retry) =>
      exponentialBackoffMs(retry, { baseMs: 500, maxMs: 8_000 }),
    );
    expect(waits).toEqual([500, 1_000, 2_000, 4_000, 8_000, 8_000]);
  });

  it('waits the base before a retry numbered below zero', () => {
    expect(exponentialBackoffMs(-1, { baseMs: 250, maxMs: 10_000 })).toBe(250);
  });

  it('a wait kept from the last one doubles from the base, honours a longer floor and stops at the cap', () => {
    const backoff = { baseMs: 1_000, maxMs: 30_000 };
    const waits: number[] = [];
    let last = 0;
    for (let i = 0; i < 7; i += 1) {
      last = doubledBackoffMs(last, backoff);
      waits.push(last);
    }
    expect(waits).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]);
    expect(doubledBackoffMs(2_000, backoff, 10_000)).toBe(10_000);
    expect(doubledBackoffMs(2_000, backoff, 90_000)).toBe(30_000);
  });

  it('equal jitter keeps half of the wait and adds up to the other half', () => {
    expect(equalJitter(1_000, () => 0)).toBe(500);
    expect(equalJitter(1_000, () => 0.5)).toBe(750);
    expect(equalJitter(1_000, () => 0.999)).toBeCloseTo(999.5);
  });

  it('webhook deliveries: attempt 1 waits about the base, and no attempt count passes the cap', () => {
    expect(webhookBackoffMs(1, 1_000, 60_000, () => 0)).toBe(500);
    expect(webhookBackoffMs(3, 1_000, 60_000, () => 0.5)).toBe(3_000);
    expect(webhookBackoffMs(10_000, 1_000, 60_000, () => 0.999)).toBe(59_970);
  });
});
