// Hostile input: deep nesting, huge key counts, prototype keys, and property-based fuzzing of
// every endpoint's body and query string. The promise: a specific 4xx, never a 5xx or a hang.
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../helpers/harness.js';

describe('hostile JSON', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ worker: false });
  });
  afterAll(() => h.close());

  const raw = (url: string, payload: string) =>
    h.request('POST', url, { payload, headers: { 'content-type': 'application/json' } });

  it('nesting 10,000 deep is a 400', async () => {
    const deep = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
    for (const payload of [
      `{"documents":[{"text":"x","metadata":{"a":${deep}}}]}`,
      `{"documents":${deep}}`,
      deep,
      `{"query":${deep}}`,
    ]) {
      const res = await raw(payload.startsWith('{"query"') ? '/v1/query' : '/v1/ingest', payload);
      expect(res.statusCode).toBe(400);
    }
  });

  it('10,000 metadata keys is a 400', async () => {
    const metadata = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, 'v']));
    const res = await h.request('POST', '/v1/ingest', { body: { documents: [{ text: 'x', metadata }] } });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors[0].pointer).toBe('/documents/0/metadata');
  });

  it('constructor and prototype keys never reach the prototype', async () => {
    for (const payload of [
      '{"documents":[{"text":"x","metadata":{"constructor":{"prototype":{"polluted":"yes"}}}}]}',
      '{"documents":[{"text":"x"}],"__proto__":{"polluted":"yes"}}',
      '{"query":"x","filter":{"__proto__":"yes"}}',
    ]) {
      const res = await raw(payload.startsWith('{"query"') ? '/v1/query' : '/v1/ingest', payload);
      expect(res.statusCode).toBe(400);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
  });

  it('a string metadata key named constructor is plain data', async () => {
    const res = await raw(
      '/v1/ingest',
      '{"documents":[{"text":"x","metadata":{"constructor":"c","toString":"t"}}]}',
    );
    expect(res.statusCode).toBe(202);
    const doc = (await h.request('GET', `/v1/documents/${res.json().document_ids[0]}`)).json();
    expect(doc.metadata).toEqual({ constructor: 'c', toString: 't' });
  });
});

describe('fuzzing every endpoint', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ worker: false, env: { MAX_QUEUED_DOCUMENTS: '100000000' } });
  });
  afterAll(() => h.close());

  const jsonValue = fc.jsonValue({ maxDepth: 4 });
  const stringy = fc.oneof(
    fc.string(),
    fc.string({ unit: 'grapheme' }),
    fc.constantFrom('', '\u0000', '\ud800', '<|endoftext|>'),
  );
  const metadata = fc.oneof(fc.dictionary(stringy, fc.oneof(stringy, jsonValue), { maxKeys: 5 }), jsonValue);
  const ingestBody = fc.oneof(
    fc.record(
      {
        documents: fc.oneof(
          fc.array(fc.record({ text: fc.oneof(stringy, jsonValue), metadata }, { requiredKeys: [] }), {
            maxLength: 3,
          }),
          jsonValue,
        ),
        chunk_size: fc.oneof(fc.integer({ min: -10, max: 5000 }), jsonValue),
        chunk_overlap: fc.oneof(fc.integer({ min: -10, max: 600 }), jsonValue),
      },
      { requiredKeys: [] },
    ),
    jsonValue,
  );
  const queryBody = fc.oneof(
    fc.record(
      {
        query: fc.oneof(stringy, jsonValue),
        top_k: fc.oneof(fc.integer({ min: -5, max: 200 }), jsonValue),
        filter: metadata,
        document_ids: fc.oneof(fc.array(fc.oneof(fc.uuid(), stringy), { maxLength: 3 }), jsonValue),
      },
      { requiredKeys: [] },
    ),
    jsonValue,
  );
  const urlBody = fc.oneof(
    fc.record({ url: fc.oneof(fc.webUrl(), stringy, jsonValue), metadata }, { requiredKeys: [] }),
    jsonValue,
  );
  const queryString = fc
    .dictionary(
      fc.constantFrom('limit', 'cursor', 'status', 'ids', 'content_sha256', 'x', 'api_key'),
      fc.oneof(stringy, fc.integer().map(String), fc.uuid()),
      { maxKeys: 4 },
    )
    .map((q) => new URLSearchParams(q).toString());

  const check = async (method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown) => {
    const res = await h.request(
      method,
      url,
      body === undefined
        ? {}
        : { payload: JSON.stringify(body), headers: { 'content-type': 'application/json' } },
    );
    if (res.statusCode >= 500) throw new Error(`${method} ${url} → ${res.statusCode}: ${res.body}`);
  };

  const RUNS = 2_000; // × 5 properties = 10,000 generated requests
  it('10,000 generated requests: no response ≥ 500, and the service stays healthy', async () => {
    await fc.assert(
      fc.asyncProperty(ingestBody, (body) => check('POST', '/v1/ingest', body)),
      { numRuns: RUNS },
    );
    await fc.assert(
      fc.asyncProperty(queryBody, (body) => check('POST', '/v1/query', body)),
      { numRuns: RUNS },
    );
    await fc.assert(
      fc.asyncProperty(urlBody, (body) => check('POST', '/v1/ingest/url', body)),
      { numRuns: RUNS },
    );
    await fc.assert(
      fc.asyncProperty(queryString, (q) => check('GET', `/v1/documents?${q}`)),
      { numRuns: RUNS },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.uuid(), fc.string({ maxLength: 80 }).map(encodeURIComponent), fc.constant(randomUUID())),
        (id) =>
          Promise.all([check('GET', `/v1/documents/${id}`), check('DELETE', `/v1/documents/${id}`)]).then(
            () => undefined,
          ),
      ),
      { numRuns: RUNS },
    );
    expect((await h.request('GET', '/readyz', { key: null })).statusCode).toBe(200);
    expect((await h.request('GET', '/v1/usage')).statusCode).toBe(200);
  }, 300_000);
});
