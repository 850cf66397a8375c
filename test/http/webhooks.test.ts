// Webhooks end to end in one process: the /v1/webhooks routes, and events of real ingests sent by
// the real dispatcher to a receiver on 127.0.0.1 (allow-listed through URL_FETCH_ALLOW only) that
// verifies every signature with the `standardwebhooks` package. Backoffs are shortened through
// the configuration; no assertion depends on timing. TEST_BACKEND=scale-out runs it on
// PostgreSQL and Redis.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness, type TestOrg } from '../helpers/harness.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

const waitUntil = async (what: string, check: () => boolean | Promise<boolean>, timeoutMs = 30_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('webhooks', () => {
  let h: Harness;
  let dispatcher: { stop(): Promise<void> };
  const receiver = new WebhookReceiver();
  let canary: http.Server;
  let canaryPort = 0;
  const canaryHits: string[] = [];
  let paths = 0;

  beforeAll(async () => {
    await receiver.start();
    canary = http.createServer((req, res) => {
      canaryHits.push(req.url ?? '');
      res.end('canary');
    });
    await new Promise<void>((resolve) => canary.listen(0, '127.0.0.1', resolve));
    canaryPort = (canary.address() as AddressInfo).port;
    h = await startHarness({
      env: {
        URL_FETCH_ALLOW: `127.0.0.1:${receiver.port}`,
        WEBHOOK_RETRY_BASE_MS: '40',
        WEBHOOK_RETRY_MAX_MS: '200',
        WEBHOOK_TIMEOUT_MS: '500',
        WEBHOOK_POLL_MS: '20',
        WEBHOOK_MAX_ENDPOINTS: '50',
      },
    });
    dispatcher = h.runtime.startDispatcher();
  });
  afterAll(async () => {
    await dispatcher?.stop();
    await h?.close();
    await receiver.stop();
    await new Promise<void>((resolve) => canary.close(() => resolve()));
  });

  /** A new endpoint of `org` on a path of its own, registered with the receiver. */
  const endpoint = async (
    org: TestOrg,
    body: Record<string, unknown> = {},
    answer?: (n: number) => number | 'hang',
  ): Promise<{ id: string; path: string; secret: string }> => {
    paths += 1;
    const path = `/hook/${paths}`;
    const res = await h.request('POST', '/v1/webhooks', {
      key: org.apiKey,
      body: { url: receiver.url(path), ...body },
    });
    expect(res.statusCode, res.body).toBe(201);
    const created = res.json();
    receiver.expect(path, created.secret, answer);
    return { id: created.id, path, secret: created.secret };
  };

  it('creates an endpoint whose secret is shown once; lists and gets it without the secret', async () => {
    const res = await h.request('POST', '/v1/webhooks', {
      body: { url: receiver.url('/created'), events: ['document.ready'], description: 'ops' },
    });
    expect(res.statusCode).toBe(201);
    const created = res.json();
    expect(created).toMatchObject({
      url: receiver.url('/created'),
      events: ['document.ready'],
      description: 'ops',
      enabled: true,
      disabled_reason: null,
    });
    expect(created.id).toMatch(/^wh_[0-9a-f]{32}$/);
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const got = await h.request('GET', `/v1/webhooks/${created.id}`);
    expect(got.json()).toEqual({ ...created, secret: undefined });
    expect(JSON.stringify(got.json())).not.toContain(created.secret);
    const list = await h.request('GET', '/v1/webhooks');
    expect(list.json().webhooks).toContainEqual(got.json());
    expect(JSON.stringify(list.json())).not.toContain('whsec_');
    // Every event when none are named.
    const all = await h.request('POST', '/v1/webhooks', { body: { url: receiver.url('/all') } });
    expect(all.json().events).toEqual([
      'document.ready',
      'document.failed',
      'document.deleted',
      'document.vectors_ready',
      'source.sync.completed',
      'source.sync.failed',
    ]);
  });

  it("another org's endpoint is a 404 like a missing one, on every route", async () => {
    const mine = await endpoint(h.orgA);
    const missing = 'wh_0123456789abcdef0123456789abcdef';
    const strip = (body: Record<string, unknown>) => ({ ...body, request_id: undefined, detail: undefined });
    for (const [method, suffix] of [
      ['GET', ''],
      ['DELETE', ''],
      ['POST', '/test'],
      ['GET', '/deliveries'],
    ] as const) {
      const other = await h.request(method, `/v1/webhooks/${mine.id}${suffix}`, { key: h.orgB.apiKey });
      const none = await h.request(method, `/v1/webhooks/${missing}${suffix}`, { key: h.orgB.apiKey });
      expect(other.statusCode, `${method} ${suffix}`).toBe(404);
      expect(strip(other.json())).toEqual(strip(none.json()));
      expect(other.json().detail.replace(mine.id, 'ID')).toBe(none.json().detail.replace(missing, 'ID'));
    }
    expect((await h.request('GET', '/v1/webhooks', { key: h.orgB.apiKey })).json().webhooks).toEqual([]);
    expect((await h.request('GET', `/v1/webhooks/${mine.id}`)).statusCode).toBe(200);
  });

  it('sends each event once, signed, with the status record as GET /v1/documents/{id} returns it', async () => {
    const org = await h.runtime.admin.createOrg('events');
    const o = { orgId: org.org_id, keyId: org.key_id, apiKey: org.api_key };
    const hook = await endpoint(o);
    const failedOnly = await endpoint(o, { events: ['document.failed'] });
    receiver.expect('/missing-document', 'unused', () => 404);
    const ids = await h.ingest(o, ['first ready text', 'second ready text', 'third ready text']);
    const failing = await h.request('POST', '/v1/ingest/url', {
      key: o.apiKey,
      body: { url: receiver.url('/missing-document') },
    });
    const failedId = failing.json().document_ids[0] as string;
    await h.waitForDone(o, [...ids, failedId]);
    expect((await h.request('DELETE', `/v1/documents/${ids[0]}`, { key: o.apiKey })).statusCode).toBe(204);
    await waitUntil('five events', () => receiver.at(hook.path).length >= 5);
    await waitUntil('one failed event', () => receiver.at(failedOnly.path).length >= 1);

    const got = receiver.at(hook.path);
    expect(got.every((r) => r.verified)).toBe(true);
    expect(new Set(got.map((r) => r.id)).size).toBe(got.length);
    const events = got.map((r) => `${r.body.type} ${r.body.data.id}`).sort();
    expect(events).toEqual(
      [
        ...ids.map((id) => `document.ready ${id}`),
        `document.failed ${failedId}`,
        `document.deleted ${ids[0]}`,
      ].sort(),
    );
    for (const id of ids.slice(1)) {
      const ready = got.find((r) => r.body.type === 'document.ready' && r.body.data.id === id);
      expect(ready?.body.data).toEqual(
        (await h.request('GET', `/v1/documents/${id}`, { key: o.apiKey })).json(),
      );
      expect(Date.parse(ready?.body.timestamp ?? '')).not.toBeNaN();
    }
    const failed = got.find((r) => r.body.type === 'document.failed');
    expect(failed?.body.data).toMatchObject({ status: 'failed', error: { code: 'url_unreachable' } });
    expect(got.find((r) => r.body.type === 'document.deleted')?.body.data).toMatchObject({
      id: ids[0],
      status: 'ready',
    });
    // The endpoint subscribed to document.failed only got that.
    expect(receiver.at(failedOnly.path).map((r) => r.body.type)).toEqual(['document.failed']);
    // And the other org's deliveries log shows them as delivered.
    // The receiver records a request before its answer is settled: wait for the log to catch up.
    const deliveries = () =>
      h.request('GET', `/v1/webhooks/${hook.id}/deliveries?limit=100`, { key: o.apiKey });
    await waitUntil(
      'five logged deliveries',
      async () => (await deliveries()).json().deliveries.length === 5,
    );
    const log = await deliveries();
    expect(log.json().pending).toBe(0);
    expect(log.json().deliveries).toHaveLength(5);
    expect(
      log
        .json()
        .deliveries.every(
          (d: { outcome: string; status_code: number }) => d.outcome === 'delivered' && d.status_code === 200,
        ),
    ).toBe(true);
  });

  it('writes no events for an org without endpoints', async () => {
    const org = await h.runtime.admin.createOrg('quiet');
    const o = { orgId: org.org_id, keyId: org.key_id, apiKey: org.api_key };
    const before = (await h.runtime.webhooks.stats()).depth;
    const ids = await h.ingest(o, ['nobody listens', 'still nobody']);
    await h.waitForDone(o, ids);
    await h.request('DELETE', `/v1/documents/${ids[0]}`, { key: o.apiKey });
    expect((await h.runtime.webhooks.stats()).depth).toBeLessThanOrEqual(before);
    expect(receiver.received.some((r) => ids.includes(r.body.data.id as string))).toBe(false);
  });

  it('a test event arrives signed with the webhook-id the API returned, and is logged', async () => {
    const hook = await endpoint(h.orgA);
    const res = await h.request('POST', `/v1/webhooks/${hook.id}/test`);
    expect(res.statusCode).toBe(202);
    const messageId = res.json().message_id as string;
    await waitUntil('the test event', () => receiver.at(hook.path).length === 1);
    const [got] = receiver.at(hook.path);
    expect(got).toMatchObject({
      id: messageId,
      verified: true,
      body: { type: 'webhook.test', data: { webhook_id: hook.id } },
    });
    await waitUntil(
      'the log',
      async () =>
        (await h.request('GET', `/v1/webhooks/${hook.id}/deliveries`)).json().deliveries.length === 1,
    );
    const [entry] = (await h.request('GET', `/v1/webhooks/${hook.id}/deliveries`)).json().deliveries;
    expect(entry).toMatchObject({
      message_id: messageId,
      event_type: 'webhook.test',
      attempt: 1,
      status_code: 200,
      error: null,
      outcome: 'delivered',
    });
    expect(entry.duration_ms).toBeGreaterThanOrEqual(0);
  });

  it('retries 5xx answers and timeouts with the same webhook-id until a 2xx', async () => {
    // 1st: 503, 2nd: no answer within WEBHOOK_TIMEOUT_MS, 3rd: 500, then 200.
    const hook = await endpoint(h.orgA, {}, (n) => (n === 1 ? 503 : n === 2 ? 'hang' : n === 3 ? 500 : 200));
    const messageId = (await h.request('POST', `/v1/webhooks/${hook.id}/test`)).json().message_id;
    await waitUntil('a 2xx', () => receiver.at(hook.path).some((r) => r.status === 200));
    const attempts = receiver.at(hook.path);
    expect(attempts.map((r) => r.status)).toEqual([503, 500, 200]);
    expect(attempts.every((r) => r.id === messageId && r.verified)).toBe(true);
    const deliveries = async () => (await h.request('GET', `/v1/webhooks/${hook.id}/deliveries`)).json();
    await waitUntil(
      'the delivery logged',
      async () => (await deliveries()).deliveries[0]?.outcome === 'delivered',
    );
    const log = await deliveries();
    expect(
      log.deliveries.map((d: { attempt: number; status_code: number | null; outcome: string }) => [
        d.attempt,
        d.status_code,
        d.outcome,
      ]),
    ).toEqual([
      [4, 200, 'delivered'],
      [3, 500, 'retrying'],
      [2, null, 'retrying'],
      [1, 503, 'retrying'],
    ]);
    expect(log.deliveries[2].error).toMatch(/did not answer within 500 ms/);
    expect((await h.request('GET', `/v1/webhooks/${hook.id}`)).json().enabled).toBe(true);
  });

  it('a receiver that is down, then up again, gets what was waiting', async () => {
    const hook = await endpoint(h.orgA);
    await receiver.stop();
    const ids = [
      (await h.request('POST', `/v1/webhooks/${hook.id}/test`)).json().message_id,
      (await h.request('POST', `/v1/webhooks/${hook.id}/test`)).json().message_id,
    ];
    const log = async () => (await h.request('GET', `/v1/webhooks/${hook.id}/deliveries?limit=100`)).json();
    await waitUntil('refused attempts', async () => (await log()).deliveries.length >= 4);
    const down = await log();
    expect(down.pending).toBe(2);
    expect(
      down.deliveries.every(
        (d: { status_code: null; outcome: string }) => d.status_code === null && d.outcome === 'retrying',
      ),
    ).toBe(true);
    expect(down.deliveries[0].error).toMatch(/refused the connection/);
    await receiver.start();
    await waitUntil('both delivered', () => receiver.at(hook.path).length === 2);
    expect(
      receiver
        .at(hook.path)
        .map((r) => r.id)
        .sort(),
    ).toEqual([...ids].sort());
    expect(receiver.at(hook.path).every((r) => r.verified)).toBe(true);
    await waitUntil('nothing pending', async () => (await log()).pending === 0);
  });

  it('a redirect is not followed: a 3xx is a failed attempt, retried like a 5xx', async () => {
    const hook = await endpoint(h.orgA, {}, (n) => (n === 1 ? 307 : 200));
    await h.request('POST', `/v1/webhooks/${hook.id}/test`);
    const deliveries = async () => (await h.request('GET', `/v1/webhooks/${hook.id}/deliveries`)).json();
    await waitUntil('delivered', async () => (await deliveries()).deliveries[0]?.outcome === 'delivered');
    expect(
      (await deliveries()).deliveries.map((d: { status_code: number; outcome: string }) => [
        d.status_code,
        d.outcome,
      ]),
    ).toEqual([
      [200, 'delivered'],
      [307, 'retrying'],
    ]);
    expect(receiver.at(hook.path)).toHaveLength(2);
  });

  it('410 Gone disables the endpoint: no more events, and test is refused', async () => {
    const hook = await endpoint(h.orgA, {}, () => 410);
    await h.request('POST', `/v1/webhooks/${hook.id}/test`);
    await waitUntil(
      'disabled',
      async () => (await h.request('GET', `/v1/webhooks/${hook.id}`)).json().enabled === false,
    );
    expect((await h.request('GET', `/v1/webhooks/${hook.id}`)).json().disabled_reason).toBe('gone');
    expect(receiver.at(hook.path)).toHaveLength(1);
    const ids = await h.ingest(h.orgA, ['after the endpoint went away']);
    await h.waitForDone(h.orgA, ids);
    expect((await h.request('POST', `/v1/webhooks/${hook.id}/test`)).statusCode).toBe(400);
    expect((await h.request('GET', `/v1/webhooks/${hook.id}/deliveries`)).json()).toMatchObject({
      pending: 0,
      deliveries: [{ status_code: 410, outcome: 'endpoint_disabled' }],
    });
    expect(receiver.at(hook.path)).toHaveLength(1);
  });

  it('4xx answers other than 410 are retried, then given up after the retry window (configured short)', async () => {
    const short = await startHarness({
      worker: false,
      env: {
        URL_FETCH_ALLOW: `127.0.0.1:${receiver.port}`,
        WEBHOOK_RETRY_BASE_MS: '20',
        WEBHOOK_RETRY_MAX_MS: '40',
        WEBHOOK_RETRY_WINDOW_MS: '1000',
        WEBHOOK_POLL_MS: '20',
      },
    });
    const d = short.runtime.startDispatcher();
    try {
      paths += 1;
      const path = `/hook/${paths}`;
      const created = (
        await short.request('POST', '/v1/webhooks', { body: { url: receiver.url(path) } })
      ).json();
      receiver.expect(path, created.secret, () => 400);
      await short.request('POST', `/v1/webhooks/${created.id}/test`);
      const log = async () =>
        (await short.request('GET', `/v1/webhooks/${created.id}/deliveries?limit=100`)).json();
      await waitUntil('given up', async () =>
        (await log()).deliveries.some((x: { outcome: string }) => x.outcome === 'gave_up'),
      );
      const { deliveries, pending } = await log();
      expect(pending).toBe(0);
      expect(deliveries.length).toBeGreaterThan(1);
      expect(deliveries.every((x: { status_code: number }) => x.status_code === 400)).toBe(true);
      expect(deliveries[0].outcome).toBe('gave_up');
      expect(deliveries.slice(1).every((x: { outcome: string }) => x.outcome === 'retrying')).toBe(true);
      // A 4xx is not a 410: the endpoint stays enabled.
      expect((await short.request('GET', `/v1/webhooks/${created.id}`)).json().enabled).toBe(true);
    } finally {
      await d.stop();
      await short.close();
    }
  });

  const refusedAtCreate = [
    'ftp://example.com/hook',
    'file:///etc/passwd',
    'http://user:pass@example.com/hook',
    'http://127.0.0.1/hook',
    'http://[::1]/hook',
    'http://169.254.169.254/latest/meta-data/',
    'http://10.0.0.1/hook',
    'http://127.1/hook',
    'http://0x7f.1/hook',
    'http://localhost/hook',
    'http://localhost./hook',
    'http://LOCALHOST/hook',
    'http://ＬＯＣＡＬＨＯＳＴ./hook',
    'http://api.localhost/hook',
    'http://metadata.google.internal/computeMetadata/v1/',
    'http://[::ffff:127.0.0.1]/hook',
    'not a url',
  ];
  for (const url of refusedAtCreate) {
    it(`400 at create for ${url}`, async () => {
      const res = await h.request('POST', '/v1/webhooks', { body: { url } });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 'invalid_request', errors: [{ pointer: '/url' }] });
    });
  }

  it('a local receiver refused at create is told the URL_FETCH_ALLOW entry that would admit it', async () => {
    const res = await h.request('POST', '/v1/webhooks', { body: { url: 'http://127.0.0.1:4519/hook' } });
    expect(res.statusCode).toBe(400);
    expect(res.json().detail).toBe(
      'The webhook URL cannot be used: 127.0.0.1 is not a public address (the server accepts it when started with URL_FETCH_ALLOW=127.0.0.1:4519).',
    );
  });

  it('a name that resolves to loopback passes create, but its delivery is refused once and not retried: the canary hears nothing', async () => {
    // /etc/hosts maps `vm` to 127.0.0.1 on this machine; the port is not allow-listed.
    const res = await h.request('POST', '/v1/webhooks', { body: { url: `http://vm:${canaryPort}/hook` } });
    expect(res.statusCode).toBe(201);
    const id = res.json().id as string;
    const messageId = (await h.request('POST', `/v1/webhooks/${id}/test`)).json().message_id;
    const log = async () => (await h.request('GET', `/v1/webhooks/${id}/deliveries`)).json();
    await waitUntil('the refused attempt', async () => (await log()).deliveries.length >= 1);
    const { deliveries, pending } = await log();
    // Given up at the first attempt: nothing waits for a retry.
    expect(pending).toBe(0);
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]).toMatchObject({
      message_id: messageId,
      attempt: 1,
      status_code: null,
      outcome: 'gave_up',
    });
    expect(deliveries[0].error).toMatch(/not public.*\(not retried\)$/);
    expect(canaryHits).toEqual([]);
    // A blocked URL is not the endpoint failing for good: it stays enabled.
    expect((await h.request('GET', `/v1/webhooks/${id}`)).json().enabled).toBe(true);
  });

  it('unknown events and fields are 400; an org may have a bounded number of endpoints', async () => {
    expect(
      (
        await h.request('POST', '/v1/webhooks', {
          body: { url: receiver.url('/x'), events: ['document.created'] },
        })
      ).statusCode,
    ).toBe(400);
    expect(
      (await h.request('POST', '/v1/webhooks', { body: { url: receiver.url('/x'), secret: 'mine' } }))
        .statusCode,
    ).toBe(400);
    const org = await h.runtime.admin.createOrg('many');
    const key = org.api_key;
    for (let i = 0; i < 50; i++) {
      expect(
        (await h.request('POST', '/v1/webhooks', { key, body: { url: receiver.url(`/many/${i}`) } }))
          .statusCode,
      ).toBe(201);
    }
    const over = await h.request('POST', '/v1/webhooks', { key, body: { url: receiver.url('/many/over') } });
    expect(over.statusCode).toBe(400);
    expect(over.json().detail).toMatch(/at most 50 webhook endpoints/);
    const [first] = (await h.request('GET', '/v1/webhooks', { key })).json().webhooks;
    expect((await h.request('DELETE', `/v1/webhooks/${first.id}`, { key })).statusCode).toBe(204);
    expect((await h.request('GET', `/v1/webhooks/${first.id}`, { key })).statusCode).toBe(404);
    expect(
      (await h.request('POST', '/v1/webhooks', { key, body: { url: receiver.url('/many/again') } }))
        .statusCode,
    ).toBe(201);
  });

  it('purging an org removes and counts its endpoints, their waiting messages and their log', async () => {
    const org = await h.runtime.admin.createOrg('purged');
    const o = { orgId: org.org_id, keyId: org.key_id, apiKey: org.api_key };
    const hook = await endpoint(o, {}, () => 503);
    await endpoint(o);
    await h.request('POST', `/v1/webhooks/${hook.id}/test`, { key: o.apiKey });
    await waitUntil('an attempt', () => receiver.at(hook.path).length >= 1);
    const receipt = await h.runtime.admin.purgeOrg(o.orgId);
    expect(receipt.webhooks).toBe(2);
    expect(await h.runtime.webhooks.listEndpoints(o.orgId)).toEqual([]);
    expect(await h.runtime.webhooks.listAttempts(o.orgId, hook.id, 10)).toBeNull();
    expect(await h.runtime.webhooks.countPending(hook.id)).toBe(0);
  });

  it('/metrics reports deliveries by outcome, the outbox depth and the oldest undelivered age', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.body).toMatch(/docindex_webhook_deliveries_total\{outcome="delivered"\} [1-9]/);
    expect(res.body).toMatch(/docindex_webhook_deliveries_total\{outcome="retrying"\} [1-9]/);
    expect(res.body).toMatch(/docindex_webhook_outbox_depth \d+/);
    expect(res.body).toMatch(/docindex_webhook_oldest_undelivered_seconds \d/);
  });
});
