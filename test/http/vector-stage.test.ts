// The vector stage in a running service (EMBEDDINGS=openai against a real OpenAI-protocol server
// on 127.0.0.1), embedded and, in the scale-out project, on PostgreSQL + Redis: while the provider
// is down, ingest answers 202 and documents turn ready and are found by keyword; once it is back,
// every document's vectors turn ready in the background, and a deleted document's go with it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../contract/support.js';
import { EmbeddingsServer } from '../helpers/embeddings-server.js';
import { type Harness, startHarness } from '../helpers/harness.js';

let provider: EmbeddingsServer;
let h: Harness;

beforeAll(async () => {
  provider = await new EmbeddingsServer({ dimensions: 16 }).start();
  h = await startHarness({ env: provider.env() });
});

afterAll(async () => {
  await h?.close();
  await provider?.stop();
});

async function vectorStates(ids: string[]): Promise<string[]> {
  const profile = await h.runtime.vectorStageStore.profileId({
    provider: 'openai',
    model: 'test-embedding',
    dimensions: 16,
  });
  const states = await h.runtime.vectorStageStore.vectorStates(ids, profile);
  return ids.map((id) => states.get(id)?.status ?? 'none');
}

describe('vectors as a second stage', () => {
  it('a provider outage blocks neither ingest nor keyword search; vectors catch up after it', async () => {
    await provider.stop();
    const ids = await h.ingest(h.orgA, ['wombat burrow notes', 'wombat diet', 'a third wombat text']);
    const records = await h.waitForDone(h.orgA, ids);
    expect(records.map((r) => r.status)).toEqual(['ready', 'ready', 'ready']);
    const found = await h.request('POST', '/v1/query', { body: { query: 'wombat', top_k: 10 } });
    expect(found.statusCode).toBe(200);
    expect(new Set(found.json().results.map((r: { document_id: string }) => r.document_id))).toEqual(
      new Set(ids),
    );
    expect(await vectorStates(ids)).not.toContain('ready');
    const pending = (await h.request('GET', `/v1/documents/${ids[1]}`)).json();
    expect(pending.vectors).toMatchObject({ status: 'pending', model: 'test-embedding' });

    await provider.start();
    await waitFor(
      "every document's vectors",
      async () => (await vectorStates(ids)).every((s) => s === 'ready'),
      50_000,
      100,
    );

    const listed = await h.request('GET', `/v1/documents?ids=${ids.join(',')}`);
    for (const doc of listed.json().documents) {
      expect(doc.vectors).toEqual({ status: 'ready', model: 'test-embedding', error: null });
    }

    const deleted = await h.request('DELETE', `/v1/documents/${ids[0]}`);
    expect(deleted.statusCode).toBe(204);
    const profile = await h.runtime.vectorStageStore.profileId({
      provider: 'openai',
      model: 'test-embedding',
      dimensions: 16,
    });
    expect(await h.runtime.vectorStageStore.countVectors(ids[0]!, profile)).toBe(0);
    const q = (await h.runtime.embedder!.embed(['wombat burrow notes']))[0]!;
    const hits = await h.runtime.vectorSearch.search({
      orgId: h.orgA.orgId,
      profileId: profile,
      vector: q,
      limit: 10,
    });
    expect(hits.map((x) => x.documentId).sort()).toEqual([ids[1], ids[2]].sort());
    // Another org sees none of them.
    expect(
      await h.runtime.vectorSearch.search({ orgId: h.orgB.orgId, profileId: profile, vector: q, limit: 10 }),
    ).toEqual([]);
  });
});
