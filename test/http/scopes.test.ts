// Key scopes and expiry. The matrix: every /v1 route the app registers (read from the app as it
// builds, so a new route is covered without touching this file) × every scope: a key with only
// that scope gets 403 `insufficient_scope` unless it is the scope the route needs, and gets past
// auth when it is. A route that declares no scope stops the app from starting.
import { randomUUID } from 'node:crypto';
import diagnostics from 'node:diagnostics_channel';
import Fastify, { type FastifyInstance, type RouteOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES, type Scope } from '../../src/domain/scopes.js';
import { authenticatedScope } from '../../src/http/plugins/authenticated.js';
import { FakeClock, type Harness, startHarness } from '../helpers/harness.js';

interface RegisteredRoute {
  method: string;
  url: string;
  scope: unknown;
}

const registered: RegisteredRoute[] = [];
const onInit = ({ fastify }: { fastify: FastifyInstance }) => {
  fastify.addHook('onRoute', (route: RouteOptions) => {
    for (const method of [route.method].flat()) {
      registered.push({ method, url: route.url, scope: (route.config as { scope?: unknown })?.scope });
    }
  });
};

/**
 * The rule every /v1 route's scope follows (docs/API.md, "Scopes and expiring keys"). A route it cannot place fails the
 * test: decide its scope, then add it here.
 */
function expectedScope(method: string, url: string): Scope | null {
  if (url.startsWith('/v1/webhooks')) return 'webhooks';
  if (url.startsWith('/v1/sources')) return 'sources';
  if (method === 'POST' && url.startsWith('/v1/ingest')) return 'ingest';
  if (method === 'POST' && url === '/v1/query') return 'query';
  // An evaluation is a batch of queries, and its answer shows what those queries' answers would.
  if (url.startsWith('/v1/evaluations')) return 'query';
  if (method === 'GET') return 'read';
  if (method === 'PATCH' || method === 'DELETE') return 'write';
  if (method === 'POST' && url === '/v1/documents/delete') return 'write';
  // A new version of a document is new content to process, as an ingest is.
  if (method === 'PUT' && url === '/v1/documents/:id/content') return 'ingest';
  if (method === 'POST' && url === '/v1/documents/:id/reprocess') return 'ingest';
  return null;
}

describe('key scopes', () => {
  let h: Harness;
  const clock = new FakeClock();
  const keyWith = new Map<Scope, string>();
  let v1: RegisteredRoute[];

  beforeAll(async () => {
    diagnostics.subscribe('fastify.initialization', onInit as (message: unknown) => void);
    try {
      h = await startHarness({ worker: false, clock });
    } finally {
      diagnostics.unsubscribe('fastify.initialization', onInit as (message: unknown) => void);
    }
    for (const scope of SCOPES) {
      keyWith.set(scope, (await h.runtime.admin.issueKey(h.orgA.orgId, { scopes: [scope] })).api_key);
    }
    v1 = registered.filter((r) => r.url.startsWith('/v1/') && r.method !== 'HEAD' && r.method !== 'OPTIONS');
  });
  afterAll(() => h.close());

  it('finds every /v1 route, each with the scope the rule gives it', () => {
    expect(v1.length).toBeGreaterThanOrEqual(10);
    for (const route of v1) {
      expect(route.scope, `${route.method} ${route.url}`).toBe(expectedScope(route.method, route.url));
    }
    expect(new Set(v1.map((r) => r.scope))).toEqual(
      new Set(['ingest', 'query', 'read', 'write', 'webhooks', 'sources']),
    );
  });

  it('every route × every scope: 403 insufficient_scope without the route’s scope, past auth with it', async () => {
    for (const route of v1) {
      const url = route.url.replace(/:[a-z_]+/g, randomUUID());
      for (const scope of SCOPES) {
        const res = await h.request(route.method as 'GET', url, { key: keyWith.get(scope)! });
        const label = `${route.method} ${route.url} with a ${scope} key`;
        if (scope === route.scope) {
          expect(res.statusCode, label).not.toBe(401);
          expect(res.statusCode, label).not.toBe(403);
        } else {
          expect(res.statusCode, label).toBe(403);
          expect(res.headers['content-type'], label).toMatch(/^application\/problem\+json/);
          expect(res.json(), label).toMatchObject({ status: 403, code: 'insufficient_scope' });
          expect(res.json().detail, label).toContain(`\`${route.scope}\``);
        }
      }
    }
  });

  it('a key made without scopes has them all, and a narrow key does only what it may', async () => {
    const all = await h.runtime.admin.issueKey(h.orgA.orgId);
    expect(all.scopes).toEqual([...SCOPES]);
    const narrow = await h.runtime.admin.issueKey(h.orgA.orgId, { scopes: ['read', 'query', 'read'] });
    expect(narrow.scopes).toEqual(['query', 'read']);
    const ingest = await h.request('POST', '/v1/ingest', {
      key: narrow.api_key,
      body: { documents: [{ text: 'hello' }] },
    });
    expect(ingest.statusCode).toBe(403);
    expect((await h.request('GET', '/v1/usage', { key: narrow.api_key })).statusCode).toBe(200);
    const query = await h.request('POST', '/v1/query', { key: narrow.api_key, body: { query: 'hello' } });
    expect(query.statusCode).toBe(200);
  });

  it('a refused scope still counts against the org’s rate limit', async () => {
    const before = await h.request('GET', '/v1/usage', { key: keyWith.get('read')! });
    const refused = await h.request('GET', '/v1/usage', { key: keyWith.get('ingest')! });
    expect(refused.statusCode).toBe(403);
    const remaining = (res: typeof before) => Number(/r=(\d+)/.exec(String(res.headers.ratelimit))?.[1]);
    expect(remaining(refused)).toBe(remaining(before) - 1);
  });

  it('an expired key is refused like a revoked one (401), up to then it works', async () => {
    const expiresAt = new Date(clock.now().getTime() + 60_000);
    const issued = await h.runtime.admin.issueKey(h.orgA.orgId, { expiresAt });
    expect((await h.request('GET', '/v1/usage', { key: issued.api_key })).statusCode).toBe(200);
    clock.advance(60_000);
    const expired = await h.request('GET', '/v1/usage', { key: issued.api_key });
    expect(expired.statusCode).toBe(401);
    expect(expired.json()).toMatchObject({ code: 'unauthorized' });
    expect(expired.headers['www-authenticate']).toMatch(/^Bearer/);
    await expect(
      h.runtime.admin.issueKey(h.orgA.orgId, { expiresAt: new Date(clock.now().getTime() - 1) }),
    ).rejects.toMatchObject({ code: 'invalid_request' });
  });

  it('a /v1 route that declares no scope stops the app from starting', async () => {
    const app = Fastify();
    const deps = h.runtime.appDeps;
    const starting = app
      .register(async (scope) => {
        await authenticatedScope(deps)(scope);
        scope.get('/forgotten', async () => 'ok');
      })
      .ready();
    await expect(starting).rejects.toThrow(/GET \/forgotten declares no key scope/);
    await app.close().catch(() => {});
  });
});
