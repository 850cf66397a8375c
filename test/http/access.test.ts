// Access lists over HTTP, on whichever backend the harness runs (SQLite embedded, PostgreSQL +
// Redis scaled out), with an embedding provider so every query mode runs: the leak matrix — a key
// limited to a partition or not × a document in or out of it × principals that match its access
// list, that do not, or a document without one, the principals named by the request or bound to
// the key — over every route and MCP tool that returns or changes a document; a bound key cannot
// widen its principals; top_k is filled from the visible documents; access on every ingest form.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen } from '../client/support.js';
import { EmbeddingsServer } from '../helpers/embeddings-server.js';
import { type Harness, startHarness, type TestOrg } from '../helpers/harness.js';
import { multipart } from '../helpers/multipart.js';

interface Doc {
  id: string;
  partition: 'red' | 'blue';
  access: string[] | null;
}

/** Who asks: a key limited to `red` or not, acting for principals it names or is bound to. */
interface Asker {
  label: string;
  key: TestOrg;
  limited: boolean;
  principals: 'eng' | 'hr';
  /** Named by the request (`principals` / `?principals=`), or bound to the key. */
  how: 'named' | 'bound';
}

let provider: EmbeddingsServer;
let h: Harness;

beforeAll(async () => {
  provider = await new EmbeddingsServer({ dimensions: 64 }).start();
  h = await startHarness({ env: provider.env({ EMBEDDINGS_TIMEOUT_MS: '2000' }) });
});

afterAll(async () => {
  await h?.close();
  await provider?.stop();
});

async function key(options: { partitions?: string[]; principals?: string[] }): Promise<TestOrg> {
  const issued = await h.runtime.admin.issueKey(h.orgA.orgId, options);
  return { orgId: h.orgA.orgId, keyId: issued.key_id, apiKey: issued.api_key };
}

/** Ingests JSON documents with the full key and waits until each is ready with its vectors. */
async function ingestReady(documents: Array<Record<string, unknown>>, org = h.orgA): Promise<string[]> {
  const res = await h.request('POST', '/v1/ingest', { key: org.apiKey, body: { documents } });
  expect(res.statusCode, res.body).toBe(202);
  const ids = res.json().document_ids as string[];
  await h.waitForVectors(org, ids);
  return ids;
}

/** Ingests one JSON document with the full key (not waiting for it). */
async function ingestOne(doc: {
  text: string;
  partition?: string;
  access?: string[] | null;
}): Promise<string[]> {
  const { access, ...rest } = doc;
  const res = await h.request('POST', '/v1/ingest', {
    key: h.orgA.apiKey,
    body: { documents: [{ ...rest, ...(access == null ? {} : { access }) }] },
  });
  expect(res.statusCode, res.body).toBe(202);
  return res.json().document_ids as string[];
}

const PRINCIPALS = { eng: ['group:eng', 'user:1'], hr: ['group:hr'] } as const;

describe('access lists: the leak matrix', () => {
  const docs: Doc[] = [];
  const askers: Asker[] = [];

  beforeAll(async () => {
    const kinds = [
      { partition: 'red', access: ['group:eng'] },
      { partition: 'red', access: null },
      { partition: 'blue', access: ['group:eng', 'user:9'] },
      { partition: 'blue', access: null },
    ] as const;
    const ids = await ingestReady(
      kinds.map((k, i) => ({
        text: `The capybara grazes by the river, note ${i}.`,
        partition: k.partition,
        ...(k.access === null ? {} : { access: k.access }),
      })),
    );
    kinds.forEach((k, i) => {
      docs.push({ id: ids[i]!, partition: k.partition, access: k.access === null ? null : [...k.access] });
    });
    for (const limited of [false, true]) {
      const partitions = limited ? { partitions: ['red'] } : {};
      const plain = limited ? await key(partitions) : h.orgA;
      for (const principals of ['eng', 'hr'] as const) {
        const label = `${limited ? 'red-limited' : 'full'} key, ${principals}`;
        askers.push({ label: `${label} named`, key: plain, limited, principals, how: 'named' });
        const bound = await key({ ...partitions, principals: [...PRINCIPALS[principals]] });
        askers.push({ label: `${label} bound`, key: bound, limited, principals, how: 'bound' });
      }
    }
  });

  /** The reference: whether the asker may see the document. */
  const visible = (a: Asker, d: Doc) =>
    (!a.limited || d.partition === 'red') &&
    (d.access === null || d.access.some((p) => (PRINCIPALS[a.principals] as readonly string[]).includes(p)));

  /** `?principals=` for an asker that names them (a bound key's requests name none). */
  const qs = (a: Asker, sep = '?') =>
    a.how === 'named' ? `${sep}principals=${PRINCIPALS[a.principals].join(',')}` : '';
  const body = (a: Asker) => (a.how === 'named' ? { principals: [...PRINCIPALS[a.principals]] } : {});

  it('shows the access list in the status record', async () => {
    const res = await h.request('GET', `/v1/documents/${docs[0]!.id}`, { key: h.orgA.apiKey });
    expect(res.json()).toMatchObject({ access: ['group:eng'], partition: 'red' });
    const open = await h.request('GET', `/v1/documents/${docs[1]!.id}`, { key: h.orgA.apiKey });
    expect(open.json().access).toBeNull();
  });

  it('reads: status, chunks, content, file and list are 404 or absent exactly where the reference says', async () => {
    for (const a of askers) {
      for (const d of docs) {
        const label = `${a.label}, ${d.partition} ${d.access === null ? 'open' : d.access.join('+')}`;
        for (const url of [
          `/v1/documents/${d.id}`,
          `/v1/documents/${d.id}/chunks`,
          `/v1/documents/${d.id}/content`,
        ]) {
          const res = await h.request('GET', `${url}${qs(a)}`, { key: a.key.apiKey });
          expect(res.statusCode, `${label}: ${url}`).toBe(visible(a, d) ? 200 : 404);
          if (!visible(a, d)) expect(res.json().detail).toBe(`No document with id ${d.id}.`);
        }
        // A JSON text has no file: 404 either way, but never the file's bytes.
        const file = await h.request('GET', `/v1/documents/${d.id}/file${qs(a)}`, { key: a.key.apiKey });
        expect(file.statusCode, `${label}: file`).toBe(404);
        const listed = await h.request('GET', `/v1/documents?ids=${d.id}${qs(a, '&')}`, {
          key: a.key.apiKey,
        });
        expect(
          (listed.json().documents as { id: string }[]).map((x) => x.id),
          `${label}: list`,
        ).toEqual(visible(a, d) ? [d.id] : []);
      }
      const all = await h.request('GET', `/v1/documents${qs(a)}`, { key: a.key.apiKey });
      const expected = docs.filter((d) => visible(a, d)).map((d) => d.id);
      const listed = (all.json().documents as { id: string }[])
        .map((x) => x.id)
        .filter((id) => docs.some((d) => d.id === id));
      expect(listed.sort(), `${a.label}: whole list`).toEqual(expected.sort());
    }
  });

  it('query: keyword, semantic and hybrid answer every visible document and nothing else', async () => {
    for (const a of askers) {
      const expected = docs.filter((d) => visible(a, d)).map((d) => d.id);
      for (const mode of ['keyword', 'semantic', 'hybrid'] as const) {
        const res = await h.request('POST', '/v1/query', {
          key: a.key.apiKey,
          body: { query: 'capybara grazes by the river', top_k: 20, mode, ...body(a) },
        });
        expect(res.statusCode, `${a.label} ${mode}: ${res.body}`).toBe(200);
        const ids = new Set((res.json().results as { document_id: string }[]).map((r) => r.document_id));
        const ours = [...ids].filter((id) => docs.some((d) => d.id === id));
        expect(ours.sort(), `${a.label} ${mode}`).toEqual([...expected].sort());
      }
    }
  });

  it('MCP: search, get_document and list_documents see exactly what the reference says', async () => {
    const baseUrl = await listen(h.app);
    for (const a of askers) {
      const client = new Client({ name: 'docindex-test', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL('/mcp', baseUrl), {
          requestInit: { headers: { authorization: `Bearer ${a.key.apiKey}` } },
        }),
      );
      try {
        const call = async (name: string, args: Record<string, unknown>) =>
          (await client.callTool({ name, arguments: { ...args, ...body(a) } })) as CallToolResult;
        const expected = docs.filter((d) => visible(a, d)).map((d) => d.id);
        const found = (await call('search', { query: 'capybara', top_k: 20 })).structuredContent as {
          results: { document_id: string }[];
        };
        const foundIds = [...new Set(found.results.map((r) => r.document_id))].filter((id) =>
          docs.some((d) => d.id === id),
        );
        expect(foundIds.sort(), `${a.label}: search`).toEqual([...expected].sort());
        const listed = (await call('list_documents', { document_ids: docs.map((d) => d.id) }))
          .structuredContent as { documents: { id: string }[] };
        expect(listed.documents.map((d) => d.id).sort(), `${a.label}: list`).toEqual([...expected].sort());
        for (const d of docs) {
          const got = await call('get_document', { id: d.id });
          expect(got.isError ?? false, `${a.label}: get ${d.id}`).toBe(!visible(a, d));
        }
      } finally {
        await client.close();
      }
    }
  });

  it('changes: PATCH, PUT content, reprocess, DELETE and delete-by-filter are 404 or nothing where not visible', async () => {
    for (const a of askers) {
      for (const d of docs.filter((x) => !visible(a, x))) {
        const label = `${a.label}, ${d.partition} ${d.access?.join('+') ?? 'open'}`;
        const changes: [string, string, unknown][] = [
          ['PATCH', `/v1/documents/${d.id}${qs(a)}`, { metadata: { seen: 'yes' } }],
          ['PATCH', `/v1/documents/${d.id}${qs(a)}`, { access: null }],
          ['PUT', `/v1/documents/${d.id}/content${qs(a)}`, { text: 'Replaced.' }],
          ['POST', `/v1/documents/${d.id}/reprocess${qs(a)}`, {}],
          ['DELETE', `/v1/documents/${d.id}${qs(a)}`, undefined],
        ];
        for (const [method, url, payload] of changes) {
          const res = await h.request(method as 'POST', url, {
            key: a.key.apiKey,
            ...(payload === undefined ? {} : { body: payload }),
          });
          expect(res.statusCode, `${label}: ${method} ${url}`).toBe(404);
        }
        const many = await h.request('POST', '/v1/documents/delete', {
          key: a.key.apiKey,
          body: { document_ids: [d.id], ...body(a) },
        });
        expect(many.json(), `${label}: delete-by-filter`).toEqual({ deleted: 0, has_more: false });
      }
    }
    // Nothing changed: every document as it was ingested.
    for (const d of docs) {
      const res = await h.request('GET', `/v1/documents/${d.id}`, { key: h.orgA.apiKey });
      expect(res.json(), d.id).toMatchObject({
        version: 1,
        metadata: {},
        access: d.access,
        pending_version: null,
      });
    }
  });

  it('changes: where visible, PATCH, PUT content and reprocess go through, and DELETE and delete-by-filter delete', async () => {
    for (const a of askers) {
      for (const kind of docs.filter((x) => visible(a, x))) {
        const label = `${a.label}, ${kind.partition} ${kind.access?.join('+') ?? 'open'}`;
        const [id] = await ingestOne({
          text: 'A fresh capybara.',
          partition: kind.partition,
          access: kind.access,
        });
        await h.waitForDone(h.orgA, [id!]);
        const patched = await h.request('PATCH', `/v1/documents/${id}${qs(a)}`, {
          key: a.key.apiKey,
          body: { metadata: { seen: 'yes' } },
        });
        expect(patched.statusCode, `${label}: PATCH`).toBe(200);
        const reprocessed = await h.request('POST', `/v1/documents/${id}/reprocess${qs(a)}`, {
          key: a.key.apiKey,
          body: {},
        });
        expect(reprocessed.statusCode, `${label}: reprocess`).toBe(202);
        const replaced = await h.request('PUT', `/v1/documents/${id}/content${qs(a)}`, {
          key: a.key.apiKey,
          body: { text: 'A replaced capybara.' },
        });
        expect(replaced.statusCode, `${label}: PUT`).toBe(202);
        const deleted = await h.request('DELETE', `/v1/documents/${id}${qs(a)}`, { key: a.key.apiKey });
        expect(deleted.statusCode, `${label}: DELETE`).toBe(204);
        const [other] = await ingestOne({
          text: 'Another capybara.',
          partition: kind.partition,
          access: kind.access,
        });
        const many = await h.request('POST', '/v1/documents/delete', {
          key: a.key.apiKey,
          body: { document_ids: [other], ...body(a) },
        });
        expect(many.json(), `${label}: delete-by-filter`).toEqual({ deleted: 1, has_more: false });
      }
    }
  });
});

describe('access lists: principals, keys and ingest', () => {
  const problem = (res: { json(): unknown }) =>
    res.json() as { code: string; errors?: { pointer: string }[] };

  it('a bound key narrows its principals but cannot widen them: 403 principal_forbidden everywhere', async () => {
    const bound = await key({ principals: ['group:eng', 'user:1'] });
    const org = await h.request('GET', '/v1/org', { key: bound.apiKey });
    expect(org.json().key).toMatchObject({ partitions: null, principals: ['group:eng', 'user:1'] });
    const [id] = await ingestOne({ text: 'A guarded okapi.', access: ['user:1'] });
    await h.waitForDone(h.orgA, [id!]);
    const asks: [string, string, unknown][] = [
      ['POST', '/v1/query', { query: 'okapi', principals: ['group:hr'] }],
      ['POST', '/v1/documents/delete', { document_ids: [id], principals: ['group:hr'] }],
      ['GET', '/v1/documents?principals=group:eng,group:hr', undefined],
      ['GET', `/v1/documents/${id}?principals=group:hr`, undefined],
      ['DELETE', `/v1/documents/${id}?principals=group:hr`, undefined],
    ];
    for (const [method, url, payload] of asks) {
      const res = await h.request(method as 'POST', url, {
        key: bound.apiKey,
        ...(payload === undefined ? {} : { body: payload }),
      });
      expect(res.statusCode, `${method} ${url}`).toBe(403);
      expect(problem(res).code).toBe('principal_forbidden');
    }
    // Narrowed to user:1 it still sees the document; to group:eng alone it does not.
    const narrowed = await h.request('GET', `/v1/documents/${id}?principals=user:1`, { key: bound.apiKey });
    expect(narrowed.statusCode).toBe(200);
    const other = await h.request('GET', `/v1/documents/${id}?principals=group:eng`, { key: bound.apiKey });
    expect(other.statusCode).toBe(404);
    // An empty value is the empty list: only documents without an access list.
    const none = await h.request('GET', `/v1/documents/${id}?principals=`, { key: bound.apiKey });
    expect(none.statusCode).toBe(404);
    // Work on the whole org is refused to a bound key.
    for (const [method, url, payload] of [
      ['GET', '/v1/sources', undefined],
      ['DELETE', '/v1/partitions/default', undefined],
    ] as const) {
      const res = await h.request(method, url, {
        key: bound.apiKey,
        ...(payload === undefined ? {} : { body: payload }),
      });
      expect(res.statusCode, url).toBe(403);
      expect(problem(res).code).toBe('principal_forbidden');
    }
  });

  it('a bound key cannot send a new version, by external_id, of a document it may not see', async () => {
    const bound = await key({ principals: ['group:eng'] });
    const full = h.orgA.apiKey;
    const send = (apiKey: string, externalId: string, text: string) =>
      h.request('POST', '/v1/ingest', {
        key: apiKey,
        body: { documents: [{ text, external_id: externalId }] },
      });
    const hiddenAck = await h.request('POST', '/v1/ingest', {
      key: full,
      body: { documents: [{ text: 'The hr wage table.', external_id: 'wages', access: ['group:hr'] }] },
    });
    const [hidden] = hiddenAck.json().document_ids as string[];
    const openAck = await send(full, 'handbook', 'The open handbook.');
    const [open] = openAck.json().document_ids as string[];
    await h.waitForDone(h.orgA, [hidden!, open!]);
    const json = await send(bound.apiKey, 'wages', 'Overwritten.');
    expect(json.statusCode, json.body).toBe(403);
    expect(problem(json).code).toBe('principal_forbidden');
    const form = await multipart([
      { name: 'file', value: Buffer.from('Overwritten by a file.'), filename: 'w.txt' },
      { name: 'external_id', value: 'wages' },
    ]);
    const file = await h.request('POST', '/v1/ingest/file', {
      key: bound.apiKey,
      payload: form.payload,
      headers: { 'content-type': form.contentType },
    });
    expect(file.statusCode, file.body).toBe(403);
    expect(problem(file).code).toBe('principal_forbidden');
    const kept = await h.request('GET', `/v1/documents/${hidden}`, { key: full });
    expect(kept.json()).toMatchObject({ version: 1, status: 'ready', access: ['group:hr'] });
    const content = await h.request('GET', `/v1/documents/${hidden}/content`, { key: full });
    expect(content.body).toContain('wage table');
    // A document it may see takes the new version, as before.
    const visible = await send(bound.apiKey, 'handbook', 'The handbook, second edition.');
    expect(visible.statusCode, visible.body).toBe(202);
    expect(visible.json().document_ids).toEqual([open]);
  });

  it('keys are issued bound to principals through the admin API and listed with them', async () => {
    const issued = await h.runtime.admin.issueKey(h.orgA.orgId, { principals: ['user:5', 'group:a'] });
    expect(issued.principals).toEqual(['group:a', 'user:5']);
    const keys = await h.runtime.admin.listKeys(h.orgA.orgId);
    expect(keys.find((k) => k.id === issued.key_id)?.principals).toEqual(['group:a', 'user:5']);
    const bad = await h.runtime.admin
      .issueKey(h.orgA.orgId, { principals: ['x'.repeat(129)] })
      .catch((error: unknown) => error);
    expect((bad as { status: number }).status).toBe(400);
  });

  it('top_k is filled from the visible documents: 3 of 40 matching, top_k 10, every mode', async () => {
    // Org B holds only these documents, so semantic mode's nearest are all among them.
    const texts = Array.from({ length: 40 }, (_, i) => ({
      text: `The pangolin rolls into a ball, record ${i}.`,
      access: i < 3 ? ['user:77'] : ['group:other'],
    }));
    const ids = await ingestReady(texts, h.orgB);
    for (const mode of ['keyword', 'semantic', 'hybrid'] as const) {
      const res = await h.request('POST', '/v1/query', {
        key: h.orgB.apiKey,
        body: { query: 'pangolin rolls into a ball', top_k: 10, mode, principals: ['user:77'] },
      });
      const found = new Set((res.json().results as { document_id: string }[]).map((r) => r.document_id));
      expect([...found].sort(), mode).toEqual(ids.slice(0, 3).sort());
    }
  });

  it('takes access on every ingest form, PATCH replaces and removes it, PUT keeps or replaces it', async () => {
    const json = await h.request('POST', '/v1/ingest', {
      key: h.orgA.apiKey,
      body: { documents: [{ text: 'json form', access: ['user:1'] }] },
    });
    const form = await multipart([
      { name: 'file', value: Buffer.from('file form'), filename: 'a.txt' },
      { name: 'access', value: '["user:2","group:x"]' },
    ]);
    const file = await h.request('POST', '/v1/ingest/file', {
      key: h.orgA.apiKey,
      payload: form.payload,
      headers: { 'content-type': form.contentType },
    });
    expect(file.statusCode, file.body).toBe(202);
    const url = await h.request('POST', '/v1/ingest/url', {
      key: h.orgA.apiKey,
      body: { url: 'https://example.com/a.txt', access: ['user:3'] },
    });
    expect(url.statusCode, url.body).toBe(202);
    const accessOf = async (id: string) =>
      (await h.request('GET', `/v1/documents/${id}`, { key: h.orgA.apiKey })).json().access;
    const jsonId = json.json().document_ids[0] as string;
    expect(await accessOf(jsonId)).toEqual(['user:1']);
    expect(await accessOf(file.json().document_ids[0])).toEqual(['user:2', 'group:x']);
    expect(await accessOf(url.json().document_ids[0])).toEqual(['user:3']);
    await h.waitForDone(h.orgA, [jsonId]);
    const patched = await h.request('PATCH', `/v1/documents/${jsonId}`, {
      key: h.orgA.apiKey,
      body: { access: ['group:y'] },
    });
    expect(patched.json()).toMatchObject({ access: ['group:y'], metadata: {} });
    const kept = await h.request('PUT', `/v1/documents/${jsonId}/content`, {
      key: h.orgA.apiKey,
      body: { text: 'new json form' },
    });
    expect(kept.statusCode).toBe(202);
    expect(await accessOf(jsonId)).toEqual(['group:y']);
    await h.request('PUT', `/v1/documents/${jsonId}/content`, {
      key: h.orgA.apiKey,
      body: { text: 'newer json form', access: ['user:8'] },
    });
    expect(await accessOf(jsonId)).toEqual(['user:8']);
    const removed = await h.request('PATCH', `/v1/documents/${jsonId}`, {
      key: h.orgA.apiKey,
      body: { access: null },
    });
    expect(removed.json().access).toBeNull();
  });

  it('refuses bad access lists and principals with a 400 pointing at them', async () => {
    const cases: [string, string, unknown, string][] = [
      ['POST', '/v1/ingest', { documents: [{ text: 'x', access: [] }] }, '/documents/0/access'],
      [
        'POST',
        '/v1/ingest',
        { documents: [{ text: 'x', access: ['a'.repeat(129)] }] },
        '/documents/0/access/0',
      ],
      [
        'POST',
        '/v1/query',
        { query: 'x', principals: Array.from({ length: 65 }, (_, i) => `u${i}`) },
        '/principals',
      ],
      ['POST', '/v1/query', { query: 'x', principals: [''] }, '/principals/0'],
    ];
    for (const [method, url, payload, pointer] of cases) {
      const res = await h.request(method as 'POST', url, { key: h.orgA.apiKey, body: payload });
      expect(res.statusCode, `${url} ${pointer}`).toBe(400);
      expect(problem(res).errors?.[0]?.pointer, url).toBe(pointer);
    }
    const form = await multipart([
      { name: 'file', value: Buffer.from('x'), filename: 'a.txt' },
      { name: 'access', value: 'group:eng' },
    ]);
    const file = await h.request('POST', '/v1/ingest/file', {
      key: h.orgA.apiKey,
      payload: form.payload,
      headers: { 'content-type': form.contentType },
    });
    expect(file.statusCode).toBe(400);
    expect(problem(file).errors?.[0]?.pointer).toBe('/access');
  });
});
