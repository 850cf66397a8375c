// GET /v1/documents/{id}, GET /v1/documents (paging, filters, batch status), DELETE.
import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../helpers/harness.js';

describe('documents', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  it('GET returns the full status record', async () => {
    const [id] = await h.ingest(h.orgA, ['status record text']);
    const [doc] = await h.waitForDone(h.orgA, [id!]);
    expect(Object.keys(doc!).sort()).toEqual(
      [
        'access',
        'attempts',
        'chunk_count',
        'chunk_overlap',
        'chunk_size',
        'content_sha256',
        'created_at',
        'error',
        'external_id',
        'id',
        'language',
        'metadata',
        'ocr_pages',
        'org_id',
        'partition',
        'pending_version',
        'source',
        'status',
        'token_count',
        'tokenizer',
        'updated_at',
        'vectors',
        'version',
      ].sort(),
    );
    // A JSON text never needs OCR.
    expect(doc).toMatchObject({
      status: 'ready',
      attempts: 1,
      chunk_count: 1,
      token_count: 3,
      ocr_pages: null,
      // Three words are too few to tell a language by: SEARCH_LANGUAGE=auto's English.
      language: 'en',
    });
    expect(doc).toMatchObject({ external_id: null, partition: 'default', version: 1, pending_version: null });
    // No embedding provider in this harness: the vector stage is off.
    expect(doc!.vectors).toEqual({ status: 'disabled', model: null, error: null });
    expect(doc!.content_sha256).toBe(createHash('sha256').update('status record text').digest('hex'));
  });

  it('GET of a malformed or missing id is a 404 problem', async () => {
    for (const id of ['nope', randomUUID()]) {
      const res = await h.request('GET', `/v1/documents/${id}`);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ code: 'not_found', status: 404 });
    }
  });

  it('lists newest first with a cursor that returns every document exactly once', async () => {
    const ids = await h.ingest(
      h.orgB,
      Array.from({ length: 25 }, (_, i) => `paged ${i}`),
    );
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const url: string = `/v1/documents?limit=10${cursor ? `&cursor=${cursor}` : ''}`;
      const res = await h.request('GET', url, { key: h.orgB.apiKey });
      expect(res.statusCode).toBe(200);
      const body = res.json();
      seen.push(...body.documents.map((d: { id: string }) => d.id));
      cursor = body.next_cursor;
      pages += 1;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen.sort()).toEqual([...ids].sort());
  });

  it('filters by status and answers batch status for ids', async () => {
    const ids = await h.ingest(h.orgA, ['one', 'two', 'three']);
    await h.waitForDone(h.orgA, ids);
    const res = await h.request('GET', `/v1/documents?ids=${ids.join(',')},${randomUUID()}`);
    expect(
      res
        .json()
        .documents.map((d: { id: string }) => d.id)
        .sort(),
    ).toEqual([...ids].sort());
    const ready = await h.request('GET', '/v1/documents?status=ready&limit=100');
    expect(ready.json().documents.every((d: { status: string }) => d.status === 'ready')).toBe(true);
    const failed = await h.request('GET', '/v1/documents?status=failed');
    expect(failed.json().documents).toEqual([]);
  });

  it('filters by content_sha256 to find duplicates', async () => {
    const ids = await h.ingest(h.orgA, ['duplicate body', 'duplicate body', 'another body']);
    const docs = await h.waitForDone(h.orgA, ids);
    const sha = docs[0]!.content_sha256 as string;
    const res = await h.request('GET', `/v1/documents?content_sha256=${sha}`);
    expect(
      res
        .json()
        .documents.map((d: { id: string }) => d.id)
        .sort(),
    ).toEqual([ids[0], ids[1]].sort());
  });

  const badQueries = [
    'limit=0',
    'limit=101',
    'limit=abc',
    'status=done',
    'cursor=garbage',
    'ids=',
    'content_sha256=xyz',
    'unknown=1',
  ];
  for (const query of badQueries) {
    it(`400 for ?${query}`, async () => {
      const res = await h.request('GET', `/v1/documents?${query}`);
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('invalid_request');
    });
  }

  it('400 for more than 100 ids', async () => {
    const ids = Array.from({ length: 101 }, () => randomUUID()).join(',');
    const res = await h.request('GET', `/v1/documents?ids=${ids}`);
    expect(res.statusCode).toBe(400);
  });

  it('DELETE answers 204, then the document is gone and its chunks stop matching', async () => {
    const [id] = await h.ingest(h.orgA, ['the platypus is a monotreme']);
    await h.waitForDone(h.orgA, [id!]);
    const before = await h.request('POST', '/v1/query', { body: { query: 'platypus' } });
    expect(before.json().results.map((r: { document_id: string }) => r.document_id)).toContain(id);

    const del = await h.request('DELETE', `/v1/documents/${id}`);
    expect(del.statusCode).toBe(204);
    expect(del.body).toBe('');
    expect((await h.request('GET', `/v1/documents/${id}`)).statusCode).toBe(404);
    const after = await h.request('POST', '/v1/query', { body: { query: 'platypus' } });
    expect(after.json().results.map((r: { document_id: string }) => r.document_id)).not.toContain(id);
    expect((await h.request('DELETE', `/v1/documents/${id}`)).statusCode).toBe(404);
  });
});

describe('delete while queued', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ worker: false });
  });
  afterAll(() => h.close());

  it('a document deleted before a worker reaches it never becomes ready', async () => {
    const [keep, drop] = await h.ingest(h.orgA, ['kept echidna', 'dropped echidna']);
    expect((await h.request('DELETE', `/v1/documents/${drop}`)).statusCode).toBe(204);
    const worker = h.runtime.startWorker();
    try {
      await h.waitForDone(h.orgA, [keep!]);
      expect((await h.request('GET', `/v1/documents/${drop}`)).statusCode).toBe(404);
      const hits = (await h.request('POST', '/v1/query', { body: { query: 'echidna' } })).json().results;
      expect(hits.map((r: { document_id: string }) => r.document_id)).toEqual([keep]);
    } finally {
      await worker.stop();
    }
  });
});

describe('PATCH /v1/documents/{id} (metadata)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  const patch = (id: string, metadata: unknown, key = h.orgA.apiKey) =>
    h.request('PATCH', `/v1/documents/${id}`, { body: { metadata }, key });
  const hitsFor = async (filter: Record<string, string>) =>
    (await h.request('POST', '/v1/query', { body: { query: 'wombat', filter } }))
      .json()
      .results.map((r: { document_id: string }) => r.document_id);

  it('sets, replaces and removes keys, keeps the others, and query filters see it at once', async () => {
    const [id] = await h.ingest(h.orgA, ['a wombat digs a burrow'], {});
    await h.waitForDone(h.orgA, [id!]);
    const first = await patch(id!, { team: 'red', stage: 'draft' });
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({ id, status: 'ready', metadata: { team: 'red', stage: 'draft' } });
    expect(await hitsFor({ team: 'red' })).toEqual([id]);

    const second = await patch(id!, { team: 'blue', stage: null });
    expect(second.json().metadata).toEqual({ team: 'blue' });
    expect(await hitsFor({ team: 'red' })).toEqual([]);
    expect(await hitsFor({ team: 'blue' })).toEqual([id]);
    expect((await h.request('GET', `/v1/documents/${id}`)).json().metadata).toEqual({ team: 'blue' });
  });

  it('is a 404 for a missing document or one of another org, which stays unchanged', async () => {
    const [id] = await h.ingest(h.orgA, ['owned by org a'], {});
    expect((await patch(randomUUID(), { a: 'b' })).statusCode).toBe(404);
    const other = await patch(id!, { stolen: 'yes' }, h.orgB.apiKey);
    expect(other.statusCode).toBe(404);
    expect(other.json()).toMatchObject({ code: 'not_found' });
    expect((await h.request('GET', `/v1/documents/${id}`)).json().metadata).toEqual({});
  });

  it('refuses bad bodies with a 400 that points at the problem, and more than 64 keys after the merge', async () => {
    const [id] = await h.ingest(h.orgA, ['limits'], {});
    for (const body of [
      {},
      { metadata: { n: 1 } },
      { metadata: { k: 'x'.repeat(2049) } },
      { metadata: [] },
    ]) {
      const res = await h.request('PATCH', `/v1/documents/${id}`, { body });
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json()).toMatchObject({ code: 'invalid_request' });
    }
    const sixty = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`k${i}`, 'v']));
    expect((await patch(id!, sixty)).statusCode).toBe(200);
    const over = await patch(id!, Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`n${i}`, 'v'])));
    expect(over.statusCode).toBe(400);
    expect(over.json().errors).toEqual([
      { pointer: '/metadata', message: 'at most 64 keys after the merge' },
    ]);
    const doc = (await h.request('GET', `/v1/documents/${id}`)).json();
    expect(Object.keys(doc.metadata)).toHaveLength(60);
    // Removing some while adding others counts what is left.
    const swap = {
      ...Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`k${i}`, null])),
      n0: 'v',
      n1: 'v',
    };
    expect((await patch(id!, swap)).json().metadata).toMatchObject({ n0: 'v', n1: 'v' });
  });
});

describe('GET /v1/documents/{id}/chunks', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  it('pages through a ready document’s chunks in order, each once, as they were indexed', async () => {
    const words = Array.from({ length: 900 }, (_, i) => `word${i}`).join(' ');
    const [id] = await h.ingest(h.orgA, [words], { chunk_size: 128, chunk_overlap: 0 });
    const [doc] = await h.waitForDone(h.orgA, [id!]);
    const chunkCount = doc!.chunk_count as number;
    expect(chunkCount).toBeGreaterThan(5);
    const seen: { index: number; text: string; token_count: number }[] = [];
    let cursor: string | null = null;
    do {
      const url: string = `/v1/documents/${id}/chunks?limit=2${cursor ? `&cursor=${cursor}` : ''}`;
      const res = await h.request('GET', url);
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body.chunks.length).toBeLessThanOrEqual(2);
      seen.push(...body.chunks);
      cursor = body.next_cursor;
    } while (cursor);
    expect(seen.map((c) => c.index)).toEqual(Array.from({ length: chunkCount }, (_, i) => i));
    expect(seen.reduce((n, c) => n + c.token_count, 0)).toBe(doc!.token_count);
    expect(seen[0]).toMatchObject({ page_start: null, page_end: null });
    // No overlap: the chunks put back together are the text.
    expect(seen.map((c) => c.text).join('')).toBe(words);
  });

  it('answers 404 for another org’s document, 409 not_ready before ready, 400 for a bad cursor', async () => {
    const [id] = await h.ingest(h.orgA, ['a small text'], {});
    await h.waitForDone(h.orgA, [id!]);
    expect((await h.request('GET', `/v1/documents/${id}/chunks`, { key: h.orgB.apiKey })).statusCode).toBe(
      404,
    );
    expect((await h.request('GET', `/v1/documents/${randomUUID()}/chunks`)).statusCode).toBe(404);
    const bad = await h.request('GET', `/v1/documents/${id}/chunks?cursor=nonsense`);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors).toEqual([{ pointer: '/query/cursor', message: 'unrecognised cursor' }]);
    expect((await h.request('GET', `/v1/documents/${id}/chunks?limit=101`)).statusCode).toBe(400);
  });
});

describe('GET /v1/documents/{id}/chunks before ready', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ worker: false });
  });
  afterAll(() => h.close());

  it('is a 409 not_ready problem while the document waits', async () => {
    const [id] = await h.ingest(h.orgA, ['still queued'], {});
    const res = await h.request('GET', `/v1/documents/${id}/chunks`);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ code: 'not_ready', status: 409 });
  });
});
