// GET /v1/org: the organisation a key belongs to (its name, which the console's header shows) and
// the key's own id and scopes; each key sees its own organisation only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock, type Harness, startHarness } from '../helpers/harness.js';

describe('GET /v1/org', () => {
  const clock = new FakeClock(new Date('2026-03-15T12:00:00.000Z'));
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ clock, worker: false });
  });
  afterAll(() => h.close());

  it('names the key’s organisation, its rate limit and the key’s scopes', async () => {
    const res = await h.request('GET', '/v1/org');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      org_id: h.orgA.orgId,
      name: 'org-a',
      rate_limit_rpm: 1000000,
      created_at: '2026-03-15T12:00:00.000Z',
      key: {
        key_id: h.orgA.keyId,
        scopes: ['ingest', 'query', 'read', 'write', 'webhooks', 'sources'],
        partitions: null,
        principals: null,
      },
    });
    const other = (await h.request('GET', '/v1/org', { key: h.orgB.apiKey })).json();
    expect(other).toMatchObject({ org_id: h.orgB.orgId, name: 'org-b', key: { key_id: h.orgB.keyId } });
  });

  it('follows a renamed organisation and a changed rate limit, and shows a narrower key’s scopes', async () => {
    await h.runtime.admin.updateOrg(h.orgA.orgId, { name: 'Acme Research', rateLimitRpm: 1200 });
    const issued = await h.runtime.admin.issueKey(h.orgA.orgId, {
      scopes: ['read', 'query'],
      partitions: ['support'],
    });
    const res = await h.request('GET', '/v1/org', { key: issued.api_key });
    expect(res.json()).toMatchObject({
      name: 'Acme Research',
      rate_limit_rpm: 1200,
      key: { key_id: issued.key_id, scopes: ['query', 'read'], partitions: ['support'] },
    });
  });

  it('is a 401 without a key and a 403 for a key without the read scope', async () => {
    expect((await h.request('GET', '/v1/org', { key: null })).statusCode).toBe(401);
    const queryOnly = await h.runtime.admin.issueKey(h.orgA.orgId, { scopes: ['query'] });
    const res = await h.request('GET', '/v1/org', { key: queryOnly.api_key });
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('insufficient_scope');
  });
});
