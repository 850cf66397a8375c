// Reranking through POST /v1/query in a running service (RERANK=http against a rerank server on
// 127.0.0.1; embedded, and in the scale-out project on PostgreSQL + Redis): the reranker's order
// replaces the first stage's, each result carries its `scores.rerank` (null when not reranked),
// the first stage hands over max(top_k, rerank_candidates) chunks with the filters applied, a
// reranker that fails, hangs or answers garbage leaves the first-stage order marked `degraded`,
// and asking for reranking from a server without a reranker is a 400. RERANK=onnx runs a tiny
// cross-encoder the test writes, to the same effect.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../helpers/harness.js';
import { RerankServer } from '../helpers/rerank-server.js';
import { tinyCrossEncoderScore, writeTinyCrossEncoder } from '../helpers/tiny-cross-encoder.js';

interface Result {
  document_id: string;
  score: number;
  scores: { keyword: number | null; semantic: number | null; rerank: number | null };
  metadata: Record<string, string>;
}

/** The rerank server's relevance: each "blue" counts 1, each "green" 0.5, whatever the query. */
const colour = (_query: string, text: string) => {
  const words = text.toLowerCase().split(/\W+/);
  return words.filter((w) => w === 'blue').length + 0.5 * words.filter((w) => w === 'green').length;
};

const TEXTS = [
  { text: 'river river river river bank', metadata: { shelf: 'a' } },
  { text: 'a river with blue water', metadata: { shelf: 'b' } },
  { text: 'the river under a green bridge', metadata: { shelf: 'a' } },
  { text: 'river mouth blue blue sky', metadata: { shelf: 'b' } },
  { text: 'a mountain lake, blue and cold', metadata: { shelf: 'b' } },
];

let server: RerankServer;
let h: Harness;
let ids: string[];

beforeAll(async () => {
  server = await new RerankServer(colour).start();
  h = await startHarness({
    env: {
      RERANK: 'http',
      RERANK_URL: server.url,
      RERANK_MODEL: 'rerank-test',
      RERANK_TIMEOUT_MS: '400',
      RERANK_BATCH_SIZE: '3',
      // The breaker is tested in provider-health.test.ts; here every failure must reach the server.
      PROVIDER_BREAKER_FAILURES: '1000',
    },
  });
  const res = await h.request('POST', '/v1/ingest', { body: { documents: TEXTS } });
  expect(res.statusCode).toBe(202);
  ids = res.json().document_ids;
  await h.waitForDone(h.orgA, ids);
});

afterEach(() => server.recover());

afterAll(async () => {
  await h?.close();
  await server?.stop();
});

const query = (body: Record<string, unknown>) => h.request('POST', '/v1/query', { body });
const docs = (results: Result[]) => results.map((r) => ids.indexOf(r.document_id));

describe('reranking with a configured reranker', () => {
  it('reranks by default: the reranker’s order, its score, and the first-stage scores kept', async () => {
    const plain = await query({ query: 'river', rerank: false });
    expect(plain.statusCode).toBe(200);
    const first = plain.json().results as Result[];
    expect(docs(first)[0]).toBe(0);
    for (const r of first) expect(r.scores.rerank).toBeNull();

    const before = server.requests.length;
    const res = await query({ query: 'river' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ mode: 'keyword', degraded: false, degraded_reasons: [] });
    const results = body.results as Result[];
    // blue blue (2), blue (1), green (0.5), neither (0): not BM25's order, where "river" ×4 leads.
    expect(docs(results)).toEqual([3, 1, 2, 0]);
    for (const r of results) {
      const text = TEXTS[ids.indexOf(r.document_id)]!.text;
      expect(r.scores.rerank).toBe(colour('river', text));
      expect(r.score).toBe(r.scores.rerank);
      expect(r.scores.keyword).toBeGreaterThan(0);
    }
    // Every first-stage chunk (4 < 50 candidates) went to the reranker, in batches of 3.
    const sent = server.requests.slice(before);
    expect(sent.flatMap((r) => r.documents).sort()).toEqual([0, 1, 2, 3].map((i) => TEXTS[i]!.text).sort());
    expect(sent.every((r) => r.model === 'rerank-test' && r.query === 'river')).toBe(true);
  });

  it('hands over max(top_k, rerank_candidates) of the first stage’s best chunks', async () => {
    const bm25 = docs((await query({ query: 'river', rerank: false })).json().results);
    let before = server.requests.length;
    const two = await query({ query: 'river', top_k: 2, rerank_candidates: 2 });
    const sentTwo = server.requests.slice(before).flatMap((r) => r.documents);
    expect(sentTwo.sort()).toEqual(
      bm25
        .slice(0, 2)
        .map((i) => TEXTS[i]!.text)
        .sort(),
    );
    const twoDocs = docs(two.json().results);
    expect(new Set(twoDocs)).toEqual(new Set(bm25.slice(0, 2)));
    expect(colour('', TEXTS[twoDocs[0]!]!.text)).toBeGreaterThanOrEqual(colour('', TEXTS[twoDocs[1]!]!.text));

    before = server.requests.length;
    const res = await query({ query: 'river', top_k: 3, rerank_candidates: 1 });
    expect(server.requests.slice(before).flatMap((r) => r.documents)).toHaveLength(3);
    expect(res.json().results).toHaveLength(3);
  });

  it('reranks only chunks that pass the filter, and the per-document cap and threshold apply to the final order', async () => {
    const before = server.requests.length;
    const filtered = await query({ query: 'river', filter: { shelf: 'b' } });
    expect(docs(filtered.json().results)).toEqual([3, 1]);
    const sent = server.requests.slice(before).flatMap((r) => r.documents);
    expect(sent.sort()).toEqual([TEXTS[1]!.text, TEXTS[3]!.text].sort());

    // The threshold compares the reranker's score: only blue chunks (≥ 1) remain.
    const threshold = await query({ query: 'river', score_threshold: 1 });
    expect(docs(threshold.json().results)).toEqual([3, 1]);
    const capped = await query({ query: 'river', max_chunks_per_document: 1, top_k: 2 });
    expect(docs(capped.json().results)).toEqual([3, 1]);
  });

  it.each([
    ['fails with 500', (s: RerankServer) => s.failNext(10, 500)],
    ['answers garbage', (s: RerankServer) => s.garbageNext('short', 'short', 'short')],
    ['never answers', (s: RerankServer) => s.hang(true)],
  ])('a reranker that %s leaves the first-stage order, degraded', async (_name, breakIt) => {
    const bm25 = docs((await query({ query: 'river', rerank: false })).json().results);
    breakIt(server);
    const res = await query({ query: 'river' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ degraded: true, degraded_reasons: ['rerank_unavailable'] });
    const results = res.json().results as Result[];
    expect(docs(results)).toEqual(bm25);
    for (const r of results) {
      expect(r.scores.rerank).toBeNull();
      expect(r.score).toBe(r.scores.keyword);
    }
  });

  it('refuses rerank_candidates outside 1–200 and a non-boolean rerank', async () => {
    for (const body of [
      { query: 'river', rerank_candidates: 0 },
      { query: 'river', rerank_candidates: 201 },
      { query: 'river', rerank: 'yes' },
    ]) {
      const res = await query(body);
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('invalid_request');
    }
  });

  it('/readyz names the reranker and its circuit state', async () => {
    const res = await h.request('GET', '/readyz', { key: null });
    expect(res.json().providers).toEqual({ rerank: { kind: 'http', model: 'rerank-test', state: 'closed' } });
  });
});

describe('without a reranker', () => {
  let plain: Harness;
  beforeAll(async () => {
    plain = await startHarness({ worker: false });
  });
  afterAll(() => plain?.close());

  it('rerank: true is a 400 rerank_unavailable; rerank: false and no rerank are plain queries', async () => {
    const asked = await plain.request('POST', '/v1/query', { body: { query: 'river', rerank: true } });
    expect(asked.statusCode).toBe(400);
    expect(asked.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(asked.json()).toMatchObject({ code: 'rerank_unavailable', errors: [{ pointer: '/rerank' }] });
    for (const body of [{ query: 'river', rerank: false }, { query: 'river' }]) {
      const res = await plain.request('POST', '/v1/query', { body });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ degraded: false, degraded_reasons: [] });
    }
    expect((await plain.request('GET', '/readyz', { key: null })).json().providers).toEqual({});
  });
});

describe('with a local cross-encoder (RERANK=onnx)', () => {
  const weights = { blue: 2, green: 1, river: 0.25 };
  let local: Harness;
  let dir: string;
  let localIds: string[];
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'docindex-rerank-model-'));
    local = await startHarness({
      env: {
        RERANK: 'onnx',
        RERANK_MODEL_DIR: await writeTinyCrossEncoder(path.join(dir, 'tiny-ce'), weights),
      },
    });
    const res = await local.request('POST', '/v1/ingest', { body: { documents: TEXTS } });
    localIds = res.json().document_ids;
    await local.waitForDone(local.orgA, localIds);
  });
  afterAll(async () => {
    await local?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('orders the first stage by the model’s scores', async () => {
    const res = await local.request('POST', '/v1/query', {
      body: { query: 'river', filter: { shelf: { $in: ['a', 'b'] } } },
    });
    expect(res.statusCode).toBe(200);
    const results = res.json().results as Result[];
    expect(results.map((r) => localIds.indexOf(r.document_id))).toEqual([3, 1, 2, 0]);
    for (const r of results) {
      const text = TEXTS[localIds.indexOf(r.document_id)]!.text;
      expect(r.scores.rerank).toBeCloseTo(tinyCrossEncoderScore(weights, 'river', text), 5);
    }
    const providers = (await local.request('GET', '/readyz', { key: null })).json().providers;
    expect(providers).toEqual({ rerank: { kind: 'onnx', model: 'tiny-ce', state: 'closed' } });
  });
});
