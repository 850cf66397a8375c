// The circuit breaker on a fake clock: it opens after the configured run of consecutive failures,
// refuses calls without making them while open, lets exactly one probe through once the cool-down
// is over, and that probe decides; an answer that is not an outage (a 4xx) resets the count.
import { describe, expect, it } from 'vitest';
import { CircuitBreaker, CircuitOpenError, type CircuitState } from '../../src/domain/circuit-breaker.js';
import type { Clock } from '../../src/domain/ports.js';

class StepClock implements Clock {
  at = Date.parse('2026-03-15T12:00:00Z');
  now(): Date {
    return new Date(this.at);
  }
}

class Outage extends Error {}
class Refusal extends Error {}
const isOutage = (error: unknown) => error instanceof Outage;

function setup(failureThreshold = 3, coolDownMs = 10_000) {
  const clock = new StepClock();
  const changes: Array<[CircuitState, CircuitState]> = [];
  const breaker = new CircuitBreaker('embeddings', clock, {
    failureThreshold,
    coolDownMs,
    onStateChange: (to, from) => changes.push([from, to]),
  });
  let calls = 0;
  const call = (outcome: 'ok' | 'outage' | 'refusal' | Promise<void>) =>
    breaker.run(async () => {
      calls++;
      if (outcome instanceof Promise) return outcome;
      if (outcome === 'outage') throw new Outage('down');
      if (outcome === 'refusal') throw new Refusal('400');
      return undefined;
    }, isOutage);
  return { clock, breaker, changes, call, calls: () => calls };
}

describe('CircuitBreaker', () => {
  it('opens after N consecutive failures and then refuses calls without making them', async () => {
    const { breaker, call, calls, changes } = setup(3);
    for (let i = 0; i < 2; i++) await expect(call('outage')).rejects.toBeInstanceOf(Outage);
    expect(breaker.state()).toBe('closed');
    await expect(call('outage')).rejects.toBeInstanceOf(Outage);
    expect(breaker.state()).toBe('open');
    expect(changes).toEqual([['closed', 'open']]);
    const refused = await call('ok').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(CircuitOpenError);
    expect((refused as CircuitOpenError).retryAfterMs).toBe(10_000);
    expect(calls()).toBe(3);
  });

  it('a success or a non-outage answer resets the count of consecutive failures', async () => {
    const { breaker, call } = setup(3);
    await expect(call('outage')).rejects.toThrow();
    await expect(call('outage')).rejects.toThrow();
    await call('ok');
    await expect(call('outage')).rejects.toThrow();
    await expect(call('outage')).rejects.toThrow();
    await expect(call('refusal')).rejects.toBeInstanceOf(Refusal);
    await expect(call('outage')).rejects.toThrow();
    await expect(call('outage')).rejects.toThrow();
    expect(breaker.state()).toBe('closed');
    expect(breaker.consecutiveFailures()).toBe(2);
  });

  it('after the cool-down one probe goes through; its success closes the breaker', async () => {
    const { clock, breaker, call, calls, changes } = setup(1, 10_000);
    await expect(call('outage')).rejects.toThrow();
    clock.at += 9_999;
    expect(breaker.state()).toBe('open');
    await expect(call('ok')).rejects.toBeInstanceOf(CircuitOpenError);
    clock.at += 1;
    expect(breaker.state()).toBe('half-open');
    let answer!: () => void;
    const probe = call(new Promise<void>((resolve) => (answer = resolve)));
    // While the probe is out, every other call is refused at once.
    const refused = await call('ok').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(CircuitOpenError);
    expect((refused as CircuitOpenError).retryAfterMs).toBe(0);
    answer();
    await probe;
    expect(breaker.state()).toBe('closed');
    expect(calls()).toBe(2);
    expect(changes).toEqual([
      ['closed', 'open'],
      ['open', 'half-open'],
      ['half-open', 'closed'],
    ]);
  });

  it('a failed probe opens the breaker for another whole cool-down', async () => {
    const { clock, breaker, call } = setup(2, 10_000);
    await expect(call('outage')).rejects.toThrow();
    await expect(call('outage')).rejects.toThrow();
    clock.at += 10_000;
    await expect(call('outage')).rejects.toBeInstanceOf(Outage);
    expect(breaker.state()).toBe('open');
    clock.at += 5_000;
    const refused = await call('ok').catch((e: unknown) => e);
    expect((refused as CircuitOpenError).retryAfterMs).toBe(5_000);
  });

  it('late failures of calls let through before it opened do not restart the cool-down', async () => {
    const { clock, breaker, call } = setup(1, 10_000);
    let fail!: (error: Error) => void;
    const slow = breaker.run(() => new Promise<void>((_resolve, reject) => (fail = reject)), isOutage);
    await expect(call('outage')).rejects.toThrow();
    clock.at += 6_000;
    fail(new Outage('late'));
    await expect(slow).rejects.toBeInstanceOf(Outage);
    clock.at += 4_000;
    expect(breaker.state()).toBe('half-open');
  });
});
