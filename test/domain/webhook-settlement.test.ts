// The settle rule both webhook stores apply (domain/webhooks.ts): which outcome an attempt's
// result gives, and when the endpoint is disabled.
import { describe, expect, it } from 'vitest';
import { type AttemptResult, settlementOf } from '../../src/domain/webhooks.js';

const result = (kind: AttemptResult['kind']): AttemptResult => ({
  statusCode: kind === 'delivered' ? 200 : kind === 'gone' ? 410 : 503,
  durationMs: 5,
  error: null,
  kind,
});
const threshold = new Date('2026-11-21T00:00:00Z');
const plan = (next: Date | null) => ({ nextAttemptAt: next, disableIfFailingSince: threshold });
const recent = new Date('2026-11-26T00:00:00Z');
const longAgo = new Date('2026-11-20T00:00:00Z');

describe('settlementOf', () => {
  it('a 2xx delivers, whatever the plan', () => {
    expect(settlementOf(result('delivered'), null, plan(null))).toEqual({
      outcome: 'delivered',
      disable: null,
    });
  });

  it('a 410 disables the endpoint at once, even one that never failed before', () => {
    expect(settlementOf(result('gone'), recent, plan(recent))).toEqual({
      outcome: 'endpoint_disabled',
      disable: 'gone',
    });
  });

  it('a failure of an endpoint failing since before the threshold disables it', () => {
    expect(settlementOf(result('failed'), longAgo, plan(recent))).toEqual({
      outcome: 'endpoint_disabled',
      disable: 'failing',
    });
    expect(settlementOf(result('failed'), threshold, plan(recent)).disable).toBe('failing');
  });

  it('otherwise retries at the planned time, or gives up when there is none', () => {
    expect(settlementOf(result('failed'), recent, plan(recent))).toEqual({
      outcome: 'retrying',
      disable: null,
    });
    expect(settlementOf(result('failed'), recent, plan(null))).toEqual({ outcome: 'gave_up', disable: null });
  });
});
