// POST /v1/query's modes in a running service with an embedding provider (EMBEDDINGS=openai against
// a real OpenAI-protocol server on 127.0.0.1, whose vectors are bags of words: texts sharing words
// are near), embedded and, in the scale-out project, on PostgreSQL + Redis: hybrid by default,
// both lists filtered alike, never another org's or a deleted document's chunks, a provider
// outage answered with a 503 (semantic) or keyword results (hybrid), one usage count per query.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmbeddingsServer } from '../helpers/embeddings-server.js';
import { type Harness, startHarness, type TestOrg } from '../helpers/harness.js';

interface Result {
  document_id: string;
  chunk_index: number;
  score: number;
  scores: { keyword: number | null; semantic: number | null; rerank: number | null };
  metadata: Record<string, string>;
}

let provider: EmbeddingsServer;
let h: Harness;

beforeAll(async () => {
  provider = await new EmbeddingsServer({ dimensions: 64 }).start();
  h = await startHarness({ env: provider.env() });
});

afterAll(async () => {
  await h?.close();
  await provider?.stop();
});

/** Ingests documents with metadata and waits until each is ready with its vectors. */
async function ingestEmbedded(
  org: TestOrg,
  documents: Array<{ text: string; metadata?: Record<string, string> }>,
): Promise<string[]> {
  const res = await h.request('POST', '/v1/ingest', { key: org.apiKey, body: { documents } });
  expect(res.statusCode).toBe(202);
  const ids = res.json().document_ids as string[];
  await h.waitForVectors(org, ids);
  return ids;
}

async function query(org: TestOrg, body: Record<string, unknown>) {
  return h.request('POST', '/v1/query', { key: org.apiKey, body });
}

describe('query modes with an embedding provider', () => {
  let red: string[];
  let blue: string[];
  beforeAll(async () => {
    red = await ingestEmbedded(h.orgA, [
      { text: 'otter river fishing otter', metadata: { team: 'red' } },
      { text: 'otter river den', metadata: { team: 'red' } },
    ]);
    blue = await ingestEmbedded(h.orgA, [
      { text: 'otter lake swimming', metadata: { team: 'blue' } },
      { text: 'beaver dam river', metadata: { team: 'blue' } },
    ]);
  });

  it('defaults to hybrid, each result with its keyword score and cosine similarity', async () => {
    const res = await query(h.orgA, { query: 'otter river' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.mode).toBe('hybrid');
    expect(body.degraded).toBe(false);
    const results = body.results as Result[];
    // Matched by words and by vector: every chunk sharing a word with the query.
    expect(new Set(results.map((r) => r.document_id))).toEqual(new Set([...red, ...blue]));
    const best = results[0]!;
    expect(best.document_id).toBe(red[0]);
    // The keyword score as keyword mode gives it: BM25's share of the most the query could score.
    const keyword = (await query(h.orgA, { query: 'otter river', mode: 'keyword', top_k: 100 })).json()
      .results as Result[];
    for (const r of results) {
      const alone = keyword.find((k) => k.document_id === r.document_id && k.chunk_index === r.chunk_index);
      expect(r.scores.keyword).toBe(alone?.score ?? null);
      if (r.scores.keyword !== null) expect(r.scores.keyword).toBeLessThanOrEqual(1);
    }
    expect(best.scores.keyword).toBeGreaterThan(0);
    expect(best.scores.semantic).toBeGreaterThan(0.5);
    // The fused score: w/(60 + rank) summed over both lists, rank 1 in each.
    expect(best.score).toBeCloseTo(0.5 / 61 + 0.5 / 61, 10);
  });

  it('hybrid and semantic with a filter answer only chunks of matching documents', async () => {
    for (const mode of ['hybrid', 'semantic']) {
      const res = await query(h.orgA, { query: 'otter river', mode, filter: { team: 'blue' } });
      expect(res.statusCode).toBe(200);
      const results = res.json().results as Result[];
      expect(new Set(results.map((r) => r.document_id))).toEqual(new Set(blue));
      for (const r of results) expect(r.metadata.team).toBe('blue');
    }
    const named = await query(h.orgA, { query: 'otter river', mode: 'semantic', document_ids: [red[1]] });
    expect((named.json().results as Result[]).map((r) => r.document_id)).toEqual([red[1]]);
  });

  it('semantic mode: cosine scores, only keyword-less scores, and score_threshold on the cosine', async () => {
    const res = await query(h.orgA, { query: 'otter river den', mode: 'semantic' });
    const results = res.json().results as Result[];
    expect(res.json().mode).toBe('semantic');
    expect(results[0]!.document_id).toBe(red[1]);
    expect(results[0]!.score).toBeCloseTo(1, 5);
    for (const r of results) expect(r.scores).toEqual({ keyword: null, semantic: r.score, rerank: null });
    const strict = await query(h.orgA, { query: 'otter river den', mode: 'semantic', score_threshold: 0.99 });
    expect((strict.json().results as Result[]).map((r) => r.document_id)).toEqual([red[1]]);
  });

  it('max_chunks_per_document caps a document in hybrid mode', async () => {
    const [long] = await ingestEmbedded(h.orgA, [
      {
        text: Array.from({ length: 80 }, (_, i) => `Heron number ${i} heron heron heron.`).join(' '),
        metadata: { team: 'heron' },
      },
    ]);
    const [short] = await ingestEmbedded(h.orgA, [{ text: 'one heron', metadata: { team: 'heron' } }]);
    const filter = { team: 'heron' };
    const uncapped = (await query(h.orgA, { query: 'heron', top_k: 3, filter })).json().results as Result[];
    expect(uncapped.filter((r) => r.document_id === long).length).toBeGreaterThan(1);
    const capped = (
      await query(h.orgA, { query: 'heron', top_k: 3, filter, max_chunks_per_document: 1 })
    ).json().results as Result[];
    expect(capped.map((r) => r.document_id).sort()).toEqual([long, short].sort());
  });

  it("semantic results never include a deleted document or another org's chunks", async () => {
    const [mine, gone] = await ingestEmbedded(h.orgA, [
      { text: 'walrus tusk ice', metadata: { team: 'walrus' } },
      { text: 'walrus tusk ice floe', metadata: { team: 'walrus' } },
    ]);
    const theirs = await ingestEmbedded(h.orgB, [{ text: 'walrus tusk ice' }]);
    expect((await h.request('DELETE', `/v1/documents/${gone}`)).statusCode).toBe(204);
    for (const mode of ['semantic', 'hybrid']) {
      const results = (await query(h.orgA, { query: 'walrus tusk ice floe', mode, top_k: 100 })).json()
        .results as Result[];
      const ids = results.map((r) => r.document_id);
      expect(ids).toContain(mine);
      expect(ids).not.toContain(gone);
      expect(ids).not.toContain(theirs[0]);
    }
    const other = (await query(h.orgB, { query: 'walrus tusk ice floe', mode: 'semantic' })).json()
      .results as Result[];
    expect(other.map((r) => r.document_id)).toEqual(theirs);
  });

  it('counts one query per request whatever the mode', async () => {
    const org = await h.runtime.admin.createOrg('modes-usage');
    for (const mode of ['keyword', 'semantic', 'hybrid', undefined]) {
      const res = await h.request('POST', '/v1/query', {
        key: org.api_key,
        body: { query: 'otter', ...(mode === undefined ? {} : { mode }) },
      });
      expect(res.statusCode).toBe(200);
    }
    expect((await h.request('GET', '/v1/usage', { key: org.api_key })).json().total_queries).toBe(4);
  });

  it('provider down: semantic answers 503 embeddings_unavailable, hybrid the keyword hits, marked degraded', async () => {
    await provider.stop();
    try {
      // Queries never embedded before: the query-vector cache cannot answer them.
      const semantic = await query(h.orgA, { query: 'otter fishing outage', mode: 'semantic' });
      expect(semantic.statusCode).toBe(503);
      expect(semantic.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(semantic.json()).toMatchObject({ code: 'embeddings_unavailable', status: 503 });
      expect(Number(semantic.headers['retry-after'])).toBeGreaterThan(0);

      const hybrid = await query(h.orgA, { query: 'otter fishing down' });
      expect(hybrid.statusCode).toBe(200);
      expect(hybrid.json()).toMatchObject({
        mode: 'hybrid',
        degraded: true,
        degraded_reasons: ['embeddings_unavailable'],
      });
      const results = hybrid.json().results as Result[];
      expect(results[0]!.document_id).toBe(red[0]);
      for (const r of results) {
        expect(r.scores.semantic).toBeNull();
        expect(r.scores.keyword).toBeGreaterThan(0);
      }
    } finally {
      await provider.start();
    }
    const back = await query(h.orgA, { query: 'otter fishing down' });
    expect(back.json()).toMatchObject({ degraded: false, degraded_reasons: [] });
  });

  it('a rate-limited provider: the 503 carries its Retry-After', async () => {
    provider.failNext(1, 429, '7');
    const res = await query(h.orgA, { query: 'otter rate limited', mode: 'semantic' });
    expect(res.statusCode).toBe(503);
    expect(res.json().code).toBe('embeddings_unavailable');
    expect(res.headers['retry-after']).toBe('7');
    provider.recover();
  });
});
