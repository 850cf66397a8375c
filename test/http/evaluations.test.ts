// POST /v1/evaluations and GET /v1/evaluations[/{id}]: judged queries run through the query path
// in the background and scored, on both backends (the harness); validation, unknown documents,
// usage left alone, the rate limit taken, and a before/after comparison.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness, type TestOrg } from '../helpers/harness.js';

const CORPUS = [
  { external_id: 'cats', text: 'Cats purr and sleep in the sun all afternoon.' },
  { external_id: 'dogs', text: 'Dogs bark at the mailman every single morning.' },
  { external_id: 'fish', text: 'Fish swim in the sea while cats watch the fish.' },
  { external_id: 'birds', text: 'Birds sing in the morning trees.' },
];

describe('evaluations', () => {
  let h: Harness;
  const ids = new Map<string, string>();

  beforeAll(async () => {
    h = await startHarness();
    const res = await h.request('POST', '/v1/ingest', { body: { documents: CORPUS } });
    expect(res.statusCode).toBe(202);
    const documentIds = res.json().document_ids as string[];
    CORPUS.forEach((d, i) => {
      ids.set(d.external_id, documentIds[i]!);
    });
    await h.waitForDone(h.orgA, documentIds);
  });
  afterAll(() => h.close());

  async function waitForEvaluation(id: string, org: TestOrg = h.orgA) {
    // Through the store, not the API: polling requests would take rate-limit units.
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const found = await h.runtime.evaluations.load(id);
      if (found?.status === 'done' || found?.status === 'failed') {
        const res = await h.request('GET', `/v1/evaluations/${id}`, { key: org.apiKey });
        expect(res.statusCode).toBe(200);
        return res.json();
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`evaluation ${id} did not finish`);
  }

  async function create(body: unknown, org: TestOrg = h.orgA): Promise<string> {
    const res = await h.request('POST', '/v1/evaluations', { body, key: org.apiKey });
    expect(res.statusCode, res.body).toBe(202);
    const id = res.json().evaluation_id as string;
    expect(id).toMatch(/^eval_[0-9a-f]{32}$/);
    return id;
  }

  const QUERIES = () => [
    {
      query: 'cats purr',
      relevant: [
        { external_id: 'cats', grade: 2 },
        { external_id: 'fish', grade: 1 },
      ],
    },
    { query: 'dogs bark', relevant: [{ document_id: ids.get('dogs') }] },
    { query: 'mailman', relevant: [{ external_id: 'no-such-document' }] },
    {
      query: 'birds sing',
      relevant: [{ external_id: 'birds' }, { document_id: '00000000-0000-4000-8000-000000000000' }],
    },
    { query: 'fish', relevant: [{ external_id: 'cats' }] },
  ];

  it('scores each query and each run, with ranks and unknown documents per query', async () => {
    const id = await create({ name: 'first', queries: QUERIES(), runs: [{ mode: 'keyword' }, {}], top_k: 5 });
    const e = await waitForEvaluation(id);
    expect(e).toMatchObject({
      id,
      name: 'first',
      status: 'done',
      top_k: 5,
      query_count: 5,
      queries_evaluated: 4,
      error: null,
    });
    expect(e.runs).toHaveLength(2);
    for (const run of e.runs) {
      // Every query but "fish" finds its relevant documents first (nDCG 1); "fish" never
      // retrieves the cats document (0): the mean of 1, 1, 1, 0.
      expect(run).toMatchObject({
        mode: 'keyword',
        rerank: false,
        semantic_weight: null,
        ndcg_at_10: 0.75,
        recall_at_k: 0.75,
        mrr_at_10: 0.75,
        degraded_queries: 0,
      });
      expect(run.latency_ms.p50).toBeGreaterThan(0);
      expect(run.latency_ms.p95).toBeGreaterThanOrEqual(run.latency_ms.p50);
      expect(run.queries.map((q: { index: number }) => q.index)).toEqual([0, 1, 3, 4]);
    }
    const [first] = e.runs;
    expect(first.queries[0]).toMatchObject({ index: 0, ndcg_at_10: 1, recall_at_k: 1, mrr_at_10: 1 });
    expect(first.queries[0].ranks).toEqual([
      { document_id: ids.get('cats'), external_id: 'cats', grade: 2, rank: 1 },
      { document_id: ids.get('fish'), external_id: 'fish', grade: 1, rank: 2 },
    ]);
    expect(first.queries[1].ranks).toEqual([
      { document_id: ids.get('dogs'), external_id: 'dogs', grade: 1, rank: 1 },
    ]);
    expect(first.queries[3]).toMatchObject({ index: 4, ndcg_at_10: 0, recall_at_k: 0, mrr_at_10: 0 });
    expect(first.queries[3].ranks).toEqual([
      { document_id: ids.get('cats'), external_id: 'cats', grade: 1, rank: null },
    ]);
    expect(e.queries).toEqual([
      { index: 0, query: 'cats purr', evaluated: true, unknown: [] },
      { index: 1, query: 'dogs bark', evaluated: true, unknown: [] },
      { index: 2, query: 'mailman', evaluated: false, unknown: [{ external_id: 'no-such-document' }] },
      {
        index: 3,
        query: 'birds sing',
        evaluated: true,
        unknown: [{ document_id: '00000000-0000-4000-8000-000000000000' }],
      },
      { index: 4, query: 'fish', evaluated: true, unknown: [] },
    ]);
  });

  it('lists evaluations newest first in pages, without per-query figures; another org sees none', async () => {
    const a = await create({ name: 'list-a', queries: QUERIES().slice(0, 1) });
    const b = await create({ name: 'list-b', queries: QUERIES().slice(0, 1) });
    await waitForEvaluation(a);
    await waitForEvaluation(b);
    const page = await h.request('GET', '/v1/evaluations?limit=1');
    expect(page.statusCode).toBe(200);
    const body = page.json();
    expect(body.evaluations.map((e: { id: string }) => e.id)).toEqual([b]);
    expect(body.evaluations[0].runs[0]).not.toHaveProperty('queries');
    expect(body.evaluations[0]).not.toHaveProperty('queries');
    expect(body.evaluations[0].runs[0].ndcg_at_10).toBe(1);
    expect(body.next_cursor).toEqual(expect.any(String));
    const next = (await h.request('GET', `/v1/evaluations?limit=1&cursor=${body.next_cursor}`)).json();
    expect(next.evaluations.map((e: { id: string }) => e.id)).toEqual([a]);

    expect((await h.request('GET', '/v1/evaluations', { key: h.orgB.apiKey })).json().evaluations).toEqual(
      [],
    );
    const other = await h.request('GET', `/v1/evaluations/${a}`, { key: h.orgB.apiKey });
    expect(other.statusCode).toBe(404);
    expect(other.json().code).toBe('not_found');
    expect((await h.request('GET', '/v1/evaluations/eval_0123')).statusCode).toBe(404);
    expect((await h.request('GET', '/v1/evaluations?cursor=nonsense')).statusCode).toBe(400);
  });

  it('refuses what it cannot run with a 400 naming the field', async () => {
    const one = QUERIES().slice(0, 1);
    const cases: Array<[unknown, string, string?]> = [
      [{ queries: [] }, 'invalid_request', '/queries'],
      [{ queries: Array.from({ length: 1001 }, () => one[0]) }, 'invalid_request', '/queries'],
      [{ queries: one, runs: Array.from({ length: 11 }, () => ({})) }, 'invalid_request', '/runs'],
      [
        { queries: [{ query: 'x', relevant: Array.from({ length: 101 }, () => ({ external_id: 'cats' })) }] },
        'invalid_request',
        '/queries/0/relevant',
      ],
      [
        { queries: [{ query: 'x'.repeat(4097), relevant: [{ external_id: 'cats' }] }] },
        'invalid_request',
        '/queries/0/query',
      ],
      [{ queries: [{ query: 'x', relevant: [] }] }, 'invalid_request', '/queries/0/relevant'],
      [
        { queries: [{ query: 'x', relevant: [{ external_id: 'cats', document_id: ids.get('cats') }] }] },
        'invalid_request',
        '/queries/0/relevant/0',
      ],
      [{ queries: [{ query: 'x', relevant: [{ grade: 1 }] }] }, 'invalid_request', '/queries/0/relevant/0'],
      [
        { queries: [{ query: 'x', relevant: [{ external_id: 'cats' }, { external_id: 'cats' }] }] },
        'invalid_request',
        '/queries/0/relevant/1',
      ],
      [{ queries: [{ query: 'x', relevant: [{ external_id: 'cats', grade: -1 }] }] }, 'invalid_request'],
      [{ queries: [{ query: 'x', relevant: [{ external_id: 'cats', grade: 1.5 }] }] }, 'invalid_request'],
      [{ queries: [{ query: 'x', relevant: [{ document_id: 'not-a-uuid' }] }] }, 'invalid_request'],
      [
        { queries: [{ query: '   ', relevant: [{ external_id: 'cats' }] }] },
        'invalid_request',
        '/queries/0/query',
      ],
      [{ queries: one, top_k: 101 }, 'invalid_request'],
      [{ queries: one, top_k: '10' }, 'invalid_request'],
      [{ queries: one, colour: 'blue' }, 'invalid_request'],
      [
        { queries: one, runs: [{ mode: 'keyword', semantic_weight: 0.5 }] },
        'invalid_request',
        '/runs/0/semantic_weight',
      ],
      [{ queries: one, runs: [{ mode: 'semantic' }] }, 'semantic_search_unavailable'],
      [{ queries: one, runs: [{ mode: 'hybrid' }] }, 'semantic_search_unavailable'],
      [{ queries: one, runs: [{ rerank: true }] }, 'rerank_unavailable'],
    ];
    for (const [body, code, pointer] of cases) {
      const res = await h.request('POST', '/v1/evaluations', { body });
      expect(res.statusCode, JSON.stringify(body).slice(0, 200)).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      const problem = res.json();
      expect(problem.code).toBe(code);
      if (pointer !== undefined) {
        expect(
          problem.errors?.map((e: { pointer: string }) => e.pointer) ?? [],
          JSON.stringify(problem),
        ).toContain(pointer);
      }
    }
  });

  it('is not counted as usage, while its queries take the rate limit', async () => {
    const created = await h.runtime.admin.createOrg('evaluation-usage', 1000);
    const org = { orgId: created.org_id, keyId: created.key_id, apiKey: created.api_key };
    const ingested = await h.request('POST', '/v1/ingest', { key: org.apiKey, body: { documents: CORPUS } });
    const documentIds = ingested.json().document_ids as string[];
    await h.waitForDone(org, documentIds);
    // Judged by external_id: the same queries, on this org's own copies.
    const queries = QUERIES().map((q, i) =>
      i === 1 ? { query: q.query, relevant: [{ document_id: documentIds[1] }] } : q,
    );
    const remaining = async () => {
      const res = await h.request('GET', '/v1/usage', { key: org.apiKey });
      return { body: res.json(), left: Number(/r=(\d+)/.exec(String(res.headers.ratelimit))![1]) };
    };
    // The limiter counts in 60-second windows: a window that turns over between the two readings
    // shows more units left than exact counting would, and the reading is taken again.
    let matched = false;
    for (let attempt = 0; attempt < 3 && !matched; attempt++) {
      const before = await remaining();
      const id = await create({ queries }, org);
      const e = await waitForEvaluation(id, org);
      expect(e.status).toBe('done');
      const after = await remaining();
      expect(after.body.total_queries).toBe(0);
      // POST /v1/evaluations, the 4 evaluated queries, GET /v1/evaluations/{id}, GET /v1/usage.
      matched = after.left === before.left - 7;
    }
    expect(matched).toBe(true);
    // A query of the org's own is counted, as always.
    await h.request('POST', '/v1/query', { key: org.apiKey, body: { query: 'cats' } });
    expect((await remaining()).body.total_queries).toBe(1);
  });

  it('shows which queries got worse between an evaluation before and after a change', async () => {
    const queries = QUERIES();
    const before = await waitForEvaluation(await create({ name: 'before', queries }));
    // The dogs document gets a new version without the words its query looks for.
    const res = await h.request('POST', '/v1/ingest', {
      body: { documents: [{ external_id: 'dogs', text: 'Puppies nap on the porch.' }] },
    });
    expect(res.statusCode).toBe(202);
    expect(res.json().document_ids).toEqual([ids.get('dogs')]);
    const deadline = Date.now() + 30_000;
    for (;;) {
      const doc = (await h.request('GET', `/v1/documents/${ids.get('dogs')}`)).json();
      if (doc.version === 2 && doc.status === 'ready' && doc.pending_version === null) break;
      if (Date.now() > deadline) throw new Error('the new version did not become ready');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const after = await waitForEvaluation(await create({ name: 'after', queries }));
    const byIndex = (e: { runs: { queries: { index: number; ndcg_at_10: number }[] }[] }) =>
      new Map(e.runs[0]!.queries.map((q) => [q.index, q.ndcg_at_10]));
    const was = byIndex(before);
    const now = byIndex(after);
    const worse = [...was].filter(([index, ndcg]) => (now.get(index) ?? 0) < ndcg).map(([index]) => index);
    expect(worse).toEqual([1]);
    expect(after.runs[0].queries.find((q: { index: number }) => q.index === 1).ranks[0].rank).toBeNull();
    expect(after.runs[0].ndcg_at_10).toBe(0.5);
    expect(before.runs[0].ndcg_at_10).toBe(0.75);
  });

  it('needs the query scope', async () => {
    const key = await h.runtime.admin.issueKey(h.orgA.orgId, { scopes: ['read'] });
    const res = await h.request('POST', '/v1/evaluations', {
      key: key.api_key,
      body: { queries: [{ query: 'x', relevant: [{ external_id: randomUUID() }] }] },
    });
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('insufficient_scope');
    expect((await h.request('GET', '/v1/evaluations', { key: key.api_key })).statusCode).toBe(403);
  });

  it('refuses a key limited to partitions on every route: an evaluation ranks the whole org', async () => {
    const made = await h.request('POST', '/v1/evaluations', {
      body: { queries: [{ query: 'x', relevant: [{ external_id: randomUUID() }] }] },
    });
    expect(made.statusCode).toBe(202);
    const key = await h.runtime.admin.issueKey(h.orgA.orgId, { partitions: ['red'] });
    const refused = [
      await h.request('POST', '/v1/evaluations', {
        key: key.api_key,
        body: { queries: [{ query: 'x', relevant: [{ external_id: randomUUID() }] }] },
      }),
      await h.request('GET', '/v1/evaluations', { key: key.api_key }),
      await h.request('GET', `/v1/evaluations/${made.json().evaluation_id}`, { key: key.api_key }),
    ];
    for (const res of refused) {
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe('partition_forbidden');
    }
  });
});
