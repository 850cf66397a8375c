// Provider outages in a running service, with both query providers configured (EMBEDDINGS=openai
// and RERANK=http against servers on 127.0.0.1) and their circuit breakers opening after two
// consecutive failures: while a provider hangs, the first queries wait out its timeout and answer
// without it (degraded, with the reason); once the breaker is open, queries answer without calling
// the provider at all (its request count stays put), a semantic query is a 503 at once, and
// /readyz and /metrics say `open`; after the cool-down (a fake clock) one query probes, and a
// provider that answers is back in use.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmbeddingsServer } from '../helpers/embeddings-server.js';
import { FakeClock, type Harness, startHarness } from '../helpers/harness.js';
import { RerankServer } from '../helpers/rerank-server.js';

const COOL_DOWN_MS = 60_000;

let embeddings: EmbeddingsServer;
let rerank: RerankServer;
let h: Harness;
const clock = new FakeClock(new Date());

beforeAll(async () => {
  embeddings = await new EmbeddingsServer({ dimensions: 32 }).start();
  rerank = await new RerankServer((_q, text) => text.length).start();
  h = await startHarness({
    clock,
    env: {
      EMBEDDINGS: 'openai',
      EMBEDDINGS_URL: embeddings.url,
      EMBEDDINGS_MODEL: 'test-embedding',
      EMBEDDINGS_TIMEOUT_MS: '300',
      EMBEDDINGS_MAX_RETRIES: '0',
      RERANK: 'http',
      RERANK_URL: rerank.url,
      RERANK_TIMEOUT_MS: '300',
      PROVIDER_BREAKER_FAILURES: '2',
      PROVIDER_BREAKER_COOLDOWN_MS: String(COOL_DOWN_MS),
    },
  });
  const res = await h.request('POST', '/v1/ingest', {
    body: {
      documents: [{ text: 'otter river fishing' }, { text: 'otter lake' }, { text: 'beaver dam river' }],
    },
  });
  const ids = res.json().document_ids as string[];
  await h.waitForVectors(h.orgA, ids);
});

afterAll(async () => {
  await h?.close();
  await embeddings?.stop();
  await rerank?.stop();
});

const query = (body: Record<string, unknown>) => h.request('POST', '/v1/query', { body });
const providers = async () => (await h.request('GET', '/readyz', { key: null })).json();

describe('provider outages and circuit breakers', () => {
  it('both providers answering: reranked hybrid results, nothing degraded, both closed', async () => {
    const res = await query({ query: 'otter river' });
    expect(res.json()).toMatchObject({ mode: 'hybrid', degraded: false, degraded_reasons: [] });
    expect(res.json().results[0].scores.semantic).not.toBeNull();
    expect(res.json().results[0].scores.rerank).not.toBeNull();
    expect(await providers()).toMatchObject({
      status: 'ready',
      providers: {
        embeddings: { kind: 'openai', model: 'test-embedding', state: 'closed' },
        rerank: { kind: 'http', model: '', state: 'closed' },
      },
    });
    // Which providers, never where or with what key.
    expect(JSON.stringify(await providers())).not.toContain(embeddings.url);
  });

  it('hung providers: degraded answers, then no provider time at all while the breakers are open', async () => {
    embeddings.hang(true);
    rerank.hang(true);
    try {
      // Two queries never asked before (so no cached vector) open both breakers.
      for (const text of ['otter first outage', 'otter second outage']) {
        const res = await query({ query: text });
        expect(res.statusCode).toBe(200);
        expect(res.json()).toMatchObject({
          mode: 'hybrid',
          degraded: true,
          degraded_reasons: ['embeddings_unavailable', 'rerank_unavailable'],
        });
        for (const r of res.json().results) {
          expect(r.scores).toMatchObject({ semantic: null, rerank: null });
          expect(r.scores.keyword).toBeGreaterThan(0);
        }
      }
      const ready = await providers();
      expect(ready.status).toBe('ready');
      expect(ready.providers.embeddings.state).toBe('open');
      expect(ready.providers.rerank.state).toBe('open');
      const metrics = (await h.request('GET', '/metrics', { key: null })).body;
      expect(metrics).toContain(
        'docindex_provider_circuit_state{provider="embeddings",kind="openai",state="open"} 1',
      );
      expect(metrics).toContain(
        'docindex_provider_circuit_state{provider="rerank",kind="http",state="open"} 1',
      );
      expect(metrics).toContain(
        'docindex_provider_circuit_state{provider="rerank",kind="http",state="closed"} 0',
      );

      const embedCalls = embeddings.requests.length;
      const rerankCalls = rerank.requests.length;
      const hybrid = await query({ query: 'otter third outage' });
      expect(hybrid.json().degraded_reasons).toEqual(['embeddings_unavailable', 'rerank_unavailable']);
      const semantic = await query({ query: 'otter fourth outage', mode: 'semantic' });
      expect(semantic.statusCode).toBe(503);
      expect(semantic.json().code).toBe('embeddings_unavailable');
      expect(Number(semantic.headers['retry-after'])).toBe(COOL_DOWN_MS / 1000);
      expect(embeddings.requests.length).toBe(embedCalls);
      expect(rerank.requests.length).toBe(rerankCalls);
    } finally {
      embeddings.recover();
      rerank.recover();
    }
    // Recovered, but the breakers are open until the cool-down ends: still no calls.
    const stillOpen = await query({ query: 'otter after recovery' });
    expect(stillOpen.json().degraded).toBe(true);

    clock.advance(COOL_DOWN_MS);
    expect((await providers()).providers.embeddings.state).toBe('half-open');
    const probe = await query({ query: 'otter probe' });
    expect(probe.json()).toMatchObject({ degraded: false, degraded_reasons: [] });
    expect(probe.json().results[0].scores.rerank).not.toBeNull();
    const ready = await providers();
    expect(ready.providers.embeddings.state).toBe('closed');
    expect(ready.providers.rerank.state).toBe('closed');
  });

  it('a refused connection counts as an outage; a failed probe re-opens for a whole cool-down', async () => {
    await embeddings.stop();
    try {
      for (const text of ['otter refused one', 'otter refused two']) {
        expect((await query({ query: text, rerank: false })).json().degraded_reasons).toEqual([
          'embeddings_unavailable',
        ]);
      }
      expect((await providers()).providers.embeddings.state).toBe('open');
      clock.advance(COOL_DOWN_MS);
      expect((await query({ query: 'otter refused probe', rerank: false })).json().degraded).toBe(true);
      expect((await providers()).providers.embeddings.state).toBe('open');
    } finally {
      await embeddings.start();
    }
    clock.advance(COOL_DOWN_MS);
    expect((await query({ query: 'otter back', rerank: false })).json().degraded).toBe(false);
  });
});
