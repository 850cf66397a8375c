// Idempotency-Key on the ingest operations: replay, mismatch, concurrency, scope and expiry.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock, type Harness, startHarness } from '../helpers/harness.js';

describe('Idempotency-Key', () => {
  const clock = new FakeClock(new Date('2026-05-01T00:00:00.000Z'));
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ clock, worker: false });
  });
  afterAll(() => h.close());

  const ingest = (key: string, body: unknown, apiKey = h.orgA.apiKey) =>
    h.request('POST', '/v1/ingest', { key: apiKey, body, headers: { 'idempotency-key': key } });
  const count = async (apiKey = h.orgA.apiKey) =>
    (await h.request('GET', '/v1/documents?limit=100', { key: apiKey })).json().documents.length as number;

  it('replays the first 202 for the same key and body, queuing nothing new', async () => {
    const body = { documents: [{ text: 'first', metadata: { a: '1', b: '2' } }], chunk_size: 256 };
    const first = await ingest('key-replay', body);
    expect(first.statusCode).toBe(202);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const before = await count();
    // Same request with its keys in another order.
    const again = await ingest('key-replay', {
      chunk_size: 256,
      documents: [{ metadata: { b: '2', a: '1' }, text: 'first' }],
    });
    expect(again.statusCode).toBe(202);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    expect(await count()).toBe(before);
  });

  it('422 for the same key with a different body', async () => {
    await ingest('key-mismatch', { documents: [{ text: 'one' }] });
    const res = await ingest('key-mismatch', { documents: [{ text: 'two' }] });
    expect(res.statusCode).toBe(422);
    expect(res.json().code).toBe('idempotency_key_reused');
  });

  it('the same key on another operation is a different request (422)', async () => {
    await ingest('key-op', { documents: [{ text: 'one' }] });
    const res = await h.request('POST', '/v1/ingest/url', {
      body: { documents: [{ text: 'one' }] },
      headers: { 'idempotency-key': 'key-op' },
    });
    expect(res.statusCode).toBe(400);
  });

  it('concurrent duplicates create one set of documents; the others get 409 or the replay', async () => {
    const body = { documents: [{ text: 'concurrent' }] };
    const responses = await Promise.all(Array.from({ length: 8 }, () => ingest('key-concurrent', body)));
    const accepted = responses.filter((r) => r.statusCode === 202);
    const conflicts = responses.filter((r) => r.statusCode === 409);
    expect(accepted.length + conflicts.length).toBe(8);
    expect(new Set(accepted.map((r) => r.json().document_ids[0])).size).toBe(1);
    for (const r of conflicts) {
      expect(r.json().code).toBe('idempotency_key_in_use');
      expect(r.headers['retry-after']).toBeDefined();
    }
  });

  it('keys are scoped to the org', async () => {
    const body = { documents: [{ text: 'scoped' }] };
    const a = await ingest('key-shared', body);
    const b = await ingest('key-shared', body, h.orgB.apiKey);
    expect(b.statusCode).toBe(202);
    expect(b.json().document_ids).not.toEqual(a.json().document_ids);
    expect(b.headers['idempotent-replayed']).toBeUndefined();
  });

  it('a request that failed does not use up its key', async () => {
    const bad = await ingest('key-retry', {
      documents: [{ text: 'x' }],
      chunk_size: 128,
      chunk_overlap: 200,
    });
    expect(bad.statusCode).toBe(400);
    const good = await ingest('key-retry', {
      documents: [{ text: 'x' }],
      chunk_size: 256,
      chunk_overlap: 200,
    });
    expect(good.statusCode).toBe(202);
  });

  it('400 for an over-long or malformed key', async () => {
    for (const key of ['k'.repeat(256), 'has space', '']) {
      const res = await ingest(key, { documents: [{ text: 'x' }] });
      expect(res.statusCode, JSON.stringify(key)).toBe(400);
      expect(res.json().errors[0].pointer).toBe('/header/idempotency-key');
    }
  });

  it('a key expires after 24 hours', async () => {
    const body = { documents: [{ text: 'expiring' }] };
    const first = await ingest('key-expiry', body);
    clock.advance(23 * 3600_000);
    expect((await ingest('key-expiry', body)).json()).toEqual(first.json());
    clock.advance(2 * 3600_000);
    const later = await ingest('key-expiry', body);
    expect(later.statusCode).toBe(202);
    expect(later.json().document_ids).not.toEqual(first.json().document_ids);
  });

  it('replays a file upload without storing the file twice', async () => {
    const form = () => {
      const f = new FormData();
      f.append('file', new Blob(['idempotent upload body']), 'same.txt');
      return new Request('http://x/', { method: 'POST', body: f });
    };
    const send = async (key: string) => {
      const req = form();
      return h.request('POST', '/v1/ingest/file', {
        payload: Buffer.from(await req.arrayBuffer()),
        headers: { 'content-type': req.headers.get('content-type')!, 'idempotency-key': key },
      });
    };
    const first = await send('key-file');
    expect(first.statusCode).toBe(202);
    const before = await count();
    const again = await send('key-file');
    expect(again.statusCode).toBe(202);
    expect(again.json()).toEqual(first.json());
    expect(await count()).toBe(before);
  });
});
