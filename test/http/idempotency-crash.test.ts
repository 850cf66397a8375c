// Idempotency-Key across a server that dies between writing and answering: the response is
// stored in the write's own transaction, so a retry after the in-flight record went stale replays
// it and writes nothing a second time. The death is simulated by losing the store's separate
// completion step, the only thing a kill at that moment would lose.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { IDEMPOTENCY_STALE_IN_FLIGHT_MS } from '../../src/domain/idempotency.js';
import type { IdempotencyStore } from '../../src/domain/ports.js';
import { FakeClock, type Harness, startHarness } from '../helpers/harness.js';

const LOOPBACK = '127.0.0.1:9';

describe('Idempotency-Key when the answer is lost after the write', () => {
  const clock = new FakeClock(new Date('2026-05-01T00:00:00.000Z'));
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ clock, env: { URL_FETCH_ALLOW: LOOPBACK } });
    const { store } = h.runtime.appDeps.idempotency as unknown as { store: IdempotencyStore };
    vi.spyOn(store, 'complete').mockImplementation(async () => {});
  });
  afterAll(() => h.close());

  // Each document with its newest version: what a second write would change (processing meanwhile
  // only moves a pending version to current).
  const listed = async () =>
    (await h.request('GET', '/v1/documents?limit=100'))
      .json()
      .documents.map(
        (d: { id: string; version: number; pending_version?: { version: number } | null }) =>
          `${d.id}@${Math.max(d.version, d.pending_version?.version ?? 0)}`,
      );
  const twice = async (send: () => Promise<{ statusCode: number; json(): unknown; headers: object }>) => {
    const first = await send();
    expect(first.statusCode).toBe(202);
    const before = await listed();
    clock.advance(IDEMPOTENCY_STALE_IN_FLIGHT_MS + 1_000);
    const retry = await send();
    expect(retry.statusCode).toBe(202);
    expect(retry.headers).toMatchObject({ 'idempotent-replayed': 'true' });
    expect(retry.json()).toEqual(first.json());
    expect(await listed()).toEqual(before);
    return first.json() as Record<string, unknown>;
  };
  const withKey = (key: string) => ({ 'idempotency-key': key });

  it('text ingest, with a new document and a new version of a keyed one', async () => {
    const keyed = { documents: [{ text: 'keyed', external_id: 'ext-1' }] };
    expect((await h.request('POST', '/v1/ingest', { body: keyed })).statusCode).toBe(202);
    const body = { documents: [{ text: 'plain' }, { text: 'keyed again', external_id: 'ext-1' }] };
    await twice(() => h.request('POST', '/v1/ingest', { body, headers: withKey('crash-text') }));
  });

  it('URL ingest', async () => {
    const body = { url: `http://${LOOPBACK}/doc.txt` };
    await twice(() => h.request('POST', '/v1/ingest/url', { body, headers: withKey('crash-url') }));
  });

  it('file upload', async () => {
    const form = new FormData();
    form.append('file', new Blob(['a file whose answer was lost']), 'lost.txt');
    const request = new Request('http://x/', { method: 'POST', body: form });
    const payload = Buffer.from(await request.arrayBuffer());
    const headers = { 'content-type': request.headers.get('content-type')!, ...withKey('crash-file') };
    await twice(() => h.request('POST', '/v1/ingest/file', { payload, headers }));
  });

  it('new content and reprocessing of a document', async () => {
    const [id] = await h.ingest(h.orgA, ['to be replaced']);
    const content = await twice(() =>
      h.request('PUT', `/v1/documents/${id}/content`, {
        body: { text: 'replaced' },
        headers: withKey('crash-content'),
      }),
    );
    expect(content.version).toBe(2);
    await h.waitForDone(h.orgA, [id!]);
    const reprocessed = await twice(() =>
      h.request('POST', `/v1/documents/${id}/reprocess`, {
        body: { chunk_size: 128 },
        headers: withKey('crash-reprocess'),
      }),
    );
    expect(reprocessed.version).toBe(3);
  });
});
