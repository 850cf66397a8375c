// POST /v1/ingest/file: streamed multipart uploads, format sniffing, limits, and extraction
// outcomes a user sees on the document.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../helpers/harness.js';
import { multipart, type Part } from '../helpers/multipart.js';
import { CORPUS_DIR as CORPUS, itWithCorpus } from '../helpers/shared.js';

describe('POST /v1/ingest/file', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ env: { MAX_UPLOAD_BYTES: String(1024 * 1024) } });
  });
  afterAll(() => h.close());

  const upload = async (parts: Part[], key = h.orgA.apiKey) => {
    const { payload, contentType } = await multipart(parts);
    return h.request('POST', '/v1/ingest/file', { key, payload, headers: { 'content-type': contentType } });
  };

  it('takes a .txt upload to ready, keeping the display filename and metadata', async () => {
    const res = await upload([
      { name: 'metadata', value: JSON.stringify({ team: 'docs' }) },
      { name: 'file', value: 'The aardvark digs burrows at night.\n', filename: '../../etc/notes\u0007.txt' },
    ]);
    expect(res.statusCode).toBe(202);
    expect(res.json()).toMatchObject({ status: 'accepted', org_id: h.orgA.orgId, queued: 1 });
    const [doc] = await h.waitForDone(h.orgA, res.json().document_ids);
    expect(doc).toMatchObject({
      status: 'ready',
      metadata: { team: 'docs' },
      source: { type: 'file', filename: 'notes.txt', content_type: 'text/plain', bytes: 36 },
    });
    const hits = (await h.request('POST', '/v1/query', { body: { query: 'aardvark' } })).json().results;
    expect(hits[0].text).toContain('aardvark digs burrows');
  });

  it('accepts metadata after the file part', async () => {
    const res = await upload([
      { name: 'file', value: '# Title\n\nSome markdown body.\n', filename: 'readme.md' },
      { name: 'metadata', value: JSON.stringify({ order: 'after' }) },
    ]);
    expect(res.statusCode).toBe(202);
    const [doc] = await h.waitForDone(h.orgA, res.json().document_ids);
    expect(doc).toMatchObject({
      status: 'ready',
      metadata: { order: 'after' },
      source: { content_type: 'text/markdown' },
    });
  });

  // Files made by real tools that live in this repository (test/fixtures/extract), so a clone
  // without the shared corpus still runs a PDF and a DOCX through the whole service.
  const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/extract');

  it('takes a groff PDF to ready, each marker sentence found on its own page (in-repo fixture)', async () => {
    const pdf = readFileSync(path.join(FIXTURES, 'hyphenation.pdf'));
    const res = await upload([{ name: 'file', value: pdf, filename: 'hyphenation.pdf' }]);
    expect(res.statusCode).toBe(202);
    const [doc] = await h.waitForDone(h.orgA, res.json().document_ids);
    expect(doc).toMatchObject({
      status: 'ready',
      source: { content_type: 'application/pdf', bytes: pdf.length },
    });
    // Small chunks would put each page in chunks of its own; the default size spans pages, so the
    // page range of the best hit must include the marker's page.
    for (const [words, page] of [
      ['alpha bravo charlie', 1],
      ['delta echo foxtrot', 2],
      ['golf hotel india', 3],
    ] as const) {
      const [hit] = (
        await h.request('POST', '/v1/query', { body: { query: words, document_ids: [doc!.id], top_k: 1 } })
      ).json().results;
      expect(hit.text, words).toMatch(new RegExp(words.replaceAll(' ', '\\s+')));
      expect(hit.page_start, words).toBeLessThanOrEqual(page);
      expect(hit.page_end, words).toBeGreaterThanOrEqual(page);
    }
  });

  it('takes a pandoc DOCX to ready with its table and umlauts (in-repo fixture)', async () => {
    const docx = readFileSync(path.join(FIXTURES, 'pandoc-notes.docx'));
    const res = await upload([{ name: 'file', value: docx, filename: 'notes.docx' }]);
    expect(res.statusCode).toBe(202);
    const [doc] = await h.waitForDone(h.orgA, res.json().document_ids);
    expect(doc).toMatchObject({
      status: 'ready',
      source: { content_type: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document' },
    });
    const [hit] = (
      await h.request('POST', '/v1/query', { body: { query: 'Grüße Köln mammoth', document_ids: [doc!.id] } })
    ).json().results;
    expect(hit.text).toContain('Grüße aus Köln');
    expect(hit.text).toContain('mammoth');
    expect(hit.page_start).toBeNull();
  });

  itWithCorpus('extracts a real PDF with page numbers in query results', async () => {
    const pdf = readFileSync(path.join(CORPUS, 'pdf/pdflatex-4-pages.pdf'));
    const res = await upload([{ name: 'file', value: pdf, filename: 'four-pages.pdf' }]);
    expect(res.statusCode).toBe(202);
    const [doc] = await h.waitForDone(h.orgA, res.json().document_ids);
    expect(doc).toMatchObject({
      status: 'ready',
      source: { content_type: 'application/pdf', bytes: pdf.length },
    });
    const results = (
      await h.request('POST', '/v1/query', {
        body: { query: 'blind text information', document_ids: [doc!.id], top_k: 100 },
      })
    ).json().results;
    expect(results.length).toBeGreaterThan(3);
    const pages = new Set<number>();
    for (const r of results) {
      pages.add(r.page_start);
      expect(r.page_start).toBeGreaterThanOrEqual(1);
      expect(r.page_end).toBeGreaterThanOrEqual(r.page_start);
      expect(r.page_end).toBeLessThanOrEqual(4);
    }
    // Text from every page is found, so chunks carry more than one page number.
    expect(pages.size).toBeGreaterThan(1);
  });

  itWithCorpus('extracts a real DOCX', async () => {
    const docx = readFileSync(path.join(CORPUS, 'docx/single-paragraph.docx'));
    const res = await upload([{ name: 'file', value: docx, filename: 'single.docx' }]);
    expect(res.statusCode).toBe(202);
    const [doc] = await h.waitForDone(h.orgA, res.json().document_ids);
    expect(doc!.status).toBe('ready');
    expect(doc!.chunk_count).toBe(1);
  });

  it('deleting a document removes its stored file', async () => {
    const before = (await h.blobFiles()).length;
    const res = await upload([{ name: 'file', value: 'a file to delete', filename: 'delete-me.txt' }]);
    const [doc] = await h.waitForDone(h.orgA, res.json().document_ids);
    expect((await h.blobFiles()).length).toBe(before + 1);
    expect((await h.request('DELETE', `/v1/documents/${doc!.id}`)).statusCode).toBe(204);
    expect((await h.blobFiles()).length).toBe(before);
  });

  itWithCorpus('an encrypted PDF ends failed: encrypted, and other documents carry on', async () => {
    const pdf = readFileSync(path.join(CORPUS, 'pdf/libreoffice-writer-password.pdf'));
    const bad = await upload([{ name: 'file', value: pdf, filename: 'secret.pdf' }]);
    const good = await upload([{ name: 'file', value: 'still fine', filename: 'ok.txt' }]);
    const [failed] = await h.waitForDone(h.orgA, bad.json().document_ids);
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'encrypted' }, chunk_count: null });
    const [ok] = await h.waitForDone(h.orgA, good.json().document_ids);
    expect(ok!.status).toBe('ready');
  });

  itWithCorpus('a PDF truncated at half ends failed: corrupt', async () => {
    const pdf = readFileSync(path.join(CORPUS, 'pdf/pdflatex-4-pages.pdf'));
    const res = await upload([
      { name: 'file', value: pdf.subarray(0, pdf.length >> 1), filename: 'half.pdf' },
    ]);
    expect(res.statusCode).toBe(202);
    const [doc] = await h.waitForDone(h.orgA, res.json().document_ids);
    expect(doc).toMatchObject({ status: 'failed', error: { code: 'corrupt' } });
  });

  const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
  const unsupported: [string, Part][] = [
    ['a PNG renamed .pdf', { name: 'file', value: PNG, filename: 'image.pdf' }],
    [
      'an HTML file renamed .docx',
      { name: 'file', value: '<html><body>hi</body></html>', filename: 'page.docx' },
    ],
    ['an empty file', { name: 'file', value: '', filename: 'empty.txt' }],
    ['an unsupported extension', { name: 'file', value: 'hello', filename: 'run.exe' }],
    [
      'binary bytes named .txt',
      { name: 'file', value: Buffer.from([0, 1, 2, 255, 254, 0, 0, 7]), filename: 'x.txt' },
    ],
  ];
  for (const [label, part] of unsupported) {
    it(`415 for ${label}, and nothing is stored`, async () => {
      const before = (await h.blobFiles()).length;
      const res = await upload([part]);
      expect(res.statusCode).toBe(415);
      expect(res.json()).toMatchObject({ code: 'unsupported_media_type' });
      expect(res.json().detail.length).toBeGreaterThan(10);
      expect((await h.blobFiles()).length).toBe(before);
    });
  }

  const invalid: [string, Part[]][] = [
    ['no file part', [{ name: 'metadata', value: '{}' }]],
    [
      'two file parts',
      [
        { name: 'file', value: 'a', filename: 'a.txt' },
        { name: 'file', value: 'b', filename: 'b.txt' },
      ],
    ],
    [
      'an unknown part',
      [
        { name: 'file', value: 'a', filename: 'a.txt' },
        { name: 'title', value: 'x' },
      ],
    ],
    [
      'metadata that is not JSON',
      [
        { name: 'file', value: 'a', filename: 'a.txt' },
        { name: 'metadata', value: 'team=docs' },
      ],
    ],
    [
      'metadata with a non-string value',
      [
        { name: 'file', value: 'a', filename: 'a.txt' },
        { name: 'metadata', value: '{"n": 1}' },
      ],
    ],
    [
      'metadata that is an array',
      [
        { name: 'metadata', value: '["a"]' },
        { name: 'file', value: 'a', filename: 'a.txt' },
      ],
    ],
  ];
  for (const [label, parts] of invalid) {
    it(`400 for ${label}, and nothing is stored`, async () => {
      const before = (await h.blobFiles()).length;
      const listBefore = (await h.request('GET', '/v1/documents?limit=100')).json().documents.length;
      const res = await upload(parts);
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('invalid_request');
      expect((await h.blobFiles()).length).toBe(before);
      expect((await h.request('GET', '/v1/documents?limit=100')).json().documents.length).toBe(listBefore);
    });
  }

  it('415 for a body that is not multipart', async () => {
    const res = await h.request('POST', '/v1/ingest/file', { body: { file: 'x' } });
    expect(res.statusCode).toBe(415);
  });

  it('accepts exactly the size limit and refuses one byte more, storing nothing', async () => {
    const limit = 1024 * 1024;
    const exact = await upload([{ name: 'file', value: Buffer.alloc(limit, 'a'), filename: 'exact.txt' }]);
    expect(exact.statusCode).toBe(202);
    const before = (await h.blobFiles()).length;
    const over = await upload([{ name: 'file', value: Buffer.alloc(limit + 1, 'a'), filename: 'over.txt' }]);
    expect(over.statusCode).toBe(413);
    expect(over.json().code).toBe('payload_too_large');
    expect((await h.blobFiles()).length).toBe(before);
  });
});

describe('streamed uploads over a real socket', () => {
  let h: Harness;
  let base: { host: string; port: number };
  beforeAll(async () => {
    h = await startHarness({ worker: false });
    await h.app.listen({ host: '127.0.0.1', port: 0 });
    const address = h.app.server.address() as AddressInfo;
    base = { host: '127.0.0.1', port: address.port };
  });
  afterAll(() => h.close());

  /** Streams a multipart body with a file of `size` bytes without holding it in memory. */
  function streamUpload(size: number, abortAfter?: number): Promise<{ status: number; body: string }> {
    const boundary = `----docindex${Date.now()}`;
    const head = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\nContent-Type: text/plain\r\n\r\n`,
    );
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    return new Promise((resolve, reject) => {
      const req = http.request({
        ...base,
        method: 'POST',
        path: '/v1/ingest/file',
        headers: {
          authorization: `Bearer ${h.orgA.apiKey}`,
          'content-type': `multipart/form-data; boundary=${boundary}`,
          'content-length': String(head.length + size + tail.length),
        },
      });
      req.on('response', (res) => {
        let body = '';
        res.on('data', (c: Buffer) => {
          body += c.toString();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', (error) =>
        abortAfter !== undefined ? resolve({ status: 0, body: '' }) : reject(error),
      );
      const block = Buffer.alloc(1024 * 1024, 'x');
      let sent = 0;
      req.write(head);
      const pump = () => {
        while (sent < size) {
          if (abortAfter !== undefined && sent >= abortAfter) {
            req.destroy();
            return;
          }
          const piece = block.subarray(0, Math.min(block.length, size - sent));
          sent += piece.length;
          if (!req.write(piece)) {
            req.once('drain', pump);
            return;
          }
        }
        req.end(tail);
      };
      pump();
    });
  }

  it('accepts exactly 100 MB and refuses 100 MB + 1 byte with nothing stored', async () => {
    const limit = 104_857_600;
    const exact = await streamUpload(limit);
    expect(exact.status).toBe(202);
    const stored = (await h.blobFiles()).length;
    const over = await streamUpload(limit + 1);
    expect(over.status).toBe(413);
    expect((await h.blobFiles()).length).toBe(stored);
    const docs = (await h.request('GET', '/v1/documents?limit=100')).json().documents;
    expect(docs).toHaveLength(1);
  });

  it('a client that aborts mid-upload leaves nothing behind', async () => {
    const storedBefore = (await h.blobFiles()).length;
    const docsBefore = (await h.request('GET', '/v1/documents?limit=100')).json().documents.length;
    await streamUpload(50 * 1024 * 1024, 20 * 1024 * 1024);
    // Give the server a moment to notice the reset and clean up.
    const deadline = Date.now() + 5_000;
    while ((await h.blobFiles()).length !== storedBefore && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    expect((await h.blobFiles()).length).toBe(storedBefore);
    expect((await h.request('GET', '/v1/documents?limit=100')).json().documents.length).toBe(docsBefore);
  });
});

describe('a staged upload no commit keeps', () => {
  // A harness without a worker: the blob deletes counted are the requests' own.
  let h: Harness;
  let deleted: string[] = [];
  beforeAll(async () => {
    h = await startHarness({ worker: false });
    const { blobs } = h.runtime;
    const remove = blobs.delete.bind(blobs);
    blobs.delete = async (key) => {
      deleted.push(key);
      await remove(key);
    };
  });
  beforeEach(() => {
    deleted = [];
  });
  afterAll(() => h.close());

  const send = async (method: 'POST' | 'PUT', url: string, parts: Part[], headers = {}) => {
    const { payload, contentType } = await multipart(parts);
    return h.request(method, url, { payload, headers: { 'content-type': contentType, ...headers } });
  };
  const file = (text: string): Part => ({ name: 'file', value: text, filename: 'notes.txt' });

  it('is deleted exactly once when its commit fails (a partition being deleted)', async () => {
    await h.ingest(h.orgA, ['the one document of a partition on its way out'], { partition: 'leaving' });
    expect((await h.request('DELETE', '/v1/partitions/leaving')).statusCode).toBe(202);
    const before = await h.blobFiles();
    const res = await send('POST', '/v1/ingest/file', [
      file('too late for this partition'),
      { name: 'partition', value: 'leaving' },
    ]);
    expect(res.statusCode).toBe(409);
    expect(res.json().code).toBe('partition_deleting');
    expect(deleted).toHaveLength(1);
    expect(await h.blobFiles()).toEqual(before);
  });

  it('is deleted exactly once when the document whose content it was to replace is not found', async () => {
    const before = await h.blobFiles();
    const res = await send('PUT', '/v1/documents/00000000-0000-4000-8000-000000000000/content', [
      file('content for no document'),
    ]);
    expect(res.statusCode).toBe(404);
    expect(deleted).toHaveLength(1);
    expect(await h.blobFiles()).toEqual(before);
  });

  it('is deleted exactly once when its Idempotency-Key replays, or is refused, and the first is kept', async () => {
    const key = { 'idempotency-key': 'staged-once' };
    const first = await send('POST', '/v1/ingest/file', [file('the first upload')], key);
    expect(first.statusCode).toBe(202);
    expect(deleted).toEqual([]);
    const stored = await h.blobFiles();
    const replayed = await send('POST', '/v1/ingest/file', [file('the first upload')], key);
    expect(replayed.statusCode).toBe(202);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(deleted).toHaveLength(1);
    const reused = await send('POST', '/v1/ingest/file', [file('another upload, the same key')], key);
    expect(reused.statusCode).toBe(422);
    expect(deleted).toHaveLength(2);
    expect(new Set(deleted).size).toBe(2);
    expect(await h.blobFiles()).toEqual(stored);
  });
});
