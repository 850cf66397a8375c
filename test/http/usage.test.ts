// GET /v1/usage with a fake clock: 30 entries, newest first, zero-filled, window edges.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock, type Harness, startHarness } from '../helpers/harness.js';

describe('GET /v1/usage', () => {
  const clock = new FakeClock(new Date('2026-03-31T10:00:00.000Z'));
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ clock, worker: false });
  });
  afterAll(() => h.close());

  const query = () => h.request('POST', '/v1/query', { body: { query: 'anything' } });

  it('has exactly the spec fields, 30 days newest first, zero days included', async () => {
    const res = await h.request('GET', '/v1/usage');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual([
      'daily',
      'org_id',
      'period_days',
      'rate_limit_rpm',
      'total_queries',
    ]);
    expect(body).toMatchObject({
      org_id: h.orgA.orgId,
      period_days: 30,
      total_queries: 0,
      rate_limit_rpm: 1000000,
    });
    expect(body.daily).toHaveLength(30);
    expect(body.daily[0]).toEqual({ date: '2026-03-31', count: 0 });
    expect(body.daily[29]).toEqual({ date: '2026-03-02', count: 0 });
    for (let i = 1; i < 30; i++) expect(body.daily[i - 1].date > body.daily[i].date).toBe(true);
  });

  it('counts per UTC day and drops queries older than the window', async () => {
    clock.set('2026-03-01T23:59:59.000Z'); // 30 days before 2026-03-31: outside the window
    await query();
    clock.set('2026-03-02T00:00:00.000Z'); // 29 days before: the oldest day inside
    await query();
    await query();
    clock.set('2026-03-30T23:59:59.999Z');
    await query();
    clock.set('2026-03-31T00:00:00.000Z');
    await query();
    await query();
    await query();

    const body = (await h.request('GET', '/v1/usage')).json();
    expect(body.total_queries).toBe(6);
    expect(body.daily[0]).toEqual({ date: '2026-03-31', count: 3 });
    expect(body.daily[1]).toEqual({ date: '2026-03-30', count: 1 });
    expect(body.daily[29]).toEqual({ date: '2026-03-02', count: 2 });
    expect(body.daily.filter((d: { count: number }) => d.count > 0)).toHaveLength(3);

    clock.set('2026-04-01T00:00:01.000Z'); // a day later, 03-02 leaves the window
    const next = (await h.request('GET', '/v1/usage')).json();
    expect(next.daily[0]).toEqual({ date: '2026-04-01', count: 0 });
    expect(next.daily[29]).toEqual({ date: '2026-03-03', count: 0 });
    expect(next.total_queries).toBe(4);
  });

  it('reports the current rate limit, which changes at once', async () => {
    await h.runtime.admin.setRateLimit(h.orgB.orgId, 42);
    const body = (await h.request('GET', '/v1/usage', { key: h.orgB.apiKey })).json();
    expect(body.rate_limit_rpm).toBe(42);
    expect(body.total_queries).toBe(0);
  });
});
