// POST /v1/ingest/url end to end: a local "public" server on an allow-listed loopback port,
// submit-time refusals, failures landing on the document, and signatures never shown.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../helpers/harness.js';
import { CORPUS_DIR as CORPUS, HAVE_CORPUS, itWithCorpus } from '../helpers/shared.js';

describe('POST /v1/ingest/url', () => {
  let h: Harness;
  let server: http.Server;
  let origin: string;
  const hits: string[] = [];
  const corpusFile = (name: string) =>
    HAVE_CORPUS ? readFileSync(path.join(CORPUS, name)) : Buffer.alloc(0);
  const pdf = corpusFile('pdf/pdflatex-4-pages.pdf');
  const docx = corpusFile('docx/single-paragraph.docx');

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      hits.push(url.pathname);
      const send = (type: string, body: string | Buffer, status = 200) => {
        res.writeHead(status, { 'content-type': type });
        res.end(body);
      };
      switch (url.pathname) {
        case '/paper.pdf':
          return send('application/pdf', pdf);
        case '/single.docx':
          return send('application/octet-stream', docx);
        case '/notes.txt':
          return send('text/plain; charset=utf-8', 'The okapi is related to the giraffe.\n');
        case '/guide.md':
          return send('text/markdown', '# Okapi guide\n\nThe okapi lives in the Ituri forest.\n');
        case '/article': {
          const paragraph =
            '<p>The narwhal tusk is a long spiral tooth that grows through the upper lip of the male narwhal. Scientists still debate what it is for.</p>';
          return send(
            'text/html; charset=utf-8',
            `<!doctype html><html><head><title>Narwhals</title><script>document.write('tracking')</script></head><body><nav>Home | About</nav><article><h1>Narwhals</h1>${paragraph.repeat(6)}</article><footer>© site</footer></body></html>`,
          );
        }
        case '/signed.txt': {
          const expires = Number(url.searchParams.get('expires'));
          if (url.searchParams.get('sig') !== 'secret-signature' || Date.now() > expires) {
            return send('text/plain', 'expired', 403);
          }
          return send('text/plain', 'Presigned capybara content.');
        }
        case '/missing':
          return send('text/plain', 'nope', 404);
        case '/image.gif':
          // PNG, JPEG and TIFF are read by OCR (ingest-ocr.test.ts); GIF is not a format.
          return send('image/gif', Buffer.from('474946383961010001008000003b', 'hex'));
        case '/to-blocked':
          res.writeHead(302, { location: 'http://127.0.0.2:9/' });
          return res.end();
        default:
          {
            // /hop/N redirects N times before the text.
            const hops = /^\/hop\/(\d+)$/.exec(url.pathname);
            if (hops) {
              const left = Number(hops[1]);
              if (left === 0) return send('text/plain', 'The tapir reached the river after the last hop.\n');
              res.writeHead(302, { location: `/hop/${left - 1}` });
              return res.end();
            }
          }
          return send('text/plain', 'not found', 404);
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    origin = `http://127.0.0.1:${port}`;
    h = await startHarness({ env: { URL_FETCH_ALLOW: `127.0.0.1:${port}`, URL_FETCH_MAX_REDIRECTS: '2' } });
  });
  afterAll(async () => {
    await h.close();
    await new Promise((resolve) => server.close(resolve));
  });

  const ingestUrl = (url: string, metadata?: Record<string, string>) =>
    h.request('POST', '/v1/ingest/url', { body: metadata ? { url, metadata } : { url } });

  const cases: [string, string, string][] = [
    ['a PDF', '/paper.pdf', 'application/pdf'],
    [
      'a DOCX served as octet-stream',
      '/single.docx',
      'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    ],
    ['a text file', '/notes.txt', 'text/plain'],
    ['a Markdown file', '/guide.md', 'text/markdown'],
    ['a web page', '/article', 'text/html'],
  ];
  for (const [label, pathname, contentType] of cases) {
    const fromCorpus = pathname.endsWith('.pdf') || pathname.endsWith('.docx');
    (fromCorpus ? itWithCorpus : it)(`downloads and indexes ${label}`, async () => {
      const res = await ingestUrl(`${origin}${pathname}`, { via: 'url' });
      expect(res.statusCode).toBe(202);
      expect(res.json()).toMatchObject({ status: 'accepted', queued: 1, org_id: h.orgA.orgId });
      const [doc] = await h.waitForDone(h.orgA, res.json().document_ids);
      expect(doc).toMatchObject({
        status: 'ready',
        metadata: { via: 'url' },
        source: { type: 'url', url: `${origin}${pathname}`, content_type: contentType },
      });
      expect(doc!.chunk_count as number).toBeGreaterThan(0);
    });
  }

  it('extracts the main text of a web page, without scripts or navigation', async () => {
    const res = await ingestUrl(`${origin}/article`);
    const [doc] = await h.waitForDone(h.orgA, res.json().document_ids);
    const results = (
      await h.request('POST', '/v1/query', { body: { query: 'narwhal tusk', document_ids: [doc!.id] } })
    ).json().results;
    expect(results[0].text).toContain('spiral tooth');
    expect(results.map((r: { text: string }) => r.text).join(' ')).not.toContain('tracking');
  });

  it('fetches a pre-signed URL within its validity and never shows its signature', async () => {
    const signed = `${origin}/signed.txt?sig=secret-signature&expires=${Date.now() + 60_000}`;
    const res = await ingestUrl(signed);
    expect(res.statusCode).toBe(202);
    expect(res.body).not.toContain('secret-signature');
    const [doc] = await h.waitForDone(h.orgA, res.json().document_ids);
    expect(doc!.status).toBe('ready');
    expect(doc!.source).toMatchObject({ url: `${origin}/signed.txt` });
    expect(JSON.stringify(doc)).not.toContain('secret-signature');
  });

  it('an expired pre-signed URL fails with url_unreachable and the status, without the signature', async () => {
    const res = await ingestUrl(`${origin}/signed.txt?sig=secret-signature&expires=${Date.now() - 1}`);
    const [doc] = await h.waitForDone(h.orgA, res.json().document_ids);
    expect(doc).toMatchObject({ status: 'failed', error: { code: 'url_unreachable' } });
    expect((doc!.error as { message: string }).message).toMatch(/403/);
    expect(JSON.stringify(doc)).not.toContain('secret-signature');
  });

  const failures: [string, string, string][] = [
    ['a 404', '/missing', 'url_unreachable'],
    ['an image of a format OCR does not take', '/image.gif', 'unsupported_format'],
    ['a redirect to a blocked address', '/to-blocked', 'url_blocked'],
  ];
  it('follows as many redirects as URL_FETCH_MAX_REDIRECTS allows, and fails past them', async () => {
    const within = await ingestUrl(`${origin}/hop/2`);
    const past = await ingestUrl(`${origin}/hop/3`);
    const [ok] = await h.waitForDone(h.orgA, within.json().document_ids);
    const [failed] = await h.waitForDone(h.orgA, past.json().document_ids);
    expect(ok).toMatchObject({ status: 'ready' });
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'too_many_redirects' } });
  });

  for (const [label, pathname, code] of failures) {
    it(`${label} ends failed: ${code}`, async () => {
      const res = await ingestUrl(`${origin}${pathname}`);
      expect(res.statusCode).toBe(202);
      const [doc] = await h.waitForDone(h.orgA, res.json().document_ids);
      expect(doc).toMatchObject({ status: 'failed', error: { code } });
    });
  }

  const refused = [
    'ftp://example.com/a.pdf',
    'file:///etc/passwd',
    'http://user:pass@example.com/a.pdf',
    'http://127.0.0.1/a.pdf',
    'http://[::1]/a.pdf',
    'http://169.254.169.254/latest/meta-data/',
    'http://10.0.0.1/a.pdf',
    'not a url',
  ];
  for (const url of refused) {
    it(`400 at submit for ${url}, with nothing stored`, async () => {
      const before = (await h.request('GET', '/v1/documents?limit=100')).json().documents.length;
      const res = await ingestUrl(url);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 'invalid_request', errors: [{ pointer: '/url' }] });
      expect((await h.request('GET', '/v1/documents?limit=100')).json().documents.length).toBe(before);
    });
  }

  it('400 for a missing url, non-string metadata, or unknown fields', async () => {
    for (const body of [
      {},
      { url: `${origin}/notes.txt`, metadata: { a: 1 } },
      { url: `${origin}/notes.txt`, depth: 2 },
    ]) {
      expect((await h.request('POST', '/v1/ingest/url', { body })).statusCode).toBe(400);
    }
  });
});
