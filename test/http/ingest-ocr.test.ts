// OCR as a user meets it: a scanned PDF or a photo of a page uploaded (or downloaded by URL, known
// by its Content-Type) ends `ready` with `ocr_pages` on its status record and its words found by
// a query; with OCR=off the same scan fails `no_text` instead of ending ready and empty.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, expect, vi } from 'vitest';
import type { DocumentRecord } from '../../src/client/types.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { CORPUS_DIR, describeWithCorpus, HAVE_CORPUS, itWithCorpus } from '../helpers/shared.js';

// Recognition takes seconds a page, and many times longer on a machine busy with other work.
vi.setConfig({ testTimeout: 300_000 });

/** A page takes seconds to recognise, many more on a machine busy with other work. */
const OCR_WAIT_MS = 240_000;

const corpusFile = (name: string) =>
  HAVE_CORPUS ? readFileSync(path.join(CORPUS_DIR, name)) : Buffer.alloc(0);

async function upload(h: Harness, file: Buffer, filename: string) {
  const form = new FormData();
  form.append('file', new Blob([file]), filename);
  const request = new Request('http://localhost/', { method: 'POST', body: form });
  const res = await h.request('POST', '/v1/ingest/file', {
    payload: Buffer.from(await request.arrayBuffer()),
    headers: { 'content-type': request.headers.get('content-type')! },
  });
  expect(res.statusCode).toBe(202);
  const [doc] = await h.waitForDone(h.orgA, res.json().document_ids, OCR_WAIT_MS);
  return doc as unknown as DocumentRecord;
}

async function find(h: Harness, query: string, documentId: string) {
  return (await h.request('POST', '/v1/query', { body: { query, document_ids: [documentId] } })).json()
    .results as Array<{ text: string; page_start: number | null }>;
}

describeWithCorpus('OCR through the HTTP upload and URL paths', () => {
  let h: Harness;
  let server: http.Server;
  let origin = '';
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      if (req.url === '/scan') {
        // No name to go by: the Content-Type alone says it is an image.
        res.writeHead(200, { 'content-type': 'image/png' });
        res.end(corpusFile('ocr-image/testocr.png'));
        return;
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    origin = `http://127.0.0.1:${port}`;
    h = await startHarness({ env: { URL_FETCH_ALLOW: `127.0.0.1:${port}` } });
  });
  afterAll(async () => {
    await h?.close();
    await new Promise((resolve) => server.close(resolve));
  });

  itWithCorpus('a scanned PDF ends ready with ocr_pages, and a query finds a word of its scan', async () => {
    const doc = await upload(h, corpusFile('scanned-pdf/ocr_test.pdf'), 'scan.pdf');
    expect(doc).toMatchObject({ status: 'ready', ocr_pages: 1, source: { content_type: 'application/pdf' } });
    const hits = await find(h, 'Docling bundles', doc.id);
    expect(hits[0]?.text).toContain('Markdown');
    expect(hits[0]?.page_start).toBe(1);
    const fetched = await h.request('GET', `/v1/documents/${doc.id}`);
    expect(fetched.json().ocr_pages).toBe(1);
  });

  itWithCorpus('a JPEG photo of a page ends ready with ocr_pages 1', async () => {
    const doc = await upload(h, corpusFile('ocr-image/congress.jpg'), 'congress.jpg');
    expect(doc).toMatchObject({ status: 'ready', ocr_pages: 1, source: { content_type: 'image/jpeg' } });
    expect((await find(h, 'consular courts Japan', doc.id)).length).toBeGreaterThan(0);
  });

  itWithCorpus('a PDF with a text layer says no page needed OCR, and a text says nothing', async () => {
    const pdf = await upload(h, corpusFile('pdf/pdflatex-4-pages.pdf'), 'four.pdf');
    expect(pdf).toMatchObject({ status: 'ready', ocr_pages: 0 });
    const text = await upload(h, Buffer.from('The aardvark digs at night.\n'), 'notes.txt');
    expect(text).toMatchObject({ status: 'ready', ocr_pages: null });
  });

  itWithCorpus('an image URL is recognised by its Content-Type', async () => {
    const res = await h.request('POST', '/v1/ingest/url', { body: { url: `${origin}/scan` } });
    expect(res.statusCode).toBe(202);
    const [doc] = await h.waitForDone(h.orgA, res.json().document_ids, OCR_WAIT_MS);
    expect(doc).toMatchObject({ status: 'ready', ocr_pages: 1, source: { content_type: 'image/png' } });
    expect((await find(h, 'quick brown dog', (doc as unknown as DocumentRecord).id)).length).toBeGreaterThan(
      0,
    );
  });

  itWithCorpus('a truncated image fails corrupt', async () => {
    const png = corpusFile('ocr-image/testocr.png');
    const doc = await upload(h, png.subarray(0, Math.floor(png.length / 3)), 'cut.png');
    expect(doc).toMatchObject({ status: 'failed', error: { code: 'corrupt' } });
  });
});

describeWithCorpus('OCR=off', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ env: { OCR: 'off' } });
  });
  afterAll(() => h?.close());

  itWithCorpus(
    'a scanned PDF fails no_text, saying OCR is off, rather than ending ready with no text',
    async () => {
      const doc = await upload(h, corpusFile('scanned-pdf/ocr_test.pdf'), 'scan.pdf');
      expect(doc).toMatchObject({ status: 'failed', error: { code: 'no_text' } });
      expect(doc.error?.message).toContain('OCR=off');
    },
  );
});
