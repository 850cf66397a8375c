// The web source type end to end (embedded, and scale-out when its project runs) against a site on
// 127.0.0.1 (admitted by URL_FETCH_ALLOW): robots.txt, include/exclude, depth and page limits, a
// sitemap index (gzipped), conditional requests (304), changed, vanished and unreached pages, a
// linked DOCX, redirect loops, a redirect to an address the rules refuse, and a page that fails
// for a while without losing its document.
import { readFileSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommandLine } from '../../src/cli/main.js';
import { listen } from '../client/support.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { htmlPage, type LoopbackSite, startLoopbackSite } from '../helpers/loopback-site.js';

const DOCX = readFileSync(new URL('../fixtures/extract/pandoc-notes.docx', import.meta.url));
const DOCX_TYPE = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

describe('sources (web on a loopback site)', () => {
  let h: Harness;
  let site: LoopbackSite;

  beforeAll(async () => {
    site = await startLoopbackSite();
    h = await startHarness({ env: { URL_FETCH_ALLOW: '127.0.0.1', JOB_MAX_ATTEMPTS: '2' } });
  });
  afterAll(async () => {
    await h?.close();
    await site?.close();
  });

  async function createSource(config: Record<string, unknown>) {
    const res = await h.request('POST', '/v1/sources', { body: { type: 'web', name: 'site', config } });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { id: string; type: string; config: Record<string, unknown> };
  }

  async function syncAndWait(sourceId: string) {
    const started = await h.request('POST', `/v1/sources/${sourceId}/sync`);
    expect(started.statusCode, started.body).toBe(202);
    const runId = started.json().run_id as string;
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const res = await h.request('GET', `/v1/sources/${sourceId}/runs`);
      const run = (res.json().runs as Array<Record<string, unknown>>).find((r) => r.run_id === runId);
      if (run && (run.status === 'completed' || run.status === 'failed')) return run;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`run ${runId} did not finish`);
  }

  async function documentsOf(sourceId: string) {
    const res = await h.request(
      'GET',
      `/v1/documents?limit=100&filter=${encodeURIComponent(JSON.stringify({ source_id: sourceId }))}`,
    );
    expect(res.statusCode, res.body).toBe(200);
    return res.json().documents as Array<{
      id: string;
      external_id: string;
      metadata: Record<string, string>;
    }>;
  }

  const keysOf = async (sourceId: string) =>
    (await documentsOf(sourceId)).map((d) => d.metadata.source_key as string).sort();

  /** The paths under `prefix` the site was asked for since `from`, in order. */
  const asked = (prefix: string, from = 0) =>
    site.requests.slice(from).filter((r) => r.path.startsWith(prefix));

  it('crawls within robots.txt, the patterns and the depth, then follows the site as it changes', async () => {
    const p = '/one';
    const u = (path: string) => `${site.origin}${p}${path}`;
    site.pages.set('/robots.txt', {
      type: 'text/plain',
      body: `User-agent: *\nDisallow: ${p}/private/\n`,
    });
    site.pages.set(`${p}/`, {
      etag: '"home-1"',
      body: htmlPage('Home', 'the home page', [
        'a.html',
        'b.html',
        'private/secret.html',
        'skip/x.html',
        'notes.docx',
        'deep1.html#section',
        // Another host (a name for the same server): not followed while same_host holds.
        `http://localhost:${new URL(site.origin).port}${p}/elsewhere.html`,
      ]),
    });
    site.pages.set(`${p}/a.html`, {
      lastModified: 'Mon, 02 Nov 2026 10:00:00 GMT',
      body: htmlPage('Alpha', 'alpha original words'),
    });
    // No validators: its change token is a hash of its body.
    site.pages.set(`${p}/b.html`, { body: htmlPage('Bravo', 'bravo words') });
    site.pages.set(`${p}/private/secret.html`, { body: htmlPage('Secret', 'never fetched') });
    site.pages.set(`${p}/skip/x.html`, { body: htmlPage('Skipped', 'excluded by pattern') });
    site.pages.set(`${p}/notes.docx`, { etag: '"docx-1"', type: DOCX_TYPE, body: DOCX });
    site.pages.set(`${p}/deep1.html`, { etag: '"d1-1"', body: htmlPage('Deep 1', 'one', ['deep2.html']) });
    site.pages.set(`${p}/deep2.html`, { etag: '"d2-1"', body: htmlPage('Deep 2', 'two', ['deep3.html']) });
    site.pages.set(`${p}/deep3.html`, { body: htmlPage('Deep 3', 'beyond max_depth') });

    const source = await createSource({
      start_urls: [u('/')],
      exclude: ['*/skip/*'],
      max_pages: 100,
      max_depth: 2,
    });
    expect(source.config).toMatchObject({ same_host: true, max_depth: 2 });
    const from = site.requests.length;
    const first = await syncAndWait(source.id);
    expect(first).toMatchObject({ status: 'completed', added: 6, updated: 0, deleted: 0, failed: 0 });
    expect(await keysOf(source.id)).toEqual(
      ['/', '/a.html', '/b.html', '/deep1.html', '/deep2.html', '/notes.docx'].map(u).sort(),
    );
    const paths = asked('', from).map((r) => r.path);
    expect(paths).not.toContain(`${p}/private/secret.html`);
    expect(paths).not.toContain(`${p}/skip/x.html`);
    expect(paths).not.toContain(`${p}/deep3.html`);
    expect(paths).not.toContain(`${p}/elsewhere.html`);
    expect(paths.filter((path) => path === '/robots.txt')).toHaveLength(1);
    for (const request of asked('', from)) expect(request.userAgent).toMatch(/^docindex\//);

    const docs = await documentsOf(source.id);
    const idOf = (key: string) => docs.find((d) => d.metadata.source_key === key)?.id as string;
    expect(docs.find((d) => d.metadata.source_key === u('/a.html'))?.external_id).toBe(
      `${source.id}:${u('/a.html')}`,
    );
    await h.waitForDone(
      h.orgA,
      docs.map((d) => d.id),
    );
    // The linked DOCX is a document like the pages.
    const docxHits = await h.request('POST', '/v1/query', {
      body: { query: 'archives thousand entries', filter: { source_id: source.id }, mode: 'keyword' },
    });
    expect(docxHits.json().results.map((r: { document_id: string }) => r.document_id)).toContain(
      idOf(u('/notes.docx')),
    );

    // Changed: a.html (new date) and deep1.html (no longer links deep2); gone: b.html (404);
    // unchanged: the home page and the DOCX (304 to the conditional request).
    site.pages.set(`${p}/a.html`, {
      lastModified: 'Tue, 03 Nov 2026 10:00:00 GMT',
      body: htmlPage('Alpha', 'alpha rewritten with zebra words'),
    });
    site.pages.delete(`${p}/b.html`);
    site.pages.set(`${p}/deep1.html`, { etag: '"d1-2"', body: htmlPage('Deep 1', 'one, now a leaf') });
    const again = site.requests.length;
    const second = await syncAndWait(source.id);
    expect(second).toMatchObject({
      status: 'completed',
      added: 0,
      updated: 2,
      deleted: 2,
      unchanged: 2,
      failed: 0,
    });
    expect(await keysOf(source.id)).toEqual(['/', '/a.html', '/deep1.html', '/notes.docx'].map(u).sort());
    const home = asked(`${p}/`, again).find((r) => r.path === `${p}/`);
    expect(home).toMatchObject({ status: 304, ifNoneMatch: '"home-1"' });
    expect(asked(`${p}/notes.docx`, again)).toEqual([expect.objectContaining({ status: 304 })]);
    expect(asked(`${p}/a.html`, again)[0]).toMatchObject({
      ifModifiedSince: 'Mon, 02 Nov 2026 10:00:00 GMT',
      status: 200,
    });
    // A changed page is a new version of the same document.
    const changed = (await documentsOf(source.id)).find((d) => d.metadata.source_key === u('/a.html'));
    expect(changed?.id).toBe(idOf(u('/a.html')));
    expect((await h.request('GET', `/v1/documents/${idOf(u('/b.html'))}`)).statusCode).toBe(404);
    expect((await h.request('GET', `/v1/documents/${idOf(u('/deep2.html'))}`)).statusCode).toBe(404);
    const deadline = Date.now() + 30_000;
    let version = 0;
    while (Date.now() < deadline && version !== 2) {
      version = (await h.request('GET', `/v1/documents/${changed?.id}`)).json().version as number;
      if (version !== 2) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(version).toBe(2);

    // A page failing for a while (503) is an error of the run and keeps its document.
    site.pages.set(`${p}/deep1.html`, { status: 503 });
    const third = await syncAndWait(source.id);
    expect(third).toMatchObject({ status: 'completed', deleted: 0, unchanged: 3, failed: 1 });
    expect(third.errors).toEqual([
      { item: u('/deep1.html'), code: 'url_unreachable', message: expect.stringContaining('503') },
    ]);
    // With every start URL failing the site is down, not emptied: the run fails and deletes nothing.
    site.pages.set(`${p}/`, { status: 503 });
    const fourth = await syncAndWait(source.id);
    expect(fourth).toMatchObject({ status: 'failed', deleted: 0 });
    expect(await keysOf(source.id)).toEqual(['/', '/a.html', '/deep1.html', '/notes.docx'].map(u).sort());
  });

  it('reads a gzipped sitemap index, takes only the included URLs and stops at max_pages', async () => {
    const p = '/two';
    const pages = Array.from({ length: 5 }, (_, i) => `${site.origin}${p}/page-${i}.html`);
    for (const [i, url] of pages.entries()) {
      site.pages.set(new URL(url).pathname, { body: htmlPage(`Page ${i}`, `sitemap page ${i}`) });
    }
    const urlset = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${[`${site.origin}${p}/other.html`, ...pages].map((u) => `<url><loc>${u}</loc></url>`).join('')}</urlset>`;
    site.pages.set(`${p}/other.html`, { body: htmlPage('Other', 'not included') });
    site.pages.set(`${p}/pages.xml`, { type: 'application/xml', body: urlset });
    const index = `<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>${site.origin}${p}/pages.xml</loc></sitemap></sitemapindex>`;
    site.pages.set(`${p}/sitemap.xml.gz`, { type: 'application/gzip', body: gzipSync(index) });

    const source = await createSource({
      start_urls: [],
      sitemap: `${site.origin}${p}/sitemap.xml.gz`,
      include: [`${site.origin}${p}/page-*`],
      max_pages: 3,
      max_depth: 0,
    });
    const from = site.requests.length;
    const run = await syncAndWait(source.id);
    expect(run).toMatchObject({ status: 'completed', added: 3, failed: 0 });
    expect(await keysOf(source.id)).toEqual(pages.slice(0, 3).sort());
    expect(asked(`${p}/page-`, from)).toHaveLength(3);
    // Listed first in the sitemap, but not included: never asked for, and no place taken.
    expect(asked(`${p}/other.html`, from)).toEqual([]);
  });

  it('records a redirect loop and a redirect to a refused address as item errors', async () => {
    const p = '/three';
    const u = (path: string) => `${site.origin}${p}${path}`;
    site.pages.set(`${p}/`, { body: htmlPage('Start', 'start', ['loop-a', 'away', 'fine.html']) });
    site.pages.set(`${p}/loop-a`, { status: 302, location: `${p}/loop-b` });
    site.pages.set(`${p}/loop-b`, { status: 302, location: `${p}/loop-a` });
    // 127.0.0.2 is not admitted by URL_FETCH_ALLOW: refused before any connection.
    site.pages.set(`${p}/away`, { status: 302, location: 'http://127.0.0.2:9/' });
    site.pages.set(`${p}/fine.html`, { body: htmlPage('Fine', 'fine') });
    const source = await createSource({ start_urls: [u('/')], max_pages: 10, max_depth: 1 });
    const run = await syncAndWait(source.id);
    expect(run).toMatchObject({ status: 'completed', added: 2, failed: 2 });
    expect(run.errors).toEqual(
      expect.arrayContaining([
        { item: u('/loop-a'), code: 'too_many_redirects', message: expect.any(String) },
        { item: u('/away'), code: 'url_blocked', message: expect.any(String) },
      ]),
    );
  });

  it('the command line adds a web source; MCP lists it with its newest run and syncs it', async () => {
    const p = '/four';
    site.pages.set(`${p}/`, { body: htmlPage('Tools', 'reached through the tools', ['next.html']) });
    site.pages.set(`${p}/next.html`, { body: htmlPage('Next', 'next page') });
    const url = await listen(h.app);
    const cli = async (argv: string[]) => {
      const stdout = new PassThrough();
      const stderr = new PassThrough();
      const status = await runCommandLine(argv, {
        version: '0.1.0',
        env: { DOCINDEX_URL: url, DOCINDEX_API_KEY: h.orgA.apiKey },
        io: { stdout, stderr },
        openServer: async () => {
          throw new Error('client commands need no server side');
        },
        modelSettings: () => {
          throw new Error('client commands need no model settings');
        },
      });
      return {
        status,
        out: (stdout.read() ?? '').toString() as string,
        err: (stderr.read() ?? '').toString() as string,
      };
    };
    const refused = await cli([
      'sources',
      'add',
      'web',
      '--name',
      'x',
      '--max-pages',
      '5',
      '--max-depth',
      '1',
    ]);
    expect(refused.status).not.toBe(0);
    expect(refused.err).toMatch(/--start-url or --sitemap/);
    const added = await cli([
      'sources',
      'add',
      'web',
      '--name',
      'tools site',
      '--start-url',
      `${site.origin}${p}/`,
      '--exclude',
      '*/never/*',
      '--max-pages',
      '50',
      '--max-depth',
      '1',
      '--json',
    ]);
    expect(added.status, added.err).toBe(0);
    const source = JSON.parse(added.out) as { id: string; type: string; config: Record<string, unknown> };
    expect(source).toMatchObject({
      type: 'web',
      config: { start_urls: [`${site.origin}${p}/`], exclude: ['*/never/*'], max_pages: 50, max_depth: 1 },
    });
    const listed = await cli(['sources', 'list']);
    expect(listed.out).toMatch(new RegExp(`${source.id}\\s+tools site\\s+web\\s+${site.origin}${p}/`));

    const client = new Client({ name: 'docindex-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', url), {
        requestInit: { headers: { authorization: `Bearer ${h.orgA.apiKey}` } },
      }),
    );
    try {
      const tool = async (name: string, args: Record<string, unknown>) => {
        const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
        return {
          error: result.isError ?? false,
          content: result.structuredContent as Record<string, unknown>,
        };
      };
      const before = await tool('list_sources', {});
      const mine = (before.content.sources as Array<Record<string, unknown>>).find((s) => s.id === source.id);
      expect(mine).toMatchObject({ type: 'web', last_run: null });
      const synced = await tool('sync_source', { id: source.id });
      expect(synced.error).toBe(false);
      const deadline = Date.now() + 30_000;
      let lastRun: Record<string, unknown> | null = null;
      while (Date.now() < deadline) {
        const after = await tool('list_sources', {});
        lastRun = (after.content.sources as Array<Record<string, unknown>>).find((s) => s.id === source.id)
          ?.last_run as Record<string, unknown> | null;
        if (lastRun?.status === 'completed') break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(lastRun).toMatchObject({ run_id: synced.content.run_id, status: 'completed', added: 2 });
    } finally {
      await client.close();
    }
  });

  it('refuses a configuration it cannot crawl with a clear 400', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ start_urls: [`${site.origin}/`], max_pages: 10_001, max_depth: 1 }, '/config/max_pages'],
      [{ start_urls: [`${site.origin}/`], max_pages: 10 }, '/config/max_depth'],
      [{ start_urls: ['ftp://127.0.0.1/x'], max_pages: 10, max_depth: 1 }, '/config/start_urls/0'],
      [{ start_urls: [], max_pages: 10, max_depth: 1 }, '/config/start_urls'],
      [{ start_urls: ['http://127.0.0.2/'], max_pages: 10, max_depth: 1 }, '/config/start_urls/0'],
      [{ start_urls: [`${site.origin}/`], max_pages: 10, max_depth: 1, bucket: 'b' }, '/config/bucket'],
    ];
    for (const [config, pointer] of cases) {
      const res = await h.request('POST', '/v1/sources', { body: { type: 'web', name: 'bad', config } });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().errors.map((e: { pointer: string }) => e.pointer)).toEqual([pointer]);
    }
    const source = await createSource({ start_urls: [`${site.origin}/`], max_pages: 10, max_depth: 1 });
    const patched = await h.request('PATCH', `/v1/sources/${source.id}`, {
      body: { config: { bucket: 'not-a-web-config' } },
    });
    expect(patched.statusCode, patched.body).toBe(400);
    expect(patched.json().errors[0].pointer).toBe('/config/start_urls');
    const fine = await h.request('PATCH', `/v1/sources/${source.id}`, {
      body: { config: { start_urls: [`${site.origin}/x`], max_pages: 5, max_depth: 0, same_host: false } },
    });
    expect(fine.statusCode, fine.body).toBe(200);
    expect(fine.json().config).toEqual({
      start_urls: [`${site.origin}/x`],
      max_pages: 5,
      max_depth: 0,
      same_host: false,
    });
  });
});
