// Health, readiness, the OpenAPI document, docs page, the root, and unknown routes.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../helpers/harness.js';

describe('operations', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ worker: false });
  });
  afterAll(() => h.close());

  it('/healthz and /readyz answer without a key', async () => {
    expect((await h.request('GET', '/healthz', { key: null })).json()).toEqual({ status: 'ok' });
    const ready = await h.request('GET', '/readyz', { key: null });
    expect(ready.statusCode).toBe(200);
    expect(ready.json().status).toBe('ready');
    // No embedding provider or reranker configured here: none is listed.
    expect(ready.json().providers).toEqual({});
  });

  it('/openapi.json documents every route and its error responses', async () => {
    const doc = (await h.request('GET', '/openapi.json', { key: null })).json();
    expect(doc.openapi).toBe('3.1.0');
    const expected: [string, string][] = [
      ['/v1/ingest', 'post'],
      ['/v1/ingest/file', 'post'],
      ['/v1/ingest/url', 'post'],
      ['/v1/documents', 'get'],
      ['/v1/documents/{id}', 'get'],
      ['/v1/documents/{id}', 'delete'],
      ['/v1/query', 'post'],
      ['/v1/usage', 'get'],
    ];
    for (const [path, method] of expected) {
      const op = doc.paths[path]?.[method];
      expect(op, `${method} ${path}`).toBeDefined();
      for (const status of ['400', '401', '429']) expect(Object.keys(op.responses)).toContain(status);
    }
    expect(Object.keys(doc.paths['/v1/documents/{id}'].get.responses)).toContain('404');
    expect(Object.keys(doc.paths['/v1/ingest/file'].post.responses)).toEqual(
      expect.arrayContaining(['202', '413', '415']),
    );
  });

  it('the ingest routes name the supported formats (built from the format registry)', async () => {
    const doc = (await h.request('GET', '/openapi.json', { key: null })).json();
    expect(doc.paths['/v1/ingest/file'].post.description).toContain(
      'one `file` part (.pdf, .docx, .txt, .md, .html/.htm, .pptx, .xlsx, .csv/.tsv, .odt, .epub, .rtf, .eml, .png, .jpg/.jpeg or .tiff/.tif, at most 100 MB)',
    );
    expect(doc.paths['/v1/ingest/url'].post.description).toBe(
      "Queues a public or pre-signed http(s) URL for download (PDF, DOCX, text, Markdown, an HTML page, PPTX, XLSX, CSV, ODT, EPUB, RTF, an e-mail message, a PNG image, a JPEG image or a TIFF image). Non-public addresses are refused. An `external_id` a document already has makes a new version of it. `partition` names the document's partition (default `default`), `access` its access list (absent: none). `chunk_size` and `chunk_overlap` work as on POST /v1/ingest.\n\nNeeds an API key with the `ingest` scope.",
    );
    // Every /v1 operation names its key scope, in the bearer requirement too.
    expect(doc.paths['/v1/query'].post.security).toEqual([{ bearer: ['query'] }]);
    expect(doc.paths['/v1/documents/{id}'].delete.security).toEqual([{ bearer: ['write'] }]);
  });

  it('serves a docs page', async () => {
    const page = await h.request('GET', '/docs/', { key: null });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.body).toMatch(/swagger/i);
  });

  it('the docs page and the document carry docindex’s name, mark and package version', async () => {
    const page = (await h.request('GET', '/docs/', { key: null })).body;
    expect(page).toContain('<title>docindex API</title>');
    const icon = page.match(/<link rel="icon" type="image\/svg\+xml" href="\.\/([^"]+)"/)?.[1];
    expect(icon).toBeDefined();
    const mark = readFileSync(new URL('../../console/favicon.svg', import.meta.url));
    expect((await h.request('GET', `/docs/${icon}`, { key: null })).rawPayload).toEqual(mark);
    // The top bar's logo is the same mark, not the UI plugin's own.
    const script = (await h.request('GET', '/docs/static/swagger-initializer.js', { key: null })).body;
    expect(script).toContain(`data:image/svg+xml;base64,${mark.toString('base64')}`);
    expect(script.match(/data:image\/svg\+xml;base64,/g)).toHaveLength(1);

    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    const doc = (await h.request('GET', '/openapi.json', { key: null })).json();
    expect(doc.info.version).toBe(pkg.version);
    expect(doc.info.title).toBe('docindex API');
    // The Swagger UI reads the same document.
    expect((await h.request('GET', '/docs/json', { key: null })).json().info.version).toBe(pkg.version);
  });

  it('names no admin tag while the admin API is off (no ADMIN_TOKEN)', async () => {
    const doc = (await h.request('GET', '/openapi.json', { key: null })).json();
    const tags = doc.tags.map((tag: { name: string }) => tag.name);
    expect(tags).toEqual(expect.arrayContaining(['ingest', 'documents', 'query', 'usage', 'webhooks']));
    expect(tags).not.toContain('admin');
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/admin/'))).toEqual([]);
    // No tag without an operation: the docs page would show it as an empty section.
    const used = new Set(
      Object.values(doc.paths as Record<string, Record<string, { tags: string[] }>>).flatMap((item) =>
        Object.values(item).flatMap((op) => op.tags),
      ),
    );
    for (const tag of tags) expect(used.has(tag), tag).toBe(true);
  });

  it('sends a browser at / to the console (GET and HEAD); other methods stay a 404', async () => {
    for (const method of ['GET', 'HEAD'] as const) {
      const res = await h.request(method, '/', { key: null });
      expect(res.statusCode, method).toBe(302);
      expect(res.headers.location, method).toBe('/console');
    }
    expect((await h.request('GET', '/console', { key: null })).statusCode).toBe(200);
    expect((await h.request('POST', '/', { key: null })).statusCode).toBe(404);
    expect((await h.request('GET', '/healthz', { key: null })).statusCode).toBe(200);
  });

  it('/metrics exposes request counts by route pattern and the backlog', async () => {
    await h.request('GET', '/v1/usage');
    await h.request('GET', '/v1/documents/00000000-0000-4000-8000-000000000000');
    const res = await h.request('GET', '/metrics', { key: null });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.body).toMatch(
      /docindex_http_requests_total\{method="GET",route="\/v1\/usage",status="200"\} \d+/,
    );
    expect(res.body).toContain('route="/v1/documents/:id",status="404"');
    expect(res.body).toMatch(/docindex_documents_pending \d+/);
    // No semantic search yet: no sign bits held.
    expect(res.body).toMatch(/docindex_vector_prefilter_bytes 0\b/);
    expect(res.body).toMatch(/docindex_vector_prefilter_partitions 0\b/);
  });

  it('unknown routes are a 404 problem', async () => {
    const res = await h.request('GET', '/v2/nothing');
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({ code: 'route_not_found', status: 404 });
  });
});
