// POST /v1/ingest: the acknowledgement, the path to `ready`, and every validation rule.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../helpers/harness.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('POST /v1/ingest', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  it('answers 202 with the spec acknowledgement and takes documents to ready', async () => {
    const res = await h.request('POST', '/v1/ingest', {
      body: {
        documents: [
          { text: 'The quick brown fox jumps over the lazy dog.', metadata: { lang: 'en' } },
          { text: 'Lorem ipsum dolor sit amet. '.repeat(400) },
        ],
        chunk_size: 128,
        chunk_overlap: 16,
      },
    });
    expect(res.statusCode).toBe(202);
    const ack = res.json();
    expect(Object.keys(ack).sort()).toEqual(['document_ids', 'org_id', 'queued', 'status']);
    expect(ack).toMatchObject({ status: 'accepted', org_id: h.orgA.orgId, queued: 2 });
    expect(ack.document_ids).toHaveLength(2);
    for (const id of ack.document_ids) expect(id).toMatch(UUID);

    const docs = await h.waitForDone(h.orgA, ack.document_ids);
    expect(docs.map((d) => d.status)).toEqual(['ready', 'ready']);
    expect(docs[0]).toMatchObject({
      id: ack.document_ids[0],
      org_id: h.orgA.orgId,
      metadata: { lang: 'en' },
      chunk_size: 128,
      chunk_overlap: 16,
      chunk_count: 1,
      tokenizer: 'o200k_base',
      error: null,
      source: { type: 'text', filename: null, url: null },
    });
    expect(docs[0]!.content_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(docs[1]!.chunk_count as number).toBeGreaterThan(10);
    expect(docs[1]!.token_count as number).toBeGreaterThan(1000);
  });

  it('applies the defaults chunk_size 512 and chunk_overlap 64', async () => {
    const [id] = await h.ingest(h.orgA, ['defaults']);
    const doc = (await h.request('GET', `/v1/documents/${id}`)).json();
    expect(doc).toMatchObject({ chunk_size: 512, chunk_overlap: 64 });
  });

  it('accepts 50 documents', async () => {
    const ids = await h.ingest(
      h.orgA,
      Array.from({ length: 50 }, (_, i) => `document number ${i}`),
    );
    expect(ids).toHaveLength(50);
    expect(new Set(ids).size).toBe(50);
  });

  const invalid: [string, unknown, string][] = [
    ['51 documents', { documents: Array.from({ length: 51 }, () => ({ text: 'x' })) }, '/documents'],
    ['no documents', { documents: [] }, '/documents'],
    ['missing documents', {}, '/documents'],
    ['empty text', { documents: [{ text: '' }] }, '/documents/0/text'],
    ['missing text', { documents: [{ metadata: {} }] }, '/documents/0/text'],
    ['text not a string', { documents: [{ text: 42 }] }, '/documents/0/text'],
    [
      'non-string metadata value',
      { documents: [{ text: 'x', metadata: { n: 1 } }] },
      '/documents/0/metadata/n',
    ],
    [
      'nested metadata',
      { documents: [{ text: 'x', metadata: { a: { b: 'c' } } }] },
      '/documents/0/metadata/a',
    ],
    ['metadata not an object', { documents: [{ text: 'x', metadata: 'a=b' }] }, '/documents/0/metadata'],
    [
      '65 metadata keys',
      {
        documents: [
          { text: 'x', metadata: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, 'v'])) },
        ],
      },
      '/documents/0/metadata',
    ],
    ['chunk_size below 128', { documents: [{ text: 'x' }], chunk_size: 127 }, '/chunk_size'],
    ['chunk_size above 4096', { documents: [{ text: 'x' }], chunk_size: 4097 }, '/chunk_size'],
    ['chunk_size as a string', { documents: [{ text: 'x' }], chunk_size: '512' }, '/chunk_size'],
    ['chunk_size fractional', { documents: [{ text: 'x' }], chunk_size: 256.5 }, '/chunk_size'],
    ['chunk_overlap negative', { documents: [{ text: 'x' }], chunk_overlap: -1 }, '/chunk_overlap'],
    ['chunk_overlap above 512', { documents: [{ text: 'x' }], chunk_overlap: 513 }, '/chunk_overlap'],
    [
      'overlap equal to size',
      { documents: [{ text: 'x' }], chunk_size: 256, chunk_overlap: 256 },
      '/chunk_overlap',
    ],
    [
      'overlap above size',
      { documents: [{ text: 'x' }], chunk_size: 128, chunk_overlap: 200 },
      '/chunk_overlap',
    ],
    ['an unknown field', { documents: [{ text: 'x' }], chunk_sise: 256 }, '/chunk_sise'],
    ['an unknown document field', { documents: [{ text: 'x', title: 't' }] }, '/documents/0/title'],
    ['a body that is an array', [{ text: 'x' }], ''],
  ];
  for (const [label, body, pointer] of invalid) {
    it(`400 for ${label}, pointing at ${pointer || '/'}`, async () => {
      const res = await h.request('POST', '/v1/ingest', { body });
      expect(res.statusCode).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      const problem = res.json();
      expect(problem).toMatchObject({ status: 400, code: 'invalid_request', title: 'Invalid request' });
      expect(problem.request_id).toMatch(/^req_/);
      expect(problem.errors[0].pointer).toBe(pointer);
    });
  }

  it('400 for malformed JSON', async () => {
    const res = await h.request('POST', '/v1/ingest', {
      payload: '{"documents": [',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('invalid_request');
  });

  it('400 for __proto__ keys, and the prototype is unchanged', async () => {
    const res = await h.request('POST', '/v1/ingest', {
      payload: '{"documents":[{"text":"x","metadata":{"__proto__":{"polluted":"yes"}}}]}',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.statusCode).toBe(400);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('415 for a body that is not JSON', async () => {
    const res = await h.request('POST', '/v1/ingest', {
      payload: 'documents=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(res.statusCode).toBe(415);
    expect(res.json().code).toBe('unsupported_media_type');
  });

  it('413 for a body over the limit', async () => {
    const res = await h.request('POST', '/v1/ingest', {
      body: { documents: [{ text: 'x'.repeat(11 * 1024 * 1024) }] },
    });
    expect(res.statusCode).toBe(413);
    expect(res.json().code).toBe('payload_too_large');
  });

  it('strips NUL bytes and repairs lone surrogates in text and metadata values', async () => {
    // (A NUL in a metadata key is refused instead: see edges.test.ts.)
    const res = await h.request('POST', '/v1/ingest', {
      payload:
        '{"documents":[{"text":"nul\\u0000byte and \\ud800 lone","metadata":{"k":"v\\udc00\\u0000"}}]}',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.statusCode).toBe(202);
    const [id] = res.json().document_ids;
    const [doc] = await h.waitForDone(h.orgA, [id]);
    expect(doc).toMatchObject({ status: 'ready', metadata: { k: 'v\ufffd' } });
    const hits = (
      await h.request('POST', '/v1/query', { body: { query: 'nulbyte', document_ids: [id] } })
    ).json();
    expect(hits.results[0].text).toBe('nulbyte and \ufffd lone');
  });
});
