// POST /v1/query: BM25 ranking and its scores, filters, validation, and usage counting.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../helpers/harness.js';

describe('POST /v1/query', () => {
  let h: Harness;
  let ids: string[];
  beforeAll(async () => {
    h = await startHarness();
    const res = await h.request('POST', '/v1/ingest', {
      body: {
        documents: [
          {
            text: 'Salmon swim upstream to spawn. Salmon salmon salmon.',
            metadata: { kind: 'fish', lang: 'en' },
          },
          { text: 'A salmon sandwich is lunch.', metadata: { kind: 'food', lang: 'en' } },
          { text: 'Der Lachs schwimmt flussaufwärts.', metadata: { kind: 'fish', lang: 'de' } },
        ],
      },
    });
    ids = res.json().document_ids;
    await h.waitForDone(h.orgA, ids);
  });
  afterAll(() => h.close());

  it('ranks by BM25 and returns the documented result shape', async () => {
    const res = await h.request('POST', '/v1/query', { body: { query: 'salmon' } });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.org_id).toBe(h.orgA.orgId);
    // No embedding provider: keyword mode by default, and the semantic score is null.
    expect(body.mode).toBe('keyword');
    expect(body.degraded).toBe(false);
    expect(body.results.map((r: { document_id: string }) => r.document_id)).toEqual([ids[0], ids[1]]);
    const [first, second] = body.results;
    expect(first.score).toBeGreaterThan(second.score);
    expect(first).toEqual({
      document_id: ids[0],
      chunk_index: 0,
      text: 'Salmon swim upstream to spawn. Salmon salmon salmon.',
      score: first.score,
      scores: { keyword: first.score, semantic: null, rerank: null },
      metadata: { kind: 'fish', lang: 'en' },
      page_start: null,
      page_end: null,
    });
  });

  it('filters by metadata value or list of values, and by document ids', async () => {
    const fish = (
      await h.request('POST', '/v1/query', { body: { query: 'salmon lachs', filter: { kind: 'fish' } } })
    ).json();
    expect(fish.results.map((r: { document_id: string }) => r.document_id).sort()).toEqual(
      [ids[0], ids[2]].sort(),
    );
    const anyOf = (
      await h.request('POST', '/v1/query', { body: { query: 'salmon', filter: { kind: ['food', 'other'] } } })
    ).json();
    expect(anyOf.results.map((r: { document_id: string }) => r.document_id)).toEqual([ids[1]]);
    const both = (
      await h.request('POST', '/v1/query', {
        body: { query: 'salmon lachs', filter: { kind: 'fish', lang: 'de' } },
      })
    ).json();
    expect(both.results.map((r: { document_id: string }) => r.document_id)).toEqual([ids[2]]);
    const byId = (
      await h.request('POST', '/v1/query', { body: { query: 'salmon', document_ids: [ids[1]] } })
    ).json();
    expect(byId.results.map((r: { document_id: string }) => r.document_id)).toEqual([ids[1]]);
  });

  it('respects top_k', async () => {
    const res = (await h.request('POST', '/v1/query', { body: { query: 'salmon', top_k: 1 } })).json();
    expect(res.results).toHaveLength(1);
  });

  it('never fails on query syntax: quotes, operators, emoji, NUL', async () => {
    for (const query of [
      '"unbalanced',
      'salmon AND',
      'NEAR(salmon',
      '*',
      '🐟 salmon',
      'a\u0000b',
      ')(',
      'col:salmon',
      '-salmon',
    ]) {
      const res = await h.request('POST', '/v1/query', { body: { query } });
      expect(res.statusCode, query).toBe(200);
    }
  });

  const invalid: [string, unknown][] = [
    ['missing query', {}],
    ['empty query', { query: '' }],
    ['top_k 0', { query: 'x', top_k: 0 }],
    ['top_k 101', { query: 'x', top_k: 101 }],
    ['filter value a number', { query: 'x', filter: { kind: 1 } }],
    ['filter value an empty list', { query: 'x', filter: { kind: [] } }],
    ['document_ids not uuids', { query: 'x', document_ids: ['abc'] }],
    ['unknown field', { query: 'x', limit: 3 }],
    ['an unknown mode', { query: 'x', mode: 'vector' }],
    ['semantic_weight above 1', { query: 'x', semantic_weight: 1.5 }],
    ['max_chunks_per_document 0', { query: 'x', max_chunks_per_document: 0 }],
    ['score_threshold a string', { query: 'x', score_threshold: 'high' }],
  ];
  for (const [label, body] of invalid) {
    it(`400 for ${label}`, async () => {
      const res = await h.request('POST', '/v1/query', { body });
      expect(res.statusCode).toBe(400);
    });
  }

  it('counts each successful query once, and not rejected ones', async () => {
    const org = await h.runtime.admin.createOrg('counting');
    const key = org.api_key;
    for (let i = 0; i < 3; i++) {
      expect((await h.request('POST', '/v1/query', { key, body: { query: 'salmon' } })).statusCode).toBe(200);
    }
    expect((await h.request('POST', '/v1/query', { key, body: { query: '' } })).statusCode).toBe(400);
    const usage = (await h.request('GET', '/v1/usage', { key })).json();
    expect(usage.total_queries).toBe(3);
    expect(usage.daily[0].count).toBe(3);
  });

  it('a document_ids filter with unknown ids returns nothing', async () => {
    const res = (
      await h.request('POST', '/v1/query', { body: { query: 'salmon', document_ids: [randomUUID()] } })
    ).json();
    expect(res.results).toEqual([]);
  });

  for (const mode of ['semantic', 'hybrid']) {
    it(`mode ${mode} without an embedding provider: 400 semantic_search_unavailable, not counted`, async () => {
      const org = await h.runtime.admin.createOrg(`no-provider-${mode}`);
      const res = await h.request('POST', '/v1/query', { key: org.api_key, body: { query: 'salmon', mode } });
      expect(res.statusCode).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.json()).toMatchObject({ code: 'semantic_search_unavailable', status: 400 });
      expect((await h.request('GET', '/v1/usage', { key: org.api_key })).json().total_queries).toBe(0);
    });
  }

  it('score_threshold keeps the keyword results whose share of the query’s most reaches it', async () => {
    const scored = async (threshold?: number) =>
      (
        await h.request('POST', '/v1/query', {
          body: {
            query: 'salmon',
            mode: 'keyword',
            ...(threshold === undefined ? {} : { score_threshold: threshold }),
          },
        })
      ).json().results as { document_id: string; score: number }[];
    // Of three documents, two say salmon: BM25's IDF is floored there, and the scores are still
    // the share of the most a chunk could score: four times in a longer chunk, once in a short one.
    const [best, second, ...rest] = await scored();
    expect(rest).toEqual([]);
    expect(best!.document_id).toBe(ids[0]);
    expect(best!.score).toBeGreaterThan(0.6);
    expect(best!.score).toBeLessThan(1);
    expect(second!.score).toBeGreaterThan(0.3);
    expect(second!.score).toBeLessThan(0.6);
    expect((await scored(0.6)).map((r) => r.document_id)).toEqual([ids[0]]);
    expect((await scored(0.3)).map((r) => r.document_id)).toEqual([ids[0], ids[1]]);
    expect(await scored(0.99)).toEqual([]);
  });

  it('max_chunks_per_document caps each document, letting the next documents in', async () => {
    const many = await h.request('POST', '/v1/ingest', {
      body: {
        chunk_size: 128,
        chunk_overlap: 0,
        documents: [
          {
            text: Array.from(
              { length: 80 },
              (_, i) => `Pelican number ${i} pelican pelican pelican pelican.`,
            ).join(' '),
          },
          { text: 'One pelican here.' },
        ],
      },
    });
    const [long, short] = many.json().document_ids;
    await h.waitForDone(h.orgA, [long, short]);
    const uncapped = (await h.request('POST', '/v1/query', { body: { query: 'pelican', top_k: 3 } })).json();
    expect(uncapped.results.map((r: { document_id: string }) => r.document_id)).toEqual([long, long, long]);
    const capped = (
      await h.request('POST', '/v1/query', {
        body: { query: 'pelican', top_k: 3, max_chunks_per_document: 1 },
      })
    ).json();
    expect(capped.results.map((r: { document_id: string }) => r.document_id)).toEqual([long, short]);
  });
});
