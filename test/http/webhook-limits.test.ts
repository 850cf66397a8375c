// Webhook limits. Delivery between orgs: one org whose endpoints never answer, with a backlog of test
// messages, must not hold back another org's event. The slow receivers hang until the send
// timeout (the maximum, 60 s), so every slot one of their deliveries takes stays taken for the
// whole test; what is asserted is how many of those slots the slow org got before the other
// org's message went out (at most its cap), and that it did go out long before any slow delivery
// could have ended. The backlog: at most WEBHOOK_MAX_PENDING messages wait per endpoint (a test
// beyond is a 429, an event beyond drops the oldest, counted). TEST_BACKEND=scale-out runs it on
// PostgreSQL and Redis.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness, type TestOrg } from '../helpers/harness.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

const SLOW_ENDPOINTS = 7;
const TESTS_PER_SLOW_ENDPOINT = 15;
const ORG_CAP = 4;

const waitUntil = async (what: string, check: () => boolean | Promise<boolean>, timeoutMs: number) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('webhook delivery is fair between orgs', () => {
  let h: Harness;
  let dispatcher: { stop(): Promise<void> } | undefined;
  const slow = new WebhookReceiver();
  const fast = new WebhookReceiver();

  beforeAll(async () => {
    await slow.start();
    await fast.start();
    h = await startHarness({
      worker: false,
      env: {
        URL_FETCH_ALLOW: `127.0.0.1:${slow.port},127.0.0.1:${fast.port}`,
        WEBHOOK_TIMEOUT_MS: '60000',
        WEBHOOK_POLL_MS: '20',
        WEBHOOK_CONCURRENCY: '16',
        WEBHOOK_ORG_CONCURRENCY: String(ORG_CAP),
      },
    });
  });
  afterAll(async () => {
    // The hanging answers are cut first, so the deliveries in flight end at once.
    await slow.stop();
    await dispatcher?.stop();
    await h?.close();
    await fast.stop();
  });

  const endpoint = async (org: TestOrg, receiver: WebhookReceiver, path: string, hang: boolean) => {
    const res = await h.request('POST', '/v1/webhooks', {
      key: org.apiKey,
      body: { url: receiver.url(path) },
    });
    expect(res.statusCode, res.body).toBe(201);
    receiver.expect(path, res.json().secret, () => (hang ? 'hang' : 200));
    return res.json().id as string;
  };

  it("another org's event goes out while one org's slow endpoints have a backlog", async () => {
    const hostile = h.orgA;
    const other = h.orgB;
    for (let i = 0; i < SLOW_ENDPOINTS; i++) {
      const id = await endpoint(hostile, slow, `/slow/${i}`, true);
      for (let n = 0; n < TESTS_PER_SLOW_ENDPOINT; n++) {
        const res = await h.request('POST', `/v1/webhooks/${id}/test`, { key: hostile.apiKey });
        expect(res.statusCode, res.body).toBe(202);
      }
    }
    dispatcher = h.runtime.startDispatcher();
    // The slow org takes what it may of the delivery slots first.
    await waitUntil('the slow org to take its slots', () => slow.unanswered() >= ORG_CAP, 30_000);
    const hookId = await endpoint(other, fast, '/fast', false);
    const sent = Date.now();
    const message = (await h.request('POST', `/v1/webhooks/${hookId}/test`, { key: other.apiKey })).json();
    // Any bound below the 60 s a slow slot is held shows the event did not wait for one; 30 s
    // leaves a loaded machine a wide margin.
    await waitUntil("the other org's event", () => fast.at('/fast').length === 1, 30_000);
    expect(Date.now() - sent).toBeLessThan(30_000);
    expect(fast.at('/fast')[0]).toMatchObject({ id: message.message_id, verified: true });
    // However long its backlog, the slow org held no more than its cap of slots.
    expect(slow.unanswered()).toBeLessThanOrEqual(ORG_CAP);
  });
});

describe('a webhook backlog is bounded', () => {
  let h: Harness;
  const receiver = new WebhookReceiver();
  const MAX_PENDING = 3;

  // No dispatcher runs here: every message stays waiting, so the backlog is exactly what was queued.
  beforeAll(async () => {
    await receiver.start();
    h = await startHarness({
      env: { URL_FETCH_ALLOW: `127.0.0.1:${receiver.port}`, WEBHOOK_MAX_PENDING: String(MAX_PENDING) },
    });
  });
  afterAll(async () => {
    await h?.close();
    await receiver.stop();
  });

  const create = async (org: TestOrg, path: string, events?: string[]) => {
    const res = await h.request('POST', '/v1/webhooks', {
      key: org.apiKey,
      body: { url: receiver.url(path), ...(events ? { events } : {}) },
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().id as string;
  };

  it('a test beyond WEBHOOK_MAX_PENDING waiting messages is a 429 backlog_full with Retry-After', async () => {
    const id = await create(h.orgA, '/full');
    for (let i = 0; i < MAX_PENDING; i++) {
      expect((await h.request('POST', `/v1/webhooks/${id}/test`)).statusCode).toBe(202);
    }
    const refused = await h.request('POST', `/v1/webhooks/${id}/test`);
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.json()).toMatchObject({ status: 429, code: 'backlog_full' });
    expect(refused.json().detail).toContain(`${MAX_PENDING} messages waiting`);
    expect((await h.request('GET', `/v1/webhooks/${id}/deliveries`)).json().pending).toBe(MAX_PENDING);
    // Another endpoint, of this org or another, is not held to this one's backlog.
    const other = await create(h.orgB, '/other');
    expect((await h.request('POST', `/v1/webhooks/${other}/test`, { key: h.orgB.apiKey })).statusCode).toBe(
      202,
    );
  });

  it('events beyond it drop the oldest waiting messages, and the endpoint counts them', async () => {
    const org = await h.runtime.admin.createOrg('behind');
    const o = { orgId: org.org_id, keyId: org.key_id, apiKey: org.api_key };
    const id = await create(o, '/behind', ['document.ready']);
    // One document at a time: each event is written after the previous one committed, so each
    // write sees the whole backlog (the bound under concurrent writers is not what this checks).
    const ids: string[] = [];
    for (const w of ['one', 'two', 'three', 'four', 'five']) {
      const [id] = await h.ingest(o, [`document ${w} text`]);
      await h.waitForDone(o, [id!]);
      ids.push(id!);
    }
    const endpoint = (await h.request('GET', `/v1/webhooks/${id}`, { key: o.apiKey })).json();
    // A message the dispatcher has already taken is in flight, not waiting: it is never dropped,
    // so one fewer may go when a delivery started before the last events were written.
    const pending = (await h.request('GET', `/v1/webhooks/${id}/deliveries`, { key: o.apiKey })).json()
      .pending;
    expect(endpoint.dropped_messages).toBeGreaterThanOrEqual(ids.length - MAX_PENDING - 1);
    expect(endpoint.dropped_messages).toBeLessThanOrEqual(ids.length - MAX_PENDING);
    expect(endpoint.dropped_messages + pending).toBeLessThanOrEqual(ids.length);
    expect(pending).toBeLessThanOrEqual(MAX_PENDING + 1);
  });
});
