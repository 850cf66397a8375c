// Reading back what was indexed: GET /v1/documents/{id}/content (the extracted text) and
// GET /v1/documents/{id}/file (the original upload), on both backends.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../helpers/harness.js';
import { multipart, type Part } from '../helpers/multipart.js';

const FIXTURES = new URL('../fixtures/extract/', import.meta.url);

describe('reading back documents', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  const upload = async (parts: Part[]) => {
    const { payload, contentType } = await multipart(parts);
    const res = await h.request('POST', '/v1/ingest/file', {
      payload,
      headers: { 'content-type': contentType },
    });
    expect(res.statusCode, res.body).toBe(202);
    return res.json().document_ids[0] as string;
  };

  it('gives back the text of a many-chunk document once, although its chunks overlap', async () => {
    const paragraphs = Array.from(
      { length: 200 },
      (_, i) =>
        `Paragraph ${i}: capybaras graze on river grasses, ${'and rest in the shade '.repeat(i % 5)}— ünïcode ✓ 🦫.`,
    );
    const text = `${paragraphs.join('\n\n')}\n\n   `;
    const [id] = await h.ingest(h.orgA, [text], { chunk_size: 128, chunk_overlap: 32 });
    const [doc] = await h.waitForDone(h.orgA, [id!]);
    expect(doc!.status).toBe('ready');
    expect(doc!.chunk_count as number).toBeGreaterThan(10);
    const res = await h.request('GET', `/v1/documents/${id}/content`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.body).toBe(text);
  });

  it('gives back an uploaded file byte for byte with its type and name, and its text', async () => {
    const pdf = readFileSync(new URL('hyphenation.pdf', FIXTURES));
    const id = await upload([{ name: 'file', value: pdf, filename: 'Ökologie notes.pdf' }]);
    const [doc] = await h.waitForDone(h.orgA, [id]);
    expect(doc!.status).toBe('ready');
    const file = await h.request('GET', `/v1/documents/${id}/file`);
    expect(file.statusCode).toBe(200);
    expect(file.headers['content-type']).toBe('application/pdf');
    expect(file.headers['content-length']).toBe(String(pdf.length));
    expect(file.headers['content-disposition']).toBe(
      `attachment; filename="_kologie notes.pdf"; filename*=UTF-8''%C3%96kologie%20notes.pdf`,
    );
    expect(file.rawPayload.equals(pdf)).toBe(true);
    const content = await h.request('GET', `/v1/documents/${id}/content`);
    expect(content.statusCode).toBe(200);
    expect(content.body.length).toBeGreaterThan(100);
    const chunks = (await h.request('GET', `/v1/documents/${id}/chunks?limit=100`)).json().chunks as {
      text: string;
    }[];
    for (const chunk of chunks) expect(content.body).toContain(chunk.text.trim());
  });

  it('keeps no bidi override or other invisible character in a file name: listed or downloaded', async () => {
    // Shown as "evillmth.txt" by a terminal or browser that obeys the right-to-left override.
    const spoof = '\uFEFFevil\u2066\u202Etxt\u200B\u3164.html';
    const id = await upload([{ name: 'file', value: '<p>Capybara page</p>', filename: spoof }]);
    const expected = 'eviltxt.html';
    const listed = (await h.request('GET', `/v1/documents?ids=${id}`)).json().documents[0];
    expect(listed.source.filename).toBe(expected);
    expect((await h.request('GET', `/v1/documents/${id}`)).json().source.filename).toBe(expected);
    const file = await h.request('GET', `/v1/documents/${id}/file`);
    expect(file.statusCode).toBe(200);
    expect(file.headers['content-disposition']).toBe(
      `attachment; filename="${expected}"; filename*=UTF-8''${expected}`,
    );
  });

  it('serves an uploaded HTML page as a download, never as a page of the API', async () => {
    const id = await upload([
      {
        name: 'file',
        value: '<html><body><script>alert(1)</script><p>Capybara page</p></body></html>',
        filename: 'page.html',
      },
    ]);
    await h.waitForDone(h.orgA, [id]);
    const file = await h.request('GET', `/v1/documents/${id}/file`);
    expect(file.statusCode).toBe(200);
    expect(file.headers['content-disposition']).toMatch(/^attachment;/);
    expect(file.headers['content-security-policy']).toContain('sandbox');
    expect(file.headers['x-content-type-options']).toBe('nosniff');
  });

  it('answers 404 for a JSON text document’s file, saying where its text is', async () => {
    const [id] = await h.ingest(h.orgA, ['plain text has no file'], {});
    await h.waitForDone(h.orgA, [id!]);
    const res = await h.request('GET', `/v1/documents/${id}/file`);
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.json()).toMatchObject({ code: 'not_found' });
    expect(res.json().detail).toContain(`/v1/documents/${id}/content`);
  });

  it('answers another org’s and unknown ids as 404, the same way', async () => {
    const id = await upload([{ name: 'file', value: 'secret notes of org A', filename: 'a.txt' }]);
    await h.waitForDone(h.orgA, [id]);
    for (const what of ['content', 'file']) {
      const other = await h.request('GET', `/v1/documents/${id}/${what}`, { key: h.orgB.apiKey });
      const missing = await h.request('GET', `/v1/documents/${randomUUID()}/${what}`, { key: h.orgB.apiKey });
      expect(other.statusCode).toBe(404);
      expect(missing.statusCode).toBe(404);
      expect(other.json().title).toBe(missing.json().title);
      expect(other.body).not.toContain('secret');
    }
  });

  it('is gone with the document', async () => {
    const id = await upload([{ name: 'file', value: 'short-lived notes', filename: 'gone.txt' }]);
    await h.waitForDone(h.orgA, [id]);
    expect((await h.request('DELETE', `/v1/documents/${id}`)).statusCode).toBe(204);
    expect((await h.request('GET', `/v1/documents/${id}/file`)).statusCode).toBe(404);
    expect((await h.request('GET', `/v1/documents/${id}/content`)).statusCode).toBe(404);
  });
});

describe('the file name of a URL document', () => {
  let h: Harness;
  let pages: http.Server;
  let origin: string;
  beforeAll(async () => {
    pages = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      res.end('Tapirs browse at night.');
    });
    await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
    h = await startHarness({ env: { URL_FETCH_ALLOW: origin.slice('http://'.length) } });
  });
  afterAll(async () => {
    await h.close();
    await new Promise((resolve) => pages.close(resolve));
  });

  it('is the last path segment without its bidi overrides and invisible characters', async () => {
    const res = await h.request('POST', '/v1/ingest/url', {
      body: { url: `${origin}/notes/%E2%80%AEevil%E2%81%A6txt%E2%80%8B.txt` },
    });
    expect(res.statusCode, res.body).toBe(202);
    const id = res.json().document_ids[0] as string;
    const [doc] = await h.waitForDone(h.orgA, [id]);
    expect(doc!.status).toBe('ready');
    const file = await h.request('GET', `/v1/documents/${id}/file`);
    expect(file.statusCode).toBe(200);
    expect(file.headers['content-disposition']).toBe(
      `attachment; filename="eviltxt.txt"; filename*=UTF-8''eviltxt.txt`,
    );
  });
});

describe('reading back before ready', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ worker: false });
  });
  afterAll(() => h.close());

  it('answers 409 not_ready for the text of a queued document, but serves its uploaded file', async () => {
    const [textId] = await h.ingest(h.orgA, ['still queued'], {});
    const content = await h.request('GET', `/v1/documents/${textId}/content`);
    expect(content.statusCode).toBe(409);
    expect(content.json()).toMatchObject({ code: 'not_ready', status: 409 });
    const { payload, contentType } = await multipart([
      { name: 'file', value: 'queued upload', filename: 'q.txt' },
    ]);
    const res = await h.request('POST', '/v1/ingest/file', {
      payload,
      headers: { 'content-type': contentType },
    });
    const fileId = res.json().document_ids[0] as string;
    const file = await h.request('GET', `/v1/documents/${fileId}/file`);
    expect(file.statusCode).toBe(200);
    expect(file.body).toBe('queued upload');
  });
});
