// The same auth and tenancy checks on every /v1 route: no key, malformed key, unknown key,
// revoked key, key in the query string, and another org's document.
import { randomUUID } from 'node:crypto';
import diagnostics from 'node:diagnostics_channel';
import type { FastifyInstance, RouteOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../helpers/harness.js';

const ROUTES: { method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE'; url: string; body?: unknown }[] = [
  { method: 'POST', url: '/v1/ingest', body: { documents: [{ text: 'hello' }] } },
  { method: 'POST', url: '/v1/ingest/url', body: { url: 'https://example.com/a.pdf' } },
  { method: 'POST', url: '/v1/ingest/file' },
  { method: 'GET', url: `/v1/documents/${randomUUID()}` },
  { method: 'GET', url: '/v1/documents' },
  { method: 'GET', url: `/v1/documents/${randomUUID()}/chunks` },
  { method: 'GET', url: `/v1/documents/${randomUUID()}/content` },
  { method: 'GET', url: `/v1/documents/${randomUUID()}/file` },
  { method: 'PATCH', url: `/v1/documents/${randomUUID()}`, body: { metadata: { team: 'x' } } },
  { method: 'DELETE', url: `/v1/documents/${randomUUID()}` },
  { method: 'POST', url: '/v1/documents/delete', body: { filter: { team: 'x' } } },
  { method: 'PUT', url: `/v1/documents/${randomUUID()}/content`, body: { text: 'new text' } },
  { method: 'POST', url: `/v1/documents/${randomUUID()}/reprocess`, body: {} },
  { method: 'POST', url: '/v1/query', body: { query: 'hello' } },
  {
    method: 'POST',
    url: '/v1/evaluations',
    body: { queries: [{ query: 'hello', relevant: [{ external_id: 'greeting' }] }] },
  },
  { method: 'GET', url: '/v1/evaluations' },
  { method: 'GET', url: '/v1/evaluations/eval_0123456789abcdef0123456789abcdef' },
  { method: 'POST', url: '/v1/sources', body: { type: 's3', name: 'b', config: { bucket: 'b' } } },
  { method: 'GET', url: '/v1/sources' },
  { method: 'GET', url: '/v1/sources/src_0123456789abcdef0123456789abcdef' },
  { method: 'PATCH', url: '/v1/sources/src_0123456789abcdef0123456789abcdef', body: { name: 'c' } },
  { method: 'DELETE', url: '/v1/sources/src_0123456789abcdef0123456789abcdef' },
  { method: 'POST', url: '/v1/sources/src_0123456789abcdef0123456789abcdef/sync' },
  { method: 'GET', url: '/v1/sources/src_0123456789abcdef0123456789abcdef/runs' },
  { method: 'GET', url: '/v1/partitions' },
  { method: 'DELETE', url: '/v1/partitions/support' },
  { method: 'GET', url: '/v1/usage' },
  { method: 'GET', url: '/v1/org' },
  { method: 'POST', url: '/v1/webhooks', body: { url: 'https://hooks.example.com/a' } },
  { method: 'GET', url: '/v1/webhooks' },
  { method: 'GET', url: '/v1/webhooks/wh_0123456789abcdef0123456789abcdef' },
  { method: 'DELETE', url: '/v1/webhooks/wh_0123456789abcdef0123456789abcdef' },
  { method: 'POST', url: '/v1/webhooks/wh_0123456789abcdef0123456789abcdef/test' },
  { method: 'GET', url: '/v1/webhooks/wh_0123456789abcdef0123456789abcdef/deliveries' },
];

/**
 * Every route an app registers, seen as Fastify registers it: the channel hands over each new
 * instance before its routes are added, so none can be missed.
 */
const registered: { method: string; url: string }[] = [];
const onInit = ({ fastify }: { fastify: FastifyInstance }) => {
  fastify.addHook('onRoute', (route: RouteOptions) => {
    for (const method of [route.method].flat()) registered.push({ method, url: route.url });
  });
};

describe('authentication on every route', () => {
  let h: Harness;
  beforeAll(async () => {
    diagnostics.subscribe('fastify.initialization', onInit as (message: unknown) => void);
    try {
      h = await startHarness({ worker: false });
    } finally {
      diagnostics.unsubscribe('fastify.initialization', onInit as (message: unknown) => void);
    }
  });
  afterAll(() => h.close());

  it('covers every /v1 route the app has: a new route must be added to ROUTES', () => {
    const pattern = (url: string) =>
      url
        .replace(/[0-9a-f-]{36}|wh_[0-9a-f]{32}|eval_[0-9a-f]{32}|src_[0-9a-f]{32}/, ':id')
        .replace(/^\/v1\/partitions\/[a-z0-9_-]+$/, '/v1/partitions/:name');
    const listed = new Set(ROUTES.map((r) => `${r.method} ${pattern(r.url)}`));
    const v1 = registered
      .filter((r) => r.url.startsWith('/v1/') && r.method !== 'HEAD' && r.method !== 'OPTIONS')
      .map((r) => `${r.method} ${r.url}`);
    expect(v1.length).toBeGreaterThanOrEqual(ROUTES.length);
    expect(new Set(v1)).toEqual(listed);
  });

  const badKeys: [string, string | null][] = [
    ['no Authorization header', null],
    ['a malformed key', 'not-a-key'],
    ['an unknown well-formed key', `dix_${'A'.repeat(43)}`],
  ];

  for (const route of ROUTES) {
    for (const [label, key] of badKeys) {
      it(`${route.method} ${route.url.replace(/[0-9a-f-]{36}/, ':id')} with ${label} → 401 problem`, async () => {
        const res = await h.request(route.method, route.url, { key, body: route.body });
        expect(res.statusCode).toBe(401);
        expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
        expect(res.json()).toMatchObject({ status: 401, code: 'unauthorized' });
      });
    }
  }

  it('a revoked key stops working at once', async () => {
    const issued = await h.runtime.admin.issueKey(h.orgA.orgId);
    const before = await h.request('GET', '/v1/usage', { key: issued.api_key });
    expect(before.statusCode).toBe(200);
    expect(await h.runtime.admin.revokeKey(issued.key_id)).toBe(true);
    const after = await h.request('GET', '/v1/usage', { key: issued.api_key });
    expect(after.statusCode).toBe(401);
  });

  it('a key in the query string is never accepted', async () => {
    const res = await h.request('GET', `/v1/usage?api_key=${h.orgA.apiKey}`, { key: null });
    expect(res.statusCode).toBe(400);
    const withHeader = await h.request('GET', `/v1/usage?api_key=${h.orgA.apiKey}`);
    expect(withHeader.statusCode).toBe(400);
  });

  it('the Bearer scheme is required (Basic is refused)', async () => {
    const res = await h.request('GET', '/v1/usage', {
      key: null,
      headers: { authorization: `Basic ${h.orgA.apiKey}` },
    });
    expect(res.statusCode).toBe(401);
  });
});

describe('tenancy', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  it("org A gets the same 404 for org B's document as for a missing one, and B is untouched", async () => {
    const ingested = await h.request('POST', '/v1/ingest', {
      key: h.orgB.apiKey,
      body: { documents: [{ text: 'tenancy secret walrus sentence', external_id: 'tenancy-b' }] },
    });
    const bDoc = ingested.json().document_ids[0] as string | undefined;
    await h.waitForDone(h.orgB, [bDoc!]);
    const missing = randomUUID();

    const strip = (body: Record<string, unknown>) => ({ ...body, request_id: undefined, detail: undefined });
    const getOther = await h.request('GET', `/v1/documents/${bDoc}`);
    const getMissing = await h.request('GET', `/v1/documents/${missing}`);
    expect(getOther.statusCode).toBe(404);
    expect(getMissing.statusCode).toBe(404);
    expect(strip(getOther.json())).toEqual(strip(getMissing.json()));
    expect(getOther.json().detail.replace(bDoc!, 'ID')).toBe(getMissing.json().detail.replace(missing, 'ID'));

    const delOther = await h.request('DELETE', `/v1/documents/${bDoc}`);
    expect(delOther.statusCode).toBe(404);

    // The routes that make a new version: another org's id is answered as a missing one.
    for (const [method, path, body] of [
      ['PUT', 'content', { text: 'overwritten by org A' }],
      ['PUT', 'content', { url: 'https://example.com/a.pdf' }],
      ['POST', 'reprocess', { chunk_size: 256, chunk_overlap: 0 }],
    ] as const) {
      const other = await h.request(method, `/v1/documents/${bDoc}/${path}`, { body });
      const none = await h.request(method, `/v1/documents/${missing}/${path}`, { body });
      expect(other.statusCode, `${method} ${path}`).toBe(404);
      expect(strip(other.json())).toEqual(strip(none.json()));
      expect(other.json().detail.replace(bDoc!, 'ID')).toBe(none.json().detail.replace(missing, 'ID'));
    }
    const listByExternal = await h.request('GET', '/v1/documents?external_id=tenancy-b');
    expect(listByExternal.json().documents).toEqual([]);

    const list = await h.request('GET', `/v1/documents?ids=${bDoc}`);
    expect(list.json().documents).toEqual([]);

    const query = await h.request('POST', '/v1/query', { body: { query: 'walrus', document_ids: [bDoc] } });
    expect(query.json().results).toEqual([]);

    const stillThere = await h.request('GET', `/v1/documents/${bDoc}`, { key: h.orgB.apiKey });
    expect(stillThere.statusCode).toBe(200);
    expect(stillThere.json()).toMatchObject({ status: 'ready', version: 1, pending_version: null });
    const bQuery = await h.request('POST', '/v1/query', { key: h.orgB.apiKey, body: { query: 'walrus' } });
    expect(bQuery.json().results).toHaveLength(1);
  });
});

describe('rate limiting', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ worker: false, env: { UNAUTHENTICATED_RATE_LIMIT_RPM: '5' } });
  });
  afterAll(() => h.close());

  it('limits an org across every endpoint, with headers, and leaves other orgs alone', async () => {
    await h.runtime.admin.setRateLimit(h.orgA.orgId, 5);
    const routes = ['/v1/usage', '/v1/documents', '/v1/usage', '/v1/documents', '/v1/usage'];
    for (const [i, url] of routes.entries()) {
      const res = await h.request('GET', url);
      expect(res.statusCode).toBe(200);
      expect(res.headers['ratelimit-policy']).toBe('"org";q=5;w=60');
      expect(res.headers.ratelimit).toMatch(new RegExp(`^"org";r=${4 - i};t=\\d+$`));
    }
    const limited = await h.request('POST', '/v1/query', { body: { query: 'anything' } });
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toMatchObject({ code: 'rate_limited', status: 429 });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(limited.headers.ratelimit).toMatch(/r=0/);

    const other = await h.request('GET', '/v1/usage', { key: h.orgB.apiKey });
    expect(other.statusCode).toBe(200);
  });

  it('a 429 query is not counted as usage', async () => {
    // org A is over its limit from the previous test: its query is refused and not counted.
    const refused = await h.request('POST', '/v1/query', { body: { query: 'x' } });
    expect(refused.statusCode).toBe(429);
    await h.runtime.admin.setRateLimit(h.orgA.orgId, 1000);
    const counted = await h.request('POST', '/v1/query', { body: { query: 'x' } });
    expect(counted.statusCode).toBe(200);
    const usage = await h.request('GET', '/v1/usage');
    expect(usage.json().total_queries).toBe(1);
    expect(usage.json().rate_limit_rpm).toBe(1000);
  });

  it('unauthenticated requests are limited per client address', async () => {
    const codes: number[] = [];
    for (let i = 0; i < 7; i++)
      codes.push((await h.request('GET', '/v1/usage', { key: 'wrong' })).statusCode);
    expect(codes.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(codes.slice(5)).toEqual([429, 429]);
  });
});
