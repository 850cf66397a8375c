// Where the vector stage meets versions and webhooks: a document's vectors turn ready with a
// signed `document.vectors_ready` event, and a new version (large enough that SQLite writes it in
// slices and moves the current chunk rows out at the swap) gets vectors for its own chunks, with
// the old version's gone. Embedded, and on PostgreSQL + Redis in the scale-out project.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../contract/support.js';
import { EmbeddingsServer } from '../helpers/embeddings-server.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

const PROFILE = { provider: 'openai', model: 'test-embedding', dimensions: 16 };

let provider: EmbeddingsServer;
let h: Harness;
let dispatcher: { stop(): Promise<void> };
const receiver = new WebhookReceiver();

beforeAll(async () => {
  provider = await new EmbeddingsServer({ dimensions: 16 }).start();
  await receiver.start();
  h = await startHarness({
    env: {
      EMBEDDINGS: 'openai',
      EMBEDDINGS_URL: provider.url,
      EMBEDDINGS_MODEL: PROFILE.model,
      URL_FETCH_ALLOW: `127.0.0.1:${receiver.port}`,
      WEBHOOK_POLL_MS: '20',
      WEBHOOK_RETRY_BASE_MS: '40',
      WEBHOOK_RETRY_MAX_MS: '200',
    },
  });
  dispatcher = h.runtime.startDispatcher();
});

afterAll(async () => {
  await dispatcher?.stop();
  await h?.close();
  await receiver.stop();
  await provider?.stop();
});

/** About 400 KB of sentences naming `word`: written in slices on SQLite, and more chunks than SQLite deletes in one go, so a swap moves them out. */
function largeText(word: string): string {
  return Array.from(
    { length: 4_000 },
    (_, i) => `Sentence ${i} is about the ${word} and what the ${word} does in season ${i % 17}.`,
  ).join('\n');
}

describe('vectors, versions and webhooks together', () => {
  it('sends document.vectors_ready, and a new version gets vectors for its own chunks only', async () => {
    const path = '/vectors';
    const created = await h.request('POST', '/v1/webhooks', {
      body: { url: receiver.url(path), events: ['document.ready', 'document.vectors_ready'] },
    });
    expect(created.statusCode, created.body).toBe(201);
    receiver.expect(path, created.json().secret);

    const [id] = await h.ingest(h.orgA, [largeText('otter')], { chunk_size: 128, chunk_overlap: 0 });
    const events = (type: string) =>
      receiver.at(path).filter((w) => w.body.type === type && w.body.data.id === id);
    await waitFor(
      'the first vectors_ready event',
      () => events('document.vectors_ready').length === 1,
      150_000,
    );
    const first = events('document.vectors_ready')[0]!;
    expect(first.verified).toBe(true);
    expect(first.body.data).toMatchObject({
      id,
      status: 'ready',
      version: 1,
      vectors: { status: 'ready', model: PROFILE.model, error: null },
    });
    const profile = await h.runtime.vectorStageStore.profileId(PROFILE);
    const v1 = (await h.request('GET', `/v1/documents/${id}`)).json();
    // Over the 500 chunks SQLite deletes at once: the swap moves them out under a holder row.
    expect(v1.chunk_count).toBeGreaterThan(500);
    expect(await h.runtime.vectorStageStore.countVectors(id!, profile)).toBe(v1.chunk_count);

    const put = await h.request('PUT', `/v1/documents/${id}/content`, { body: { text: largeText('heron') } });
    expect(put.statusCode, put.body).toBe(202);
    await waitFor(
      'the second vectors_ready event',
      () => events('document.vectors_ready').length === 2,
      150_000,
    );
    const second = events('document.vectors_ready')[1]!;
    expect(second.body.data).toMatchObject({ version: 2, vectors: { status: 'ready' } });
    expect(events('document.ready').map((w) => w.body.data.version)).toEqual([1, 2]);

    const v2 = (await h.request('GET', `/v1/documents/${id}`)).json();
    expect(v2).toMatchObject({ version: 2, pending_version: null, vectors: { status: 'ready' } });
    // Exactly the new chunks have vectors: none of version 1's stayed behind.
    expect(await h.runtime.vectorStageStore.countVectors(id!, profile)).toBe(v2.chunk_count);
    const q = (await h.runtime.embedder!.embed(['heron season']))[0]!;
    const hits = await h.runtime.vectorSearch.search({
      orgId: h.orgA.orgId,
      profileId: profile,
      vector: q,
      limit: 5,
    });
    expect(hits.length).toBeGreaterThan(0);
    for (const hit of hits) expect(hit.documentId).toBe(id);
  }, 240_000);
});
