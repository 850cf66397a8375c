// Backpressure: past MAX_QUEUED_DOCUMENTS waiting documents, ingest answers 503 with
// Retry-After while reads keep working; once workers catch up, ingest is accepted again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../helpers/harness.js';

describe('backpressure', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ worker: false, env: { MAX_QUEUED_DOCUMENTS: '5' } });
  });
  afterAll(() => h.close());

  it('refuses ingest past the backlog limit, keeps reads working, and recovers', async () => {
    const ids = await h.ingest(h.orgA, ['one', 'two', 'three', 'four', 'five']);
    const refused = await h.request('POST', '/v1/ingest', { body: { documents: [{ text: 'six' }] } });
    expect(refused.statusCode).toBe(503);
    expect(refused.json().code).toBe('overloaded');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    const url = await h.request('POST', '/v1/ingest/url', { body: { url: 'https://example.com/a.pdf' } });
    expect(url.statusCode).toBe(503);

    expect((await h.request('GET', '/v1/documents')).statusCode).toBe(200);
    expect((await h.request('GET', '/v1/usage')).statusCode).toBe(200);
    expect((await h.request('POST', '/v1/query', { body: { query: 'one' } })).statusCode).toBe(200);

    const worker = h.runtime.startWorker();
    try {
      await h.waitForDone(h.orgA, ids);
      // The backlog count is cached for at most a second.
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const accepted = await h.request('POST', '/v1/ingest', { body: { documents: [{ text: 'six' }] } });
      expect(accepted.statusCode).toBe(202);
    } finally {
      await worker.stop();
    }
  });
});
