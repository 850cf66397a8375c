// The filter language over HTTP: operators on POST /v1/query and GET /v1/documents?filter=, a 400
// that points at the bad part for every form outside the language, and POST /v1/documents/delete
// deleting exactly the caller's matching documents (chunks and files too), never another org's.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../helpers/harness.js';

const idsOf = (body: { results?: { document_id: string }[]; documents?: { id: string }[] }) =>
  (body.results?.map((r) => r.document_id) ?? body.documents?.map((d) => d.id) ?? []).sort();

async function multipart(
  metadata: Record<string, string>,
  text: string,
): Promise<{ payload: Buffer; contentType: string }> {
  const form = new FormData();
  form.append('metadata', JSON.stringify(metadata));
  form.append('file', new Blob([text]), 'notes.txt');
  const request = new Request('http://localhost/', { method: 'POST', body: form });
  return {
    payload: Buffer.from(await request.arrayBuffer()),
    contentType: request.headers.get('content-type')!,
  };
}

describe('filters over HTTP', () => {
  let h: Harness;
  /** orgA's documents by name. */
  const a: Record<string, string> = {};
  beforeAll(async () => {
    h = await startHarness();
    const docs: [string, Record<string, string>][] = [
      ['old', { published: '2019-05-01', lang: 'en' }],
      ['mid', { published: '2021-03-15', lang: 'de' }],
      ['new', { published: '2024-11-30T08:00:00Z', lang: 'en', draft: 'yes' }],
      ['bare', {}],
    ];
    const res = await h.request('POST', '/v1/ingest', {
      body: { documents: docs.map(([name, metadata]) => ({ text: `walrus report ${name}`, metadata })) },
    });
    const ids: string[] = res.json().document_ids;
    docs.forEach(([name], i) => {
      a[name] = ids[i]!;
    });
    await h.waitForDone(h.orgA, ids);
  });
  afterAll(() => h.close());

  const query = async (filter: unknown) => {
    const res = await h.request('POST', '/v1/query', { body: { query: 'walrus', filter } });
    expect(res.statusCode, res.body).toBe(200);
    return idsOf(res.json());
  };
  const listed = async (filter: unknown, extra = '') => {
    const res = await h.request(
      'GET',
      `/v1/documents?limit=100&filter=${encodeURIComponent(JSON.stringify(filter))}${extra}`,
    );
    expect(res.statusCode, res.body).toBe(200);
    return idsOf(res.json());
  };
  const named = (...names: string[]) => names.map((n) => a[n]!).sort();

  it('queries and lists by date range, negation and presence', async () => {
    const cases: [unknown, string[]][] = [
      [{ published: { $gte: '2020-01-01', $lt: '2022-01-01' } }, ['mid']],
      [{ published: { $gt: '2021' } }, ['mid', 'new']],
      [{ lang: { $ne: 'en' } }, ['mid', 'bare']],
      [{ draft: { $exists: false }, lang: ['en', 'de'] }, ['old', 'mid']],
      [{ $or: [{ lang: 'de' }, { $not: { published: { $exists: true } } }] }, ['mid', 'bare']],
      [{ lang: { $nin: ['de'] } }, ['old', 'new', 'bare']],
    ];
    for (const [filter, names] of cases) {
      expect(await query(filter), JSON.stringify(filter)).toEqual(named(...names));
      expect(await listed(filter), JSON.stringify(filter)).toEqual(named(...names));
    }
    // The list's other parameters still apply with a filter.
    expect(await listed({ lang: 'en' }, '&status=ready')).toEqual(named('old', 'new'));
    expect(await listed({ lang: 'en' }, '&status=failed')).toEqual([]);
    expect(await listed({ lang: 'en' }, `&ids=${a.old},${a.mid}`)).toEqual(named('old'));
    // Another org sees none of these.
    const theirs = await h.request('POST', '/v1/query', {
      key: h.orgB.apiKey,
      body: { query: 'walrus', filter: { lang: 'en' } },
    });
    expect(theirs.json().results).toEqual([]);
  });

  const deep = { $not: { $not: { $not: { $not: { $not: { lang: 'en' } } } } } };
  const tooMany = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`k${i}`, 'v']));
  /** A filter outside the language, and the pointer its 400 names (under /filter). */
  const badFilters: [string, unknown, string][] = [
    ['an unknown operator', { year: { $regex: '^20' } }, '/year/$regex'],
    ['a number to compare with', { year: { $gt: 2020 } }, '/year/$gt'],
    ['a wrong type inside $and', { $and: [{ lang: 'en' }, { year: { $gt: 1 } }] }, '/$and/1/year/$gt'],
    ['$and that is not a list', { $and: { lang: 'en' } }, '/$and'],
    ['an empty $or', { $or: [] }, '/$or'],
    ['an empty $in', { lang: { $in: [] } }, '/lang/$in'],
    ['a number in $nin', { lang: { $nin: ['en', 3] } }, '/lang/$nin/1'],
    ['$exists that is not a boolean', { lang: { $exists: 'yes' } }, '/lang/$exists'],
    ['an empty operator object', { lang: {} }, '/lang'],
    ['a number as a value', { lang: 1 }, '/lang'],
    ['null as a value', { lang: null }, '/lang'],
    ['a list holding an object', { lang: [{ $eq: 'en' }] }, '/lang/0'],
    ['a misspelt logical operator', { $nor: [{ lang: 'en' }] }, '/$nor/0'],
    ['$not of a list', { $not: [{ lang: 'en' }] }, '/$not'],
    ['an empty key', { '': 'x' }, '/'],
    ['a key with a slash and a bad operator', { 'a/b~c': { $like: 'x' } }, '/a~1b~0c/$like'],
    ['a value over 2048 characters', { lang: 'x'.repeat(2049) }, '/lang'],
    ['more than 5 levels', deep, '/$not/$not/$not/$not/$not'],
    ['more than 100 conditions', tooMany, '/k100'],
  ];

  for (const [label, filter, pointer] of badFilters) {
    it(`400 with a pointer for ${label}, in query, list and delete`, async () => {
      const answers = [
        ['/filter', await h.request('POST', '/v1/query', { body: { query: 'walrus', filter } })],
        [
          '/query/filter',
          await h.request('GET', `/v1/documents?filter=${encodeURIComponent(JSON.stringify(filter))}`),
        ],
        ['/filter', await h.request('POST', '/v1/documents/delete', { body: { filter } })],
      ] as const;
      for (const [base, res] of answers) {
        expect(res.statusCode, `${base}: ${res.body}`).toBe(400);
        expect(res.headers['content-type']).toContain('application/problem+json');
        const body = res.json();
        expect(body.code).toBe('invalid_request');
        expect(body.errors, base).toEqual([{ pointer: `${base}${pointer}`, message: expect.any(String) }]);
        expect(body.detail).toContain(`${base}${pointer}`);
      }
    });
  }

  it('names the logical operators when a key starting with $ is misused', async () => {
    const res = await h.request('POST', '/v1/query', {
      body: { query: 'walrus', filter: { $nor: [{ lang: 'en' }] } },
    });
    expect(res.json().errors[0].message).toContain('$and, $or, $not');
  });

  it('400 for a list filter that is not JSON or not an object', async () => {
    for (const raw of ['{lang:en}', '[]', '"en"', 'null']) {
      const res = await h.request('GET', `/v1/documents?filter=${encodeURIComponent(raw)}`);
      expect(res.statusCode, raw).toBe(400);
      expect(res.json().errors[0].pointer, raw).toBe('/query/filter');
    }
  });

  it('400 for a query or delete filter that is not an object', async () => {
    for (const filter of [[], 'en', null]) {
      for (const [url, body] of [
        ['/v1/query', { query: 'walrus', filter }],
        ['/v1/documents/delete', { filter }],
      ] as const) {
        const res = await h.request('POST', url, { body });
        expect(res.statusCode, `${url} ${JSON.stringify(filter)}`).toBe(400);
        expect(res.json().errors[0].pointer).toBe('/filter');
      }
    }
  });

  it('400 for a delete without filter or ids, with an empty filter alone, or an unknown field', async () => {
    for (const body of [{}, { filter: {} }, { filter: { lang: 'en' }, limit: 5 }, { document_ids: [] }]) {
      const res = await h.request('POST', '/v1/documents/delete', { body });
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().code).toBe('invalid_request');
    }
    expect(await listed({})).toEqual(named('old', 'mid', 'new', 'bare'));
  });
});

describe('POST /v1/documents/delete', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  const ingest = async (key: string, docs: Record<string, string>[], word: string) => {
    const res = await h.request('POST', '/v1/ingest', {
      key,
      body: { documents: docs.map((metadata, i) => ({ text: `${word} number ${i}`, metadata })) },
    });
    return res.json().document_ids as string[];
  };
  const search = async (key: string, word: string) =>
    idsOf((await h.request('POST', '/v1/query', { key, body: { query: word, top_k: 100 } })).json());

  it('deletes only the caller’s matching documents; they stop matching at once; another org’s stay', async () => {
    const metadata = [
      { year: '2019', team: 'red' },
      { year: '2020', team: 'red' },
      { year: '2023', team: 'red' },
      { year: '2018', team: 'blue' },
    ];
    const mine = await ingest(h.orgA.apiKey, metadata, 'narwhal');
    const theirs = await ingest(h.orgB.apiKey, metadata, 'narwhal');
    await h.waitForDone(h.orgA, mine);
    await h.waitForDone(h.orgB, theirs);

    const filter = { team: 'red', year: { $lte: '2020' } };
    const res = await h.request('POST', '/v1/documents/delete', { body: { filter } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ deleted: 2, has_more: false });

    for (const id of mine.slice(0, 2))
      expect((await h.request('GET', `/v1/documents/${id}`)).statusCode).toBe(404);
    expect(await search(h.orgA.apiKey, 'narwhal')).toEqual([mine[2]!, mine[3]!].sort());
    // The other org's documents with the same metadata are all there, and still match.
    expect(await search(h.orgB.apiKey, 'narwhal')).toEqual([...theirs].sort());
    const listedB = await h.request('GET', `/v1/documents?ids=${theirs.join(',')}`, { key: h.orgB.apiKey });
    expect(listedB.json().documents).toHaveLength(4);

    // Nothing left to match: 0, and the other org's ids are passed over.
    expect((await h.request('POST', '/v1/documents/delete', { body: { filter } })).json()).toEqual({
      deleted: 0,
      has_more: false,
    });
    const cross = await h.request('POST', '/v1/documents/delete', { body: { document_ids: theirs } });
    expect(cross.json()).toEqual({ deleted: 0, has_more: false });
    expect(await search(h.orgB.apiKey, 'narwhal')).toEqual([...theirs].sort());
  });

  it('deletes by ids, and by ids that also pass the filter', async () => {
    const ids = await ingest(h.orgA.apiKey, [{ kind: 'x' }, { kind: 'y' }, { kind: 'x' }, {}], 'okapi');
    await h.waitForDone(h.orgA, ids);
    const both = await h.request('POST', '/v1/documents/delete', {
      body: { document_ids: [ids[0], ids[1], randomUUID()], filter: { kind: 'x' } },
    });
    expect(both.json()).toEqual({ deleted: 1, has_more: false });
    expect(await search(h.orgA.apiKey, 'okapi')).toEqual([ids[1]!, ids[2]!, ids[3]!].sort());
    const byIds = await h.request('POST', '/v1/documents/delete', {
      body: { document_ids: [ids[1], ids[3]] },
    });
    expect(byIds.json()).toEqual({ deleted: 2, has_more: false });
    expect(await search(h.orgA.apiKey, 'okapi')).toEqual([ids[2]!]);
  });

  it('removes the stored file of each deleted upload, and documents still being processed', async () => {
    const before = (await h.blobFiles()).length;
    const { payload, contentType } = await multipart({ batch: 'b7' }, 'The tapir file.\n');
    const upload = await h.request('POST', '/v1/ingest/file', {
      payload,
      headers: { 'content-type': contentType },
    });
    const [fileId] = upload.json().document_ids as string[];
    await h.waitForDone(h.orgA, [fileId!]);
    expect((await h.blobFiles()).length).toBe(before + 1);
    // Queued, perhaps not processed yet: deleted all the same, and it never comes back.
    const queued = await ingest(h.orgA.apiKey, [{ batch: 'b7' }, { batch: 'b7' }], 'tapir');

    const res = await h.request('POST', '/v1/documents/delete', { body: { filter: { batch: 'b7' } } });
    expect(res.json()).toEqual({ deleted: 3, has_more: false });
    expect((await h.blobFiles()).length).toBe(before);
    for (const id of [fileId!, ...queued]) {
      expect((await h.request('GET', `/v1/documents/${id}`)).statusCode).toBe(404);
    }
    expect(await search(h.orgA.apiKey, 'tapir')).toEqual([]);
  });
});
