// Conformance suite for WebhookStore and the outbox the document stores write: SQLite and
// PostgreSQL run these same tests. Events are produced through the real DocumentStore, so "the
// event commits with the status change" is what is checked, not a helper called by hand.
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/domain/errors.js';
import type { DocumentStore } from '../../src/domain/ports.js';
import {
  type AttemptResult,
  type ClaimedMessage,
  type ClaimLimits,
  generateWebhookSecret,
  newEndpointId,
  type RetryPlan,
  type WebhookEndpoint,
  WebhookService,
  type WebhookStore,
} from '../../src/domain/webhooks.js';
import { indexResult, newDoc } from './document-fixtures.js';

export interface WebhookStoreHarness {
  store: WebhookStore;
  /** A document store on the same database, writing the outbox. */
  documents: DocumentStore;
  /** The same database as another process would open it. */
  other: WebhookStore;
  /** A document store on the same database whose outbox keeps `maxPending` messages per endpoint. */
  documentsBounded(maxPending: number): DocumentStore;
  close(): Promise<void>;
}

// The document stores stamp events with the system clock: the test's "now" lies just after that.
// Every time the suite passes is NOW or after it, and the outbox rows written by the document
// stores carry the real clock's time: NOW must stay ahead of the real clock for as long as the
// whole test file runs (a loaded machine ran the suites before this one for over a minute).
const NOW = new Date(Date.now() + 6 * 60 * 60_000);
const later = (ms: number) => new Date(NOW.getTime() + ms);
const DELIVERED: AttemptResult = { statusCode: 200, durationMs: 12, error: null, kind: 'delivered' };
const FAILED: AttemptResult = { statusCode: 503, durationMs: 5, error: 'HTTP 503', kind: 'failed' };
/** Endpoints per org the tests allow: more than any test makes. */
const LIMIT = 100;
/** Claim limits: `messages` in all, no org or endpoint cap unless given. */
const upTo = (messages: number, perOrg = 1000, perEndpoint = 1000): ClaimLimits => ({
  messages,
  perOrg,
  perEndpoint,
});
const retryAt = (at: Date | null, disableIfFailingSince = new Date(0)): RetryPlan => ({
  nextAttemptAt: at,
  disableIfFailingSince,
});

/** Resolves once `done()` holds; fails after 10 s. */
async function waitFor(done: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export function webhookStoreContract(name: string, make: () => Promise<WebhookStoreHarness>): void {
  describe(name, () => {
    let h: WebhookStoreHarness;
    let store: WebhookStore;
    const org = () => `org_${randomUUID()}`;
    const endpoint = (orgId: string, over: Partial<WebhookEndpoint> = {}): WebhookEndpoint => ({
      id: newEndpointId(),
      orgId,
      url: 'https://hooks.example.com/docindex',
      events: ['document.ready', 'document.failed', 'document.deleted', 'document.vectors_ready'],
      description: 'ops',
      secret: generateWebhookSecret(),
      createdAt: NOW,
      disabledAt: null,
      disabledReason: null,
      failingSince: null,
      droppedMessages: 0,
      ...over,
    });
    /** Claims everything due far in the future, so the clock of the rows does not matter. */
    const claimAll = (s: WebhookStore = store, owner = 'test/1') =>
      s.claimDue(owner, later(10 * 86_400_000), later(10 * 86_400_000 + 30_000), upTo(1000));
    /** A test message's id; fails the test when none was queued. */
    const queueTest = async (orgId: string, endpointId: string, at: Date): Promise<string> => {
      const queued = await store.enqueueTest(orgId, endpointId, at, LIMIT);
      if (typeof queued !== 'object') throw new Error(`no test message queued: ${queued}`);
      return queued.messageId;
    };
    const readyDocument = async (orgId: string): Promise<string> => {
      const doc = newDoc(orgId, { metadata: { team: 'a' }, partition: 'support' });
      await h.documents.createDocuments([doc]);
      expect(await h.documents.saveIndex(doc.id, indexResult(['alpha beta']))).toBe(true);
      return doc.id;
    };

    beforeEach(async () => {
      h = await make();
      store = h.store;
    });
    afterEach(async () => {
      await h.close();
    });

    it('keeps endpoints per org: another org sees none of them', async () => {
      const a = org();
      const b = org();
      const e = endpoint(a);
      await store.createEndpoint(e, LIMIT);
      expect(await store.getEndpoint(a, e.id)).toEqual(e);
      expect(await store.getEndpoint(b, e.id)).toBeNull();
      expect(await store.listEndpoints(b)).toEqual([]);
      expect(await store.countEndpoints(a)).toBe(1);
      expect(await store.deleteEndpoint(b, e.id)).toBe(false);
      expect(await store.enqueueTest(b, e.id, NOW, LIMIT)).toBe('no_endpoint');
      expect(await store.listAttempts(b, e.id, 10)).toBeNull();
      expect(await store.deleteEndpoint(a, e.id)).toBe(true);
      expect(await store.getEndpoint(a, e.id)).toBeNull();
    });

    it('writes an event with the status change, carrying the record as that change left it', async () => {
      const o = org();
      const e = endpoint(o);
      await store.createEndpoint(e, LIMIT);
      const id = await readyDocument(o);
      const [message, ...rest] = await claimAll();
      expect(rest).toEqual([]);
      expect(message).toMatchObject({ endpointId: e.id, orgId: o, type: 'document.ready', attempt: 1 });
      expect(message?.id).toMatch(/^msg_[0-9a-f]{32}$/);
      expect(message?.record).toMatchObject({
        id,
        orgId: o,
        status: 'ready',
        chunkCount: 1,
        metadata: { team: 'a' },
        partition: 'support',
      });
      expect(message?.record?.createdAt).toBeInstanceOf(Date);
      expect(message?.url).toBe(e.url);
      expect(message?.secret).toBe(e.secret);
    });

    it('writes nothing for orgs without an endpoint subscribed to the event', async () => {
      const o = org();
      await store.createEndpoint(endpoint(o, { events: ['document.failed'] }), LIMIT);
      await store.createEndpoint(endpoint(org()), LIMIT);
      await readyDocument(o);
      expect(await claimAll()).toEqual([]);
      expect((await store.stats()).depth).toBe(0);
    });

    it('writes document.failed and document.deleted, one message per subscribed endpoint', async () => {
      const o = org();
      const e1 = endpoint(o);
      const e2 = endpoint(o, { events: ['document.deleted'] });
      await store.createEndpoint(e1, LIMIT);
      await store.createEndpoint(e2, LIMIT);
      const doc = newDoc(o);
      await h.documents.createDocuments([doc]);
      await h.documents.markFailed(doc.id, { code: 'corrupt', message: 'bad bytes' });
      expect(await h.documents.deleteDocument(org(), doc.id)).toBeNull();
      expect(await h.documents.deleteDocument(o, doc.id)).not.toBeNull();
      const claimed = await claimAll();
      const seen = claimed.map(
        (m) => `${m.endpointId === e1.id ? 'e1' : 'e2'} ${m.type} ${m.record?.status}`,
      );
      expect(seen.sort()).toEqual([
        'e1 document.deleted failed',
        'e1 document.failed failed',
        'e2 document.deleted failed',
      ]);
      expect(claimed.find((m) => m.type === 'document.failed')?.record?.error).toEqual({
        code: 'corrupt',
        message: 'bad bytes',
      });
    });

    it('wakes an onEnqueued listener once a message has committed, never for an event no endpoint takes', async () => {
      expect(store.onEnqueued).toBeTypeOf('function');
      // Each wake-up claims at once, as a dispatcher does: a claim that finds the message shows the
      // write had committed before the listener was called.
      const claims: number[] = [];
      let pass = Promise.resolve();
      const unsubscribe = store.onEnqueued!(() => {
        pass = pass.then(async () => {
          claims.push((await claimAll()).length);
        });
      });
      const found = () => claims.filter((n) => n > 0);
      // Lets wake-ups already sent arrive (a notification comes with its commit), then their claims end.
      const letWakeUpsEnd = async () => {
        await new Promise((resolve) => setTimeout(resolve, 250));
        await pass;
      };
      try {
        const busy = org();
        const quiet = org();
        await store.createEndpoint(endpoint(busy), LIMIT);
        await store.createEndpoint(endpoint(quiet, { events: ['document.failed'] }), LIMIT);
        // A listener may also be woken once as it starts listening; this first message is claimed
        // by one wake-up or the other.
        await readyDocument(busy);
        await waitFor(() => found().length === 1);
        await letWakeUpsEnd();
        const before = claims.length;
        await readyDocument(quiet);
        await readyDocument(busy);
        await waitFor(() => found().length === 2);
        await letWakeUpsEnd();
        expect(claims.slice(before)).toEqual([1]);
      } finally {
        unsubscribe();
      }
      const after = claims.length;
      await readyDocument(org());
      const o = org();
      await store.createEndpoint(endpoint(o), LIMIT);
      await readyDocument(o);
      await letWakeUpsEnd();
      expect(claims.length).toBe(after);
      expect(await claimAll()).toHaveLength(1);
    });

    it('hands a message to one claimer until its lease runs out, then again with the same id', async () => {
      const o = org();
      const e = endpoint(o);
      await store.createEndpoint(e, LIMIT);
      await readyDocument(o);
      const [first] = await store.claimDue('a/1', later(0), later(30_000), upTo(10));
      expect(first).toBeDefined();
      expect(await h.other.claimDue('b/2', later(1000), later(31_000), upTo(10))).toEqual([]);
      const [again] = await h.other.claimDue('b/2', later(30_001), later(60_000), upTo(10));
      expect(again?.id).toBe(first?.id);
      expect(again?.attempt).toBe(2);
      // The first owner lost its lease: its settle writes nothing.
      expect(
        await store.settle(first as ClaimedMessage, DELIVERED, retryAt(null), later(30_002), 100),
      ).toBeNull();
      expect(
        await h.other.settle(again as ClaimedMessage, DELIVERED, retryAt(null), later(30_002), 100),
      ).toBe('delivered');
      expect((await store.stats()).depth).toBe(0);
      expect((await store.listAttempts(o, e.id, 10))?.map((a) => a.attempt)).toEqual([2]);
    });

    it('concurrent claimers never share a message', async () => {
      const o = org();
      await store.createEndpoint(endpoint(o), LIMIT);
      for (let i = 0; i < 20; i++) await readyDocument(o);
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          (i % 2 ? h.other : store).claimDue(`c/${i}`, later(0), later(30_000), upTo(5)),
        ),
      );
      const ids = results.flat().map((m) => m.id);
      expect(ids).toHaveLength(20);
      expect(new Set(ids).size).toBe(20);
    });

    it('claims across orgs in turn, not oldest first: a newer message of a quiet org is not behind a busy one', async () => {
      const busy = org();
      const quiet = org();
      const eBusy = endpoint(busy);
      const eQuiet = endpoint(quiet);
      await store.createEndpoint(eBusy, LIMIT);
      await store.createEndpoint(eQuiet, LIMIT);
      for (let i = 0; i < 10; i++) await queueTest(busy, eBusy.id, later(i));
      const quietId = await queueTest(quiet, eQuiet.id, later(100));
      const claimed = await store.claimDue('a/1', later(1000), later(31_000), upTo(3));
      expect(claimed).toHaveLength(3);
      expect(claimed.map((m) => m.id)).toContain(quietId);
      // Within an org, the oldest due first.
      expect(claimed.filter((m) => m.orgId === busy).map((m) => m.createdAt)).toEqual([later(0), later(1)]);
    });

    it("caps an org's and an endpoint's messages in flight, counting every claimer's live leases", async () => {
      const a = org();
      const b = org();
      const ea = [endpoint(a), endpoint(a), endpoint(a)];
      const eb = endpoint(b);
      for (const e of [...ea, eb]) await store.createEndpoint(e, LIMIT);
      for (const e of ea) for (let i = 0; i < 4; i++) await queueTest(a, e.id, later(i));
      await queueTest(b, eb.id, later(50));
      const perEndpoint = (ms: ClaimedMessage[]) =>
        Math.max(0, ...ea.map((e) => ms.filter((m) => m.endpointId === e.id).length));
      const first = await store.claimDue('a/1', later(100), later(30_000), upTo(20, 3, 2));
      expect(first.filter((m) => m.orgId === a)).toHaveLength(3);
      expect(perEndpoint(first)).toBeLessThanOrEqual(2);
      expect(first.filter((m) => m.orgId === b)).toHaveLength(1);
      // Another process sees the org at its cap while those leases live.
      expect(await h.other.claimDue('b/2', later(200), later(30_000), upTo(20, 3, 2))).toEqual([]);
      // A settled message frees its slot.
      const done = first.find((m) => m.orgId === a) as ClaimedMessage;
      expect(await store.settle(done, DELIVERED, retryAt(null), later(300), 100)).toBe('delivered');
      const next = await h.other.claimDue('b/2', later(400), later(30_000), upTo(20, 3, 2));
      expect(next).toHaveLength(1);
      expect(next[0]?.orgId).toBe(a);
      // Leases that ran out (their owner died) free theirs.
      const after = await h.other.claimDue('b/2', later(30_001), later(60_000), upTo(20, 3, 2));
      expect(after.filter((m) => m.orgId === a)).toHaveLength(3);
      expect(perEndpoint(after)).toBeLessThanOrEqual(2);
    });

    it('concurrent claimers together stay within the org cap', async () => {
      const a = org();
      const ea = [endpoint(a), endpoint(a), endpoint(a)];
      for (const e of ea) await store.createEndpoint(e, LIMIT);
      for (const e of ea) for (let i = 0; i < 5; i++) await queueTest(a, e.id, later(i));
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          (i % 2 ? h.other : store).claimDue(`c/${i}`, later(100), later(30_000), upTo(5, 4, 2)),
        ),
      );
      const claimed = results.flat();
      expect(claimed).toHaveLength(4);
      for (const e of ea) expect(claimed.filter((m) => m.endpointId === e.id).length).toBeLessThanOrEqual(2);
    });

    it('refuses a test message once the endpoint has maxPending waiting, and takes one again after a delivery', async () => {
      const o = org();
      const e = endpoint(o);
      await store.createEndpoint(e, LIMIT);
      for (let i = 0; i < 3; i++)
        expect(await store.enqueueTest(o, e.id, later(i), 3)).toHaveProperty('messageId');
      expect(await store.enqueueTest(o, e.id, later(3), 3)).toBe('backlog_full');
      expect(await store.countPending(e.id)).toBe(3);
      const [m] = await store.claimDue('a/1', later(10), later(30_000), upTo(1));
      await store.settle(m as ClaimedMessage, DELIVERED, retryAt(null), later(11), 100);
      expect(await store.enqueueTest(o, e.id, later(12), 3)).toHaveProperty('messageId');
      expect(await store.enqueueTest(o, e.id, later(13), 3)).toBe('backlog_full');
    });

    it('an event beyond maxPending drops the oldest waiting message (never one in flight) and counts it', async () => {
      const o = org();
      const e = endpoint(o);
      const other = endpoint(o);
      await store.createEndpoint(e, LIMIT);
      await store.createEndpoint(other, LIMIT);
      // Older than the event to come, which the document store stamps with the real clock.
      const past = (ms: number) => new Date(Date.now() - 60_000 + ms);
      const first = await queueTest(o, e.id, past(0));
      const second = await queueTest(o, e.id, past(1_000));
      // The oldest is in flight: it is kept, and the next oldest goes instead.
      const [held] = await store.claimDue('a/1', past(500), later(60_000), upTo(1));
      expect(held?.id).toBe(first);
      const bounded = h.documentsBounded(2);
      const doc = newDoc(o);
      await bounded.createDocuments([doc]);
      expect(await bounded.saveIndex(doc.id, indexResult(['alpha']))).toBe(true);
      expect(await store.countPending(e.id)).toBe(2);
      expect((await store.getEndpoint(o, e.id))?.droppedMessages).toBe(1);
      // The other endpoint had room: nothing of its was dropped.
      expect(await store.countPending(other.id)).toBe(1);
      expect((await store.getEndpoint(o, other.id))?.droppedMessages).toBe(0);
      const waiting = await store.claimDue(
        'a/1',
        later(10 * 86_400_000),
        later(10 * 86_400_000 + 1),
        upTo(10),
      );
      const types = waiting.filter((m) => m.endpointId === e.id).map((m) => `${m.id === first} ${m.type}`);
      expect(types.sort()).toEqual(['false document.ready', 'true webhook.test']);
      expect(waiting.map((m) => m.id)).not.toContain(second);
    });

    it('retries a failed attempt at the planned time, logs every attempt, and gives up when told', async () => {
      const o = org();
      const e = endpoint(o);
      await store.createEndpoint(e, LIMIT);
      await readyDocument(o);
      const [m1] = await store.claimDue('a/1', later(0), later(30_000), upTo(10));
      expect(await store.settle(m1 as ClaimedMessage, FAILED, retryAt(later(60_000)), later(1), 100)).toBe(
        'retrying',
      );
      expect(await store.claimDue('a/1', later(59_999), later(90_000), upTo(10))).toEqual([]);
      const [m2] = await store.claimDue('a/1', later(60_000), later(90_000), upTo(10));
      expect(m2).toMatchObject({ id: m1?.id, attempt: 2 });
      expect((await store.getEndpoint(o, e.id))?.failingSince).toEqual(later(1));
      expect(await store.settle(m2 as ClaimedMessage, FAILED, retryAt(null), later(60_001), 100)).toBe(
        'gave_up',
      );
      expect(await store.countPending(e.id)).toBe(0);
      const log = await store.listAttempts(o, e.id, 10);
      expect(log?.map((a) => [a.attempt, a.statusCode, a.outcome])).toEqual([
        [2, 503, 'gave_up'],
        [1, 503, 'retrying'],
      ]);
      expect(log?.[0]).toMatchObject({ messageId: m1?.id, eventType: 'document.ready', error: 'HTTP 503' });
    });

    it('a success ends the failure run; 410 disables the endpoint and drops its messages', async () => {
      const o = org();
      const e = endpoint(o);
      await store.createEndpoint(e, LIMIT);
      await readyDocument(o);
      await readyDocument(o);
      const [m1, m2] = await claimAll();
      await store.settle(m1 as ClaimedMessage, FAILED, retryAt(later(1)), later(0), 100);
      expect((await store.getEndpoint(o, e.id))?.failingSince).not.toBeNull();
      await store.settle(m2 as ClaimedMessage, DELIVERED, retryAt(null), later(0), 100);
      expect((await store.getEndpoint(o, e.id))?.failingSince).toBeNull();
      const [m3] = await claimAll();
      const gone: AttemptResult = { statusCode: 410, durationMs: 1, error: 'gone', kind: 'gone' };
      expect(await store.settle(m3 as ClaimedMessage, gone, retryAt(later(5)), later(2), 100)).toBe(
        'endpoint_disabled',
      );
      expect(await store.getEndpoint(o, e.id)).toMatchObject({
        disabledReason: 'gone',
        disabledAt: later(2),
      });
      expect(await store.countPending(e.id)).toBe(0);
      // A disabled endpoint gets no new events and no test messages.
      await readyDocument(o);
      expect(await claimAll()).toEqual([]);
      expect(await store.enqueueTest(o, e.id, NOW, LIMIT)).toBe('no_endpoint');
    });

    it('disables an endpoint whose failure run began before the threshold', async () => {
      const o = org();
      const e = endpoint(o);
      await store.createEndpoint(e, LIMIT);
      await readyDocument(o);
      await readyDocument(o);
      const [m1, m2] = await claimAll();
      expect(await store.settle(m1 as ClaimedMessage, FAILED, retryAt(later(1)), later(0), 100)).toBe(
        'retrying',
      );
      expect(
        await store.settle(
          m2 as ClaimedMessage,
          FAILED,
          retryAt(later(1), later(0)),
          later(5 * 86_400_000),
          100,
        ),
      ).toBe('endpoint_disabled');
      expect(await store.getEndpoint(o, e.id)).toMatchObject({ disabledReason: 'failing' });
      expect(await store.countPending(e.id)).toBe(0);
    });

    it('keeps the delivery log to the newest attempts', async () => {
      const o = org();
      const e = endpoint(o);
      await store.createEndpoint(e, LIMIT);
      for (let i = 0; i < 5; i++) {
        await queueTest(o, e.id, NOW);
        const [m] = await claimAll();
        await store.settle(m as ClaimedMessage, DELIVERED, retryAt(null), later(i), 3);
      }
      const log = await store.listAttempts(o, e.id, 10);
      expect(log?.map((a) => a.at)).toEqual([later(4), later(3), later(2)]);
      expect(log?.every((a) => a.eventType === 'webhook.test' && a.outcome === 'delivered')).toBe(true);
    });

    it('reports depth and the oldest undelivered message', async () => {
      const o = org();
      const e = endpoint(o);
      await store.createEndpoint(e, LIMIT);
      expect(await store.stats()).toEqual({ depth: 0, oldest: null });
      await queueTest(o, e.id, later(5));
      await queueTest(o, e.id, later(9));
      expect(await store.stats()).toEqual({ depth: 2, oldest: later(5) });
    });

    it('deleting an endpoint or purging the org removes its messages and log', async () => {
      const a = org();
      const b = org();
      const ea = endpoint(a);
      const eb = endpoint(b);
      await store.createEndpoint(ea, LIMIT);
      await store.createEndpoint(endpoint(a), LIMIT);
      await store.createEndpoint(eb, LIMIT);
      await readyDocument(a);
      await readyDocument(b);
      const claimed = await claimAll();
      for (const m of claimed) await store.settle(m, FAILED, retryAt(later(1)), later(0), 100);
      expect(await store.purgeOrg(a)).toBe(2);
      expect(await store.listEndpoints(a)).toEqual([]);
      expect((await store.stats()).depth).toBe(1);
      expect(await store.listAttempts(b, eb.id, 10)).toHaveLength(1);
      expect(await store.deleteEndpoint(b, eb.id)).toBe(true);
      expect((await store.stats()).depth).toBe(0);
    });

    it('holds the endpoint limit under concurrent creates: exactly the limit made, the rest refused', async () => {
      const o = org();
      const service = new WebhookService(
        store,
        { now: () => NOW },
        {
          maxEndpointsPerOrg: 10,
          screenUrl: () => null,
          logLimit: 100,
          maxPending: LIMIT,
        },
      );
      const results = await Promise.allSettled(
        Array.from({ length: 30 }, (_, i) => service.create(o, { url: `https://hooks.example.com/${i}` })),
      );
      const made = results.filter((r) => r.status === 'fulfilled');
      const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
      expect(made).toHaveLength(10);
      expect(refused).toHaveLength(20);
      expect(
        refused.every((e) => e instanceof ApiError && /at most 10 webhook endpoints/.test(e.detail)),
      ).toBe(true);
      expect(await store.countEndpoints(o)).toBe(10);
    });
  });
}
