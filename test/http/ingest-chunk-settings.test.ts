// chunk_size and chunk_overlap on file (multipart parts) and URL (JSON fields) ingest: the document
// is cut as a JSON text ingest with the same settings cuts it, and a bad value is the same 400
// problem as on POST /v1/ingest.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../helpers/harness.js';
import { multipart, type Part } from '../helpers/multipart.js';
import { syntheticDocument } from '../helpers/texts.js';

/** About 2,000 tokens: several chunks at 512, many at 128. */
const TEXT = [0, 1, 2, 3].map(syntheticDocument).join('\n\n');

interface Chunk {
  index: number;
  token_count: number;
  text: string;
}

describe('chunk settings on file and URL ingest', () => {
  let h: Harness;
  let server: http.Server;
  let origin: string;

  beforeAll(async () => {
    server = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(TEXT);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    origin = `http://127.0.0.1:${port}`;
    h = await startHarness({ env: { URL_FETCH_ALLOW: `127.0.0.1:${port}` } });
  });
  afterAll(async () => {
    await h.close();
    await new Promise((resolve) => server.close(resolve));
  });

  const upload = async (parts: Part[]) => {
    const { payload, contentType } = await multipart(parts);
    return h.request('POST', '/v1/ingest/file', { payload, headers: { 'content-type': contentType } });
  };
  const file = (settings: Record<string, string> = {}) =>
    upload([
      ...Object.entries(settings).map(([name, value]) => ({ name, value })),
      { name: 'file', value: TEXT, filename: 'synthetic.txt' },
    ]);
  const url = (settings: Record<string, unknown> = {}) =>
    h.request('POST', '/v1/ingest/url', { body: { url: `${origin}/synthetic.txt`, ...settings } });

  /** The ready document's settings and every chunk, as a user reads them back. */
  const chunksOf = async (ack: { document_ids: string[] }) => {
    const [doc] = await h.waitForDone(h.orgA, ack.document_ids);
    expect(doc).toMatchObject({ status: 'ready' });
    const page = await h.request('GET', `/v1/documents/${ack.document_ids[0]}/chunks?limit=100`);
    return { doc: doc!, chunks: page.json().chunks as Chunk[] };
  };

  it('a file and a URL are cut with their chunk_size and chunk_overlap, as JSON text is', async () => {
    const asText = await h.request('POST', '/v1/ingest', {
      body: { documents: [{ text: TEXT }], chunk_size: 128, chunk_overlap: 16 },
    });
    const expected = await chunksOf(asText.json());
    expect(expected.chunks.length).toBeGreaterThan(10);

    const fromFile = await file({ chunk_size: '128', chunk_overlap: '16' });
    expect(fromFile.statusCode).toBe(202);
    const fromUrl = await url({ chunk_size: 128, chunk_overlap: 16 });
    expect(fromUrl.statusCode).toBe(202);
    for (const { doc, chunks } of [await chunksOf(fromFile.json()), await chunksOf(fromUrl.json())]) {
      expect(doc).toMatchObject({ chunk_size: 128, chunk_overlap: 16 });
      expect(chunks.map((c) => c.token_count)).toEqual(expected.chunks.map((c) => c.token_count));
      expect(chunks.map((c) => c.text)).toEqual(expected.chunks.map((c) => c.text));
      expect(Math.max(...chunks.map((c) => c.token_count))).toBeLessThanOrEqual(128);
    }
  });

  it('without them, the defaults 512 and 64; one alone keeps the other at its default', async () => {
    const plain = await chunksOf((await file()).json());
    expect(plain.doc).toMatchObject({ chunk_size: 512, chunk_overlap: 64 });
    expect(plain.chunks.length).toBeGreaterThan(1);
    expect(Math.max(...plain.chunks.map((c) => c.token_count))).toBeGreaterThan(128);

    const sizeOnly = await chunksOf((await url({ chunk_size: 256 })).json());
    expect(sizeOnly.doc).toMatchObject({ chunk_size: 256, chunk_overlap: 64 });
    const overlapOnly = await chunksOf((await file({ chunk_overlap: '0' })).json());
    expect(overlapOnly.doc).toMatchObject({ chunk_size: 512, chunk_overlap: 0 });
    expect(overlapOnly.chunks.length).toBeLessThanOrEqual(plain.chunks.length);
  });

  const invalid: [string, Record<string, number | string>, string][] = [
    ['chunk_size below 128', { chunk_size: 127 }, '/chunk_size'],
    ['chunk_size above 4096', { chunk_size: 4097 }, '/chunk_size'],
    ['chunk_size fractional', { chunk_size: 256.5 }, '/chunk_size'],
    ['chunk_overlap negative', { chunk_overlap: -1 }, '/chunk_overlap'],
    ['chunk_overlap above 512', { chunk_overlap: 513 }, '/chunk_overlap'],
    ['overlap equal to size', { chunk_size: 256, chunk_overlap: 256 }, '/chunk_overlap'],
  ];
  for (const [label, settings, pointer] of invalid) {
    it(`400 for ${label} on every ingest form, the same problem`, async () => {
      const asJson = await h.request('POST', '/v1/ingest', {
        body: { documents: [{ text: 'x' }], ...settings },
      });
      const asParts = Object.fromEntries(Object.entries(settings).map(([k, v]) => [k, String(v)]));
      for (const res of [asJson, await url(settings), await file(asParts)]) {
        expect(res.statusCode).toBe(400);
        expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
        const { request_id: _id, ...problem } = res.json();
        const { request_id: _expectedId, ...expected } = asJson.json();
        expect(problem).toEqual(expected);
        expect(problem.errors[0].pointer).toBe(pointer);
      }
    });
  }

  it('400 for a part that is not a whole number; nothing of the upload is kept', async () => {
    const before = await h.blobFiles();
    for (const value of ['abc', '', '12e2', '0x80']) {
      const res = await file({ chunk_size: value });
      expect(res.statusCode, value).toBe(400);
      expect(res.json().errors, value).toEqual([{ pointer: '/chunk_size', message: 'must be integer' }]);
    }
    // The JSON forms never coerce: a string is refused there too.
    expect((await url({ chunk_size: '128' })).json().errors).toEqual([
      { pointer: '/chunk_size', message: 'must be integer' },
    ]);
    expect(await h.blobFiles()).toEqual(before);
  });

  it('the OpenAPI document describes them on both forms', async () => {
    const doc = (await h.request('GET', '/openapi.json', { key: null })).json();
    const urlBody = doc.paths['/v1/ingest/url'].post.requestBody.content['application/json'].schema;
    const form = doc.paths['/v1/ingest/file'].post.requestBody.content['multipart/form-data'].schema;
    for (const schema of [urlBody, form]) {
      const properties =
        schema.properties ?? doc.components.schemas[schema.$ref?.split('/').pop()]?.properties;
      expect(properties.chunk_size).toMatchObject({ type: 'integer', minimum: 128, maximum: 4096 });
      expect(properties.chunk_overlap).toMatchObject({ type: 'integer', minimum: 0, maximum: 512 });
    }
  });
});
