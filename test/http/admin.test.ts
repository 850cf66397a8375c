// The admin API (/admin/v1): its token, its own rate-limit bucket, orgs and keys, and the purge
// of an org — after which nothing of it is left in any table of the schema (SQLite here, PostgreSQL
// in the scale-out run of this same file) or in the blob store, and the other orgs are untouched.
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { type Harness, startHarness, type TestOrg } from '../helpers/harness.js';

const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef0123456789';

function multipartFile(name: string, text: string): Promise<{ payload: Buffer; contentType: string }> {
  const form = new FormData();
  form.append('file', new Blob([text]), name);
  const request = new Request('http://localhost/', { method: 'POST', body: form });
  return request.arrayBuffer().then((body) => ({
    payload: Buffer.from(body),
    contentType: request.headers.get('content-type')!,
  }));
}

/** Rows of every table of the harness's database whose text contains any of `needles`. */
async function rowsMentioning(h: Harness, needles: string[]): Promise<Record<string, number>> {
  const found: Record<string, number> = {};
  const { config } = h.runtime;
  if (config.databaseUrl) {
    const pool = new pg.Pool({ connectionString: config.databaseUrl, max: 1 });
    try {
      const { rows: tables } = await pool.query<{ table_name: string }>(
        `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE'`,
        [config.databaseSchema],
      );
      expect(tables.map((t) => t.table_name)).toEqual(
        expect.arrayContaining([
          'orgs',
          'api_keys',
          'documents',
          'chunks',
          'usage_daily',
          'idempotency_keys',
        ]),
      );
      for (const { table_name } of tables) {
        const { rows } = await pool.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM "${config.databaseSchema}"."${table_name}" AS t
           WHERE t::text LIKE ANY ($1)`,
          [needles.map((n) => `%${n}%`)],
        );
        if (rows[0]!.n > 0) found[table_name] = rows[0]!.n;
      }
    } finally {
      await pool.end();
    }
    return found;
  }
  const db = new BetterSqlite3(path.join(config.dataDir, 'docindex.db'), { readonly: true });
  try {
    const tables = db
      .prepare<[], string>(`SELECT name FROM sqlite_master WHERE type = 'table'`)
      .pluck()
      .all();
    expect(tables).toEqual(
      expect.arrayContaining(['orgs', 'api_keys', 'documents', 'chunks', 'fts_orgs', 'usage_daily']),
    );
    for (const table of tables) {
      const rows = db.prepare(`SELECT * FROM "${table}"`).raw().all() as unknown[][];
      const n = rows.filter((row) =>
        row.some((value) =>
          needles.some((needle) =>
            typeof value === 'string'
              ? value.includes(needle)
              : Buffer.isBuffer(value) && value.includes(needle),
          ),
        ),
      ).length;
      if (n > 0) found[table] = n;
    }
  } finally {
    db.close();
  }
  return found;
}

describe('admin API', () => {
  let h: Harness;
  const admin = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown) =>
    h.request(method, url, { key: ADMIN_TOKEN, ...(body === undefined ? {} : { body }) });

  beforeAll(async () => {
    h = await startHarness({ env: { ADMIN_TOKEN } });
  });
  afterAll(() => h.close());

  it('401 problem without the admin token, with a wrong one, or with an API key', async () => {
    for (const key of [null, `${ADMIN_TOKEN}x`, h.orgA.apiKey]) {
      const res = await h.request('GET', '/admin/v1/orgs', { key });
      expect(res.statusCode).toBe(401);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
      expect(res.json()).toMatchObject({ code: 'unauthorized', status: 401 });
      expect(res.json().detail).toContain('ADMIN_TOKEN');
    }
    // The admin token is no API key.
    expect((await h.request('GET', '/v1/usage', { key: ADMIN_TOKEN })).statusCode).toBe(401);
  });

  it('creates, reads, lists, renames and re-limits orgs', async () => {
    const created = await admin('POST', '/admin/v1/orgs', { name: 'Acme', rate_limit_rpm: 90 });
    expect(created.statusCode).toBe(201);
    const org = created.json();
    expect(Object.keys(org).sort()).toEqual(['api_key', 'key_id', 'name', 'org_id', 'rate_limit_rpm']);
    expect(org).toMatchObject({ name: 'Acme', rate_limit_rpm: 90 });
    const usage = await h.request('GET', '/v1/usage', { key: org.api_key });
    expect(usage.json()).toMatchObject({ org_id: org.org_id, rate_limit_rpm: 90 });
    await h.request('POST', '/v1/query', { key: org.api_key, body: { query: 'anything' } });

    const got = await admin('GET', `/admin/v1/orgs/${org.org_id}`);
    expect(got.json()).toMatchObject({
      org_id: org.org_id,
      name: 'Acme',
      rate_limit_rpm: 90,
      usage: { period_days: 30, total_queries: 1 },
      active_keys: 1,
    });
    const patched = await admin('PATCH', `/admin/v1/orgs/${org.org_id}`, {
      name: 'Acme Ltd',
      rate_limit_rpm: 7,
    });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({ name: 'Acme Ltd', rate_limit_rpm: 7 });
    expect((await h.request('GET', '/v1/usage', { key: org.api_key })).json().rate_limit_rpm).toBe(7);

    // Every org, a page at a time, newest first.
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await admin('GET', `/admin/v1/orgs?limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.statusCode).toBe(200);
      seen.push(...page.json().orgs.map((o: { org_id: string }) => o.org_id));
      cursor = page.json().next_cursor;
    } while (cursor);
    expect(seen).toContain(org.org_id);
    expect(seen).toEqual(expect.arrayContaining([h.orgA.orgId, h.orgB.orgId]));
    expect(new Set(seen).size).toBe(seen.length);
  });

  it('refuses bad input and unknown ids with clear 4xx problems', async () => {
    const cases: [string, string, unknown, number][] = [
      ['POST', '/admin/v1/orgs', {}, 400],
      ['POST', '/admin/v1/orgs', { name: 'x', rate_limit_rpm: 0 }, 400],
      ['POST', '/admin/v1/orgs', { name: 'x', extra: 1 }, 400],
      ['POST', '/admin/v1/orgs', { name: 'x', rate_limit_rpm: '60' }, 400],
      ['PATCH', `/admin/v1/orgs/${h.orgA.orgId}`, {}, 400],
      ['PATCH', '/admin/v1/orgs/org_nope', { name: 'y' }, 404],
      ['GET', '/admin/v1/orgs/org_nope', undefined, 404],
      ['DELETE', '/admin/v1/orgs/org_nope', undefined, 404],
      ['GET', '/admin/v1/orgs/org_nope/keys', undefined, 404],
      ['POST', '/admin/v1/orgs/org_nope/keys', {}, 404],
      ['POST', `/admin/v1/orgs/${h.orgA.orgId}/keys`, { scopes: ['admin'] }, 400],
      ['POST', `/admin/v1/orgs/${h.orgA.orgId}/keys`, { scopes: [] }, 400],
      ['POST', `/admin/v1/orgs/${h.orgA.orgId}/keys`, { expires_at: 'tomorrow' }, 400],
      ['POST', `/admin/v1/orgs/${h.orgA.orgId}/keys`, { expires_at: '2001-01-01T00:00:00Z' }, 400],
      ['DELETE', '/admin/v1/keys/key_nope', undefined, 404],
      ['GET', '/admin/v1/orgs?cursor=nonsense', undefined, 400],
    ];
    for (const [method, url, body, status] of cases) {
      const res = await admin(method as 'POST', url, body);
      expect(res.statusCode, `${method} ${url} ${JSON.stringify(body)}`).toBe(status);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    }
  });

  it('refuses an expiry that is not on the calendar with a 400 at /expires_at, and makes no key', async () => {
    const keysOf = async () =>
      (await admin('GET', `/admin/v1/orgs/${h.orgB.orgId}/keys`))
        .json()
        .keys.map((k: { key_id: string }) => k.key_id);
    const before = await keysOf();
    const refused = [
      '2099-01-01T23:59:60Z', // a leap second
      '2099-06-30T22:59:60-01:00',
      '2099-01-01T24:00:00Z',
      '2099-01-01T12:60:00Z',
      '2099-02-30T00:00:00Z',
      '2100-02-29T00:00:00Z', // 2100 is no leap year
      '2099-04-31T00:00:00Z',
      '2099-01-01T00:00:00+24:00',
      '2099-01-01T00:00:00+05:60',
      '2099-01-01 00:00:00Z',
      '2099-01-01T00:00:00', // no offset
      '2099-01-01',
      '10000-01-01T00:00:00Z',
      '+275760-09-13T00:00:00Z',
    ];
    const answers = [];
    for (const expires_at of refused) {
      answers.push({
        expires_at,
        res: await admin('POST', `/admin/v1/orgs/${h.orgB.orgId}/keys`, { scopes: ['read'], expires_at }),
      });
    }
    // Nothing was written, not even by a request that failed after the check should have refused it.
    expect(await keysOf()).toEqual(before);
    for (const { expires_at, res } of answers) {
      expect(res.statusCode, expires_at).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.json(), expires_at).toMatchObject({
        code: 'invalid_request',
        errors: [{ pointer: '/expires_at', message: expect.stringContaining('RFC 3339') }],
      });
      expect(res.body).not.toMatch(/dix_/);
    }

    // Offsets and fractions are read exactly; lowercase t and z are RFC 3339 too.
    const issued = await admin('POST', `/admin/v1/orgs/${h.orgB.orgId}/keys`, {
      scopes: ['read'],
      expires_at: '2099-12-31t23:30:00.1234+05:30',
    });
    expect(issued.statusCode).toBe(201);
    expect(issued.json().expires_at).toBe('2099-12-31T18:00:00.123Z');
    const leapDay = await admin('POST', `/admin/v1/orgs/${h.orgB.orgId}/keys`, {
      expires_at: '2096-02-29T23:59:59Z',
    });
    expect(leapDay.json().expires_at).toBe('2096-02-29T23:59:59.000Z');
  });

  it('issues scoped, expiring keys, lists them without the key, and revokes one at once', async () => {
    const expiresAt = new Date(Date.now() + 3600_000).toISOString();
    const issued = await admin('POST', `/admin/v1/orgs/${h.orgA.orgId}/keys`, {
      scopes: ['read', 'query'],
      expires_at: expiresAt,
    });
    expect(issued.statusCode).toBe(201);
    const key = issued.json();
    expect(key).toMatchObject({ scopes: ['query', 'read'], expires_at: expiresAt, partitions: null });
    expect(key.api_key).toMatch(/^dix_/);
    expect((await h.request('GET', '/v1/usage', { key: key.api_key })).statusCode).toBe(200);
    const ingest = await h.request('POST', '/v1/ingest', {
      key: key.api_key,
      body: { documents: [{ text: 'x' }] },
    });
    expect(ingest.json()).toMatchObject({ status: 403, code: 'insufficient_scope' });

    const listed = await admin('GET', `/admin/v1/orgs/${h.orgA.orgId}/keys`);
    expect(listed.statusCode).toBe(200);
    expect(listed.body).not.toContain(key.api_key);
    const entry = listed.json().keys.find((k: { key_id: string }) => k.key_id === key.key_id);
    expect(entry).toMatchObject({
      org_id: h.orgA.orgId,
      prefix: key.api_key.slice(0, 12),
      scopes: ['query', 'read'],
      expires_at: expiresAt,
      partitions: null,
      revoked_at: null,
    });
    expect(Object.keys(entry).sort()).toEqual(
      [
        'created_at',
        'expires_at',
        'key_id',
        'org_id',
        'partitions',
        'prefix',
        'principals',
        'revoked_at',
        'scopes',
      ].sort(),
    );

    const revoked = await admin('DELETE', `/admin/v1/keys/${key.key_id}`);
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json().revoked_at).toEqual(expect.any(String));
    expect((await h.request('GET', '/v1/usage', { key: key.api_key })).statusCode).toBe(401);
    expect((await admin('DELETE', `/admin/v1/keys/${key.key_id}`)).json().revoked_at).toBe(
      revoked.json().revoked_at,
    );
  });

  it('issues a key limited to partitions, which ingests only into them and is listed with them', async () => {
    const issued = await admin('POST', `/admin/v1/orgs/${h.orgA.orgId}/keys`, {
      partitions: ['support', 'sales', 'support'],
    });
    expect(issued.statusCode).toBe(201);
    expect(issued.json().partitions).toEqual(['sales', 'support']);
    const key = issued.json().api_key as string;
    const listed = (await admin('GET', `/admin/v1/orgs/${h.orgA.orgId}/keys`)).json().keys as {
      key_id: string;
      partitions: string[] | null;
    }[];
    expect(listed.find((k) => k.key_id === issued.json().key_id)?.partitions).toEqual(['sales', 'support']);
    const elsewhere = await h.request('POST', '/v1/ingest', {
      key,
      body: { partition: 'legal', documents: [{ text: 'x' }] },
    });
    expect(elsewhere.statusCode).toBe(403);
    expect(elsewhere.json().code).toBe('partition_forbidden');
    const own = await h.request('POST', '/v1/ingest', {
      key,
      body: { partition: 'sales', documents: [{ text: 'x' }] },
    });
    expect(own.statusCode).toBe(202);
    const bad = await admin('POST', `/admin/v1/orgs/${h.orgA.orgId}/keys`, { partitions: ['Not OK'] });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors[0].pointer).toBe('/partitions/0');
  });

  it('purges an org: a receipt, nothing of it left in any table or the blob store, the other org untouched', async () => {
    const doomed = (await admin('POST', '/admin/v1/orgs', { name: 'Doomed' })).json();
    const org: TestOrg = { orgId: doomed.org_id, keyId: doomed.key_id, apiKey: doomed.api_key };
    const extraKey = (await admin('POST', `/admin/v1/orgs/${org.orgId}/keys`, { scopes: ['query'] })).json();

    const blobsBefore = new Set(await h.blobFiles());
    const upload = async (who: TestOrg, name: string, text: string) => {
      const { payload, contentType } = await multipartFile(name, text);
      const res = await h.request('POST', '/v1/ingest/file', {
        key: who.apiKey,
        payload,
        headers: { 'content-type': contentType, 'idempotency-key': `upload-${name}` },
      });
      expect(res.statusCode).toBe(202);
      return res.json().document_ids[0] as string;
    };
    const bFile = await upload(h.orgB, 'b-notes.txt', 'otters of org b hold hands while asleep');
    const bDocs = [bFile, ...(await h.ingest(h.orgB, ['otters of org b again']))];
    await h.waitForDone(h.orgB, bDocs);
    const bBlobs = (await h.blobFiles()).filter((f) => !blobsBefore.has(f));
    expect(bBlobs).toHaveLength(1);

    const dFile = await upload(org, 'doomed.txt', 'otters of the doomed org float on kelp');
    const dDocs = [dFile, ...(await h.ingest(org, ['doomed otters one', 'doomed otters two']))];
    await h.waitForDone(org, dDocs);
    const dBlobs = (await h.blobFiles()).filter((f) => !blobsBefore.has(f) && !bBlobs.includes(f));
    expect(dBlobs).toHaveLength(1);
    expect(
      (await h.request('POST', '/v1/query', { key: org.apiKey, body: { query: 'otters' } })).statusCode,
    ).toBe(200);
    const bBefore = await h.request('GET', `/v1/documents?ids=${bDocs.join(',')}`, { key: h.orgB.apiKey });
    const evaluation = await h.request('POST', '/v1/evaluations', {
      key: org.apiKey,
      body: { queries: [{ query: 'otters', relevant: [{ document_id: dFile }] }] },
    });
    expect(evaluation.statusCode).toBe(202);
    const evaluationId = evaluation.json().evaluation_id as string;

    const needles = [org.orgId, org.keyId, extraKey.key_id, evaluationId, ...dDocs];
    expect(Object.keys(await rowsMentioning(h, needles)).length).toBeGreaterThanOrEqual(4);

    const purged = await admin('DELETE', `/admin/v1/orgs/${org.orgId}`);
    expect(purged.statusCode).toBe(200);
    expect(purged.json()).toEqual({
      org_id: org.orgId,
      documents: 3,
      chunks: 3,
      vectors: 0,
      blobs: 1,
      webhooks: 0,
      keys: 2,
      usage_days: 1,
      idempotency_keys: 1,
      evaluations: 1,
    });

    expect(await rowsMentioning(h, needles)).toEqual({});
    const blobsAfter = await h.blobFiles();
    for (const blob of dBlobs) expect(blobsAfter).not.toContain(blob);
    for (const blob of bBlobs) expect(blobsAfter).toContain(blob);

    expect((await h.request('GET', '/v1/usage', { key: org.apiKey })).statusCode).toBe(401);
    expect((await admin('GET', `/admin/v1/orgs/${org.orgId}`)).statusCode).toBe(404);
    expect((await admin('DELETE', `/admin/v1/orgs/${org.orgId}`)).statusCode).toBe(404);

    const bAfter = await h.request('GET', `/v1/documents?ids=${bDocs.join(',')}`, { key: h.orgB.apiKey });
    expect(bAfter.json()).toEqual(bBefore.json());
    const bQuery = await h.request('POST', '/v1/query', { key: h.orgB.apiKey, body: { query: 'otters' } });
    expect(
      bQuery
        .json()
        .results.map((r: { document_id: string }) => r.document_id)
        .sort(),
    ).toEqual([...bDocs].sort());
  });

  it('the OpenAPI document shows the admin routes under their own tag, behind the admin token', async () => {
    const doc = (await h.request('GET', '/openapi.json', { key: null })).json();
    expect(doc.components.securitySchemes.adminToken).toMatchObject({ type: 'http', scheme: 'bearer' });
    for (const [path, method] of [
      ['/admin/v1/orgs', 'post'],
      ['/admin/v1/orgs', 'get'],
      ['/admin/v1/orgs/{id}', 'delete'],
      ['/admin/v1/orgs/{id}/keys', 'post'],
      ['/admin/v1/keys/{key_id}', 'delete'],
    ] as const) {
      const operation = doc.paths[path][method];
      expect(operation.tags, `${method} ${path}`).toEqual(['admin']);
      expect(operation.security, `${method} ${path}`).toEqual([{ adminToken: [] }]);
    }
  });

  it('is not there at all without ADMIN_TOKEN (404), and refuses a short token', async () => {
    const { admin: _admin, ...deps } = h.runtime.appDeps;
    const app = await buildApp(deps);
    try {
      const res = await app.inject({
        method: 'GET',
        url: '/admin/v1/orgs',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ code: 'route_not_found' });
    } finally {
      await app.close();
    }
    expect(() => loadConfig({ ADMIN_TOKEN: 'short' })).toThrow(ConfigError);
    expect(() => loadConfig({ ADMIN_TOKEN: 'short' })).not.toThrow(/short/);
  });
});

describe('admin rate limit', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ worker: false, env: { ADMIN_TOKEN, UNAUTHENTICATED_RATE_LIMIT_RPM: '5' } });
  });
  afterAll(() => h.close());

  it('wrong admin tokens count in a bucket of their own; the right token and the tenants are never limited by it', async () => {
    const codes: number[] = [];
    for (let i = 0; i < 6; i++)
      codes.push((await h.request('GET', '/admin/v1/orgs', { key: 'guess' })).statusCode);
    expect(codes).toEqual([401, 401, 401, 401, 401, 429]);
    // Tenants' anonymous bucket for the same address is untouched: still 401, not 429.
    expect((await h.request('GET', '/v1/usage', { key: 'wrong' })).statusCode).toBe(401);
    for (let i = 0; i < 10; i++) {
      const res = await h.request('GET', '/admin/v1/orgs?limit=1', { key: ADMIN_TOKEN });
      expect(res.statusCode).toBe(200);
      expect(res.headers.ratelimit).toBeUndefined();
    }
    const tenant = await h.request('GET', '/v1/usage');
    expect(tenant.statusCode).toBe(200);
    expect(tenant.headers['ratelimit-policy']).toMatch(/^"org"/);
  });
});

describe('purge while a job of the org is still queued', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ worker: false, env: { ADMIN_TOKEN } });
  });
  afterAll(() => h.close());

  it('the job ends without bringing anything back', async () => {
    const ids = await h.ingest(h.orgA, ['a queued walrus', 'another queued walrus']);
    const purged = await h.request('DELETE', `/admin/v1/orgs/${h.orgA.orgId}`, { key: ADMIN_TOKEN });
    expect(purged.json()).toMatchObject({ documents: 2, keys: 1 });
    const worker = h.runtime.startWorker();
    try {
      const deadline = Date.now() + 30_000;
      for (const id of ids) {
        while (await h.runtime.queue.has(id)) {
          if (Date.now() > deadline) throw new Error(`the job of ${id} never ended`);
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
      }
    } finally {
      await worker.stop();
    }
    expect(await rowsMentioning(h, [h.orgA.orgId, ...ids])).toEqual({});
    expect(await h.runtime.documents.listStaleQueued(new Date(Date.now() + 3600_000), 10)).toEqual([]);
  });
});
