// The web console at /console: its static files and headers (always), and an end-to-end run in a
// real headless Chromium (playwright-core) against a docindex listening on loopback. Browser tests
// skip, saying so, when /usr/bin/chromium is missing — unless REQUIRE_BROWSER_TESTS=1 (CI).
import { existsSync, mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADVERTISED_EXTENSIONS } from '../../src/domain/formats.js';
import { CONSOLE_CSP, fillConsolePage } from '../../src/http/routes/console.js';
import { EmbeddingsServer } from '../helpers/embeddings-server.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { htmlPage, type LoopbackSite, startLoopbackSite } from '../helpers/loopback-site.js';
import { CORPUS_DIR, HAVE_CORPUS } from '../helpers/shared.js';

const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
const browserRequired = process.env.REQUIRE_BROWSER_TESTS === '1';
const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));
// The browser test uploads an encrypted PDF from the shared corpus: without it, it is skipped.
const ENCRYPTED_PDF = path.join(CORPUS_DIR, 'pdf/libreoffice-writer-password.pdf');

/** What a page loads: every src, and the href of every element but a link (<a>). */
const loadedFrom = (html: string) =>
  [...html.matchAll(/<(?!a\s)[a-z]+\s[^>]*?\b(?:src|href)="([^"]*)"/g)].map((m) => m[1]);
/** Where a page's links (<a href>) lead. */
const linksOf = (html: string) => [...html.matchAll(/<a\s[^>]*?\bhref="([^"]*)"/g)].map((m) => m[1]);

describe('console static files', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ worker: false });
  });
  afterAll(() => h.close());

  it('serves the page, script and styles with a self-only CSP and no auth', async () => {
    for (const [url, type] of [
      ['/console', 'text/html'],
      ['/console/', 'text/html'],
      ['/console/app.js', 'text/javascript'],
      ['/console/admin.html', 'text/html'],
      ['/console/admin.js', 'text/javascript'],
      ['/console/notices.js', 'text/javascript'],
      ['/console/app.css', 'text/css'],
      ['/console/favicon.svg', 'image/svg+xml'],
    ] as const) {
      const res = await h.request('GET', url, { key: null });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type'], url).toContain(type);
      expect(res.headers['content-security-policy'], url).toBe(CONSOLE_CSP);
      expect(res.headers['x-content-type-options']).toBe('nosniff');
    }
    expect(CONSOLE_CSP).toMatch(/default-src 'self'/);
    expect(CONSOLE_CSP).not.toMatch(/unsafe|https?:|\*/);
  });

  it('loads nothing from elsewhere and no inline script or style', async () => {
    const html = (await h.request('GET', '/console', { key: null })).body;
    expect(loadedFrom(html).length).toBeGreaterThan(2);
    for (const ref of loadedFrom(html)) expect(ref).toMatch(/^(\/console\/|#)/);
    // Links lead to this server's own pages only.
    expect(linksOf(html)).toEqual(['#main', '/console/', '/docs/']);
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/\sstyle=|<style/);
    expect(html).toMatch(/<label[^>]*for="api-key"/);
  });

  it('the admin page asks for the admin token, keeps it in sessionStorage only, and loads nothing inline', async () => {
    const html = (await h.request('GET', '/console/admin.html', { key: null })).body;
    for (const ref of loadedFrom(html)) expect(ref).toMatch(/^(\/console\/|#)/);
    expect(linksOf(html)).toEqual(['#main', '/console/admin.html', '/console/', '/docs/']);
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/\sstyle=|<style/);
    expect(html).toMatch(/<label[^>]*for="admin-token"/);
    const script = (await h.request('GET', '/console/admin.js', { key: null })).body;
    expect(script).toContain('sessionStorage');
    expect(script).not.toMatch(/localStorage|document\.cookie|innerHTML/);
    expect(script).toContain('/admin/v1/orgs');
  });

  it('has a webhooks panel: a labelled URL field, the endpoints table, and the script that drives it', async () => {
    const html = (await h.request('GET', '/console', { key: null })).body;
    expect(html).toMatch(/<h2 id="webhooks-title">Webhooks<\/h2>/);
    expect(html).toMatch(/<label[^>]*for="webhook-url"/);
    expect(html).toMatch(/id="webhooks-body"/);
    const script = (await h.request('GET', '/console/app.js', { key: null })).body;
    for (const call of ["'/v1/webhooks'", '/test`', '/deliveries?limit=20`']) expect(script).toContain(call);
  });

  it('offers the formats the service accepts, from the format registry', async () => {
    const html = (await h.request('GET', '/console', { key: null })).body;
    expect(html).toContain(
      'accept=".pdf,.docx,.txt,.md,.html,.htm,.pptx,.xlsx,.csv,.tsv,.odt,.epub,.rtf,.eml,.png,.jpg,.jpeg,.tiff,.tif"',
    );
    expect(html).toContain(
      'PDF, DOCX, TXT, Markdown, HTML, PPTX, XLSX, CSV/TSV, ODT, EPUB, RTF, E-mail (EML), PNG, JPEG or TIFF · up to 100 MB each',
    );
    expect(html.match(/\baccept="([^"]*)"/)?.[1]?.split(',')).toEqual(ADVERTISED_EXTENSIONS);
    // The URL tab names the same formats as the upload tab: one list, from the registry.
    const caption = (id: string) => html.match(new RegExp(`<p[^>]*id="${id}"[^>]*>([^<]*)</p>`))?.[1];
    const formats = caption('file-formats')?.split(' · ')[0];
    expect(formats).toMatch(/^PDF, DOCX, .* or TIFF$/);
    expect(caption('url-formats')).toContain(`: ${formats} · up to 100 MB`);
    expect(html).not.toContain('{{');
    expect(() => fillConsolePage('<p>{{no-such-value}}</p>')).toThrow(/unknown placeholder/);
  });

  it('answers 304 to a matching ETag and 404 for files it does not have', async () => {
    const first = await h.request('GET', '/console/app.js', { key: null });
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^".+"$/);
    const again = await h.request('GET', '/console/app.js', {
      key: null,
      headers: { 'if-none-match': etag },
    });
    expect(again.statusCode).toBe(304);
    expect((await h.request('GET', '/console/../package.json', { key: null })).statusCode).toBe(404);
    expect((await h.request('GET', '/console/secret.txt', { key: null })).statusCode).toBe(404);
  });
});

if (!hasChromium) {
  const message = `browser tests need ${CHROMIUM} (apt-get install -y chromium)`;
  if (browserRequired) {
    it('runs the console in Chromium (REQUIRE_BROWSER_TESTS=1)', () => {
      throw new Error(`${message}; REQUIRE_BROWSER_TESTS=1 forbids skipping`);
    });
  } else {
    process.stderr.write(`[console] skipping the browser test: ${message}\n`);
  }
}

const ADMIN_TOKEN = 'console-test-admin-token-0123456789abcdef';

const launchChromium = () =>
  chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });

/** The search mode options as [value, label, disabled]. */
const modeOptions = (page: Page) =>
  page
    .locator('#mode-input option')
    .evaluateAll((options) =>
      options.map((o) => [o.getAttribute('value'), o.textContent, o.hasAttribute('disabled')]),
    );

describe.runIf(hasChromium && HAVE_CORPUS)('console in a real browser', () => {
  let h: Harness;
  let baseUrl: string;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];
  const offsite: string[] = [];

  beforeAll(async () => {
    h = await startHarness({ env: { ADMIN_TOKEN } });
    await h.app.listen({ host: '127.0.0.1', port: 0 });
    baseUrl = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 }, colorScheme: 'light' });
    page.on('console', (msg) => {
      if (msg.type() === 'error' && !/status of 4\d\d/.test(msg.text())) problems.push(msg.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('request', (request) => {
      if (!request.url().startsWith(baseUrl)) offsite.push(request.url());
    });
  });
  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  it('signs in, uploads, waits for ready, queries, and counts the query in the usage chart', async () => {
    // The server's root sends a browser to the console.
    await page.goto(baseUrl);
    expect(new URL(page.url()).pathname).toBe('/console');
    await page.getByLabel('API key').fill('dix_not-a-real-key');
    await page.getByRole('button', { name: 'Connect' }).click();
    await expect.poll(() => page.locator('#signin-error').textContent()).toMatch(/not accepted/);

    await page.getByLabel('API key').fill(h.orgA.apiKey);
    await page.getByLabel('API key').press('Enter');
    await page.locator('#dashboard').waitFor({ state: 'visible' });
    // Browser-side code goes as strings: this project's TypeScript has no DOM types.
    expect(await page.evaluate("sessionStorage.getItem('docindex.apiKey')")).toBe(h.orgA.apiKey);
    expect(await page.evaluate('localStorage.length')).toBe(0);
    expect(await page.locator('#stat-rate').textContent()).toBe('1,000,000');
    // The header names the organisation (GET /v1/org), not its id.
    expect(await page.locator('#session-org').textContent()).toBe(`org-a · ${h.orgA.apiKey.slice(0, 8)}…`);
    expect(await page.locator('#session-org').getAttribute('title')).toContain(h.orgA.orgId);
    // No embedding provider (/readyz lists none): semantic and hybrid cannot be chosen, and say why.
    expect(await modeOptions(page)).toEqual([
      ['', 'Default (keyword)', false],
      ['keyword', 'Keyword', false],
      ['semantic', 'Semantic (needs an embedding provider)', true],
      ['hybrid', 'Hybrid (needs an embedding provider)', true],
    ]);

    // File picker: a text file, and a PDF that cannot be read.
    await page.locator('#file-input').setInputFiles({
      name: 'salmon-notes.txt',
      mimeType: 'text/plain',
      buffer: Buffer.from(
        'Salmon swim upstream every autumn to spawn in the gravel beds of the river where they hatched.\n',
      ),
    });
    await page.locator('#file-input').setInputFiles(ENCRYPTED_PDF);
    // Drag and drop.
    const dropped = await page.evaluateHandle(`(() => {
      const transfer = new DataTransfer();
      const text = '# Herons\\n\\nHerons wait motionless in shallow water, then strike at fish.\\n';
      transfer.items.add(new File([text], 'herons.md', { type: 'text/markdown' }));
      return transfer;
    })()`);
    await page.locator('#dropzone').dispatchEvent('drop', { dataTransfer: dropped });
    // Pasted text, reaching the tab by keyboard.
    await page.getByRole('tab', { name: 'Upload files' }).focus();
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight');
    expect(await page.getByRole('tab', { name: 'Paste text' }).getAttribute('aria-selected')).toBe('true');
    await page.getByLabel('Title').fill('Field notes: kingfishers');
    await page.getByLabel('Text', { exact: true }).fill('Kingfishers dive from a perch to catch small fish.');
    await page.getByRole('button', { name: 'Ingest text' }).click();

    const row = (name: string) => page.locator('#documents-body tr', { hasText: name });
    for (const name of ['salmon-notes.txt', 'herons.md', 'Field notes: kingfishers']) {
      await row(name).locator('.badge-ready').waitFor({ timeout: 30_000 });
    }
    await row('libreoffice-writer-password.pdf').locator('.badge-failed').waitFor({ timeout: 30_000 });
    expect(await row('libreoffice-writer-password.pdf').locator('.failure').textContent()).toMatch(
      /encrypted.*password/,
    );
    expect(await page.locator('#documents-body tr').count()).toBe(4);

    await page.getByLabel('Query').fill('salmon upstream');
    await page.getByLabel('Query').press('Enter');
    const first = page.locator('#results .result').first();
    await first.waitFor();
    expect(await first.locator('.result-doc').textContent()).toBe('salmon-notes.txt');
    expect(await first.locator('.result-meta').textContent()).toBe('chunk 0');
    expect(await first.locator('.result-text').textContent()).toMatch(/Salmon swim upstream every autumn/);
    expect(await first.locator('mark').first().textContent()).toBe('Salmon');
    // No embedding provider: the default mode is keyword, and the summary says so.
    expect(await page.locator('#results-summary').textContent()).toMatch(/\(keyword search\)/);
    // No reranker either: /readyz lists none, so the rerank toggle stays hidden.
    expect(await page.locator('#rerank-toggle').isVisible()).toBe(false);

    // The chart is redrawn after the query: today (the rightmost bar) counts it.
    await page.locator('#usage-chart rect.today[data-count="1"]').waitFor();
    expect(await page.locator('#stat-total').textContent()).toBe('1');
    const bars = await page
      .locator('#usage-chart rect.bar')
      .evaluateAll((rects) =>
        rects.map((r) => ({ date: r.getAttribute('data-date'), x: Number(r.getAttribute('x')) })),
      );
    expect(bars).toHaveLength(30);
    const today: string = (await h.request('GET', '/v1/usage')).json().daily[0].date;
    expect(bars.at(-1)!.date).toBe(today);
    for (let i = 1; i < bars.length; i++) {
      expect(bars[i]!.x).toBeGreaterThan(bars[i - 1]!.x);
      expect(bars[i]!.date! > bars[i - 1]!.date!).toBe(true);
    }

    // The mode switch: the query is sent with the chosen mode, and each score's tooltip tells the
    // keyword score, BM25's share of the query's most.
    await page.getByLabel('Search mode').selectOption('keyword');
    await page.getByLabel('Query').fill('herons');
    await page.getByLabel('Query').press('Enter');
    await page.locator('#results .result', { hasText: 'herons.md' }).first().waitFor();
    expect(await page.locator('#results-summary').textContent()).toMatch(
      /^1 chunk, best first \(keyword search\)\.$/,
    );
    const tooltip = await page.locator('#results .result-score').first().getAttribute('title');
    expect(tooltip).toMatch(/^keyword \(BM25 share\) [01]\.\d{3}$/);
    const share = Number(tooltip!.split(' ').at(-1));
    expect(share).toBeGreaterThan(0.2);
    expect(share).toBeLessThanOrEqual(1);

    // Back to the upload tab, and let the notices fade, so the screenshot shows the page itself.
    await page.getByRole('tab', { name: 'Upload files' }).click();
    expect(await page.locator('#panel-upload').isVisible()).toBe(true);
    await expect.poll(() => page.locator('.toast').count(), { timeout: 10_000 }).toBe(0);
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, 'console.png'), fullPage: true });

    expect(problems).toEqual([]);
    expect(offsite).toEqual([]);
  });

  it('opens a document from its row (a click, or Enter once focused) and from its Open button', async () => {
    const row = page.locator('#documents-body tr', { hasText: 'herons.md' });
    const dialog = page.locator('#document-dialog');
    await row.locator('.doc-name').click();
    await dialog.waitFor({ state: 'visible' });
    expect(await page.locator('#dialog-title').textContent()).toBe('herons.md');
    await page.getByRole('button', { name: 'Close' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await row.focus();
    await page.keyboard.press('Enter');
    await dialog.waitFor({ state: 'visible' });
    expect(await page.locator('#dialog-title').textContent()).toBe('herons.md');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    // The row's own buttons keep their meaning: Delete asks, and a refusal opens nothing.
    page.once('dialog', (question) => question.dismiss());
    await row.getByRole('button', { name: 'Delete herons.md' }).click();
    expect(await dialog.isVisible()).toBe(false);
    await row.getByRole('button', { name: 'Open herons.md' }).click();
    await dialog.waitFor({ state: 'visible' });
    await page.getByRole('button', { name: 'Close' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect(problems).toEqual([]);
  });

  it('opens a document: shows the chunks it was indexed as and edits its metadata', async () => {
    const row = page.locator('#documents-body tr', { hasText: 'salmon-notes.txt' });
    await row.locator('.doc-name').click();
    const dialog = page.locator('#document-dialog');
    await dialog.waitFor({ state: 'visible' });
    await expect.poll(() => page.locator('#chunks-note').textContent()).toBe('1 chunk');
    expect(await page.locator('#chunk-list li').first().textContent()).toMatch(
      /^chunk 0 · \d+ tokensSalmon swim upstream every autumn/,
    );
    expect(await page.locator('#dialog-id').textContent()).toMatch(/· version 1$/);

    await page.getByLabel(/^Metadata/).fill('{"river": "tweed", "season": "autumn"}');
    await page.getByRole('button', { name: 'Save metadata' }).click();
    await row.locator('.chip', { hasText: 'river: tweed' }).waitFor();
    const id = await row.getAttribute('data-id');
    expect((await h.request('GET', `/v1/documents/${id}`)).json().metadata).toEqual({
      river: 'tweed',
      season: 'autumn',
    });
    // A key left out is removed; invalid JSON is refused before any request.
    await page.getByLabel(/^Metadata/).fill('{"river": "tweed"}');
    await page.getByRole('button', { name: 'Save metadata' }).click();
    await expect
      .poll(async () => (await h.request('GET', `/v1/documents/${id}`)).json().metadata)
      .toEqual({ river: 'tweed' });
    await page.getByLabel(/^Metadata/).fill('{river');
    await page.getByRole('button', { name: 'Save metadata' }).click();
    expect(await page.locator('#metadata-error').textContent()).toBe('That is not valid JSON.');
    await page.getByRole('button', { name: 'Close' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect(problems).toEqual([]);
    expect(offsite).toEqual([]);
  });
  it('reprocesses a failed document from its row; a ready one offers no such button', async () => {
    const failed = page.locator('#documents-body tr', { hasText: 'libreoffice-writer-password.pdf' });
    const ready = page.locator('#documents-body tr', { hasText: 'salmon-notes.txt' });
    expect(await ready.getByRole('button', { name: /^Reprocess/ }).count()).toBe(0);
    const id = (await failed.getAttribute('data-id'))!;
    expect((await h.request('GET', `/v1/documents/${id}`)).json().version).toBe(1);
    await failed.getByRole('button', { name: 'Reprocess libreoffice-writer-password.pdf' }).click();
    // A new version from the stored original: extracted again, and (still encrypted) failed again.
    await expect
      .poll(
        async () => {
          const doc = (await h.request('GET', `/v1/documents/${id}`)).json();
          return `${doc.version} ${doc.status}`;
        },
        { timeout: 30_000 },
      )
      .toBe('2 failed');
    await failed.locator('.badge-failed').waitFor();
    expect(await failed.locator('.failure').textContent()).toMatch(/encrypted/);
    expect(problems).toEqual([]);
  });

  it('shows results only for the mode the form shows: a refused mode clears them and says why', async () => {
    await page.getByLabel('Query').fill('salmon');
    await page.getByLabel('Search mode').selectOption('keyword');
    await page.getByLabel('Query').press('Enter');
    await expect.poll(() => page.locator('#results-summary').textContent()).toMatch(/\(keyword search\)\.$/);
    expect(await page.locator('#results .result').count()).toBe(1);
    // A server that loses its provider after the page loaded: the option is on offer, the server refuses.
    await page.evaluate(`(() => {
      const option = document.querySelector('#mode-input option[value="semantic"]');
      option.disabled = false;
      option.textContent = 'Semantic';
    })()`);
    // Changing the mode searches again at once; the keyword results do not stay under "Semantic".
    await page.getByLabel('Search mode').selectOption('semantic');
    await expect
      .poll(() => page.locator('#results-summary').textContent())
      .toMatch(/^No results: Mode "semantic" needs an embedding provider/);
    expect(await page.locator('#results .result').count()).toBe(0);
    expect(await page.locator('#mode-input').inputValue()).toBe('');
    expect(await page.locator('#mode-input option[value="semantic"]').isDisabled()).toBe(true);
    // Back to a mode the server answers: results again, labelled with their mode.
    await page.getByLabel('Search mode').selectOption('keyword');
    await expect.poll(() => page.locator('#results .result').count()).toBe(1);
    expect(await page.locator('#results-summary').textContent()).toMatch(/\(keyword search\)\.$/);
    expect(problems).toEqual([]);
  });

  it('webhooks: a refused local receiver is told URL_FETCH_ALLOW; the table fits the page at 1280 px and at 700 px', async () => {
    await page.getByLabel('Endpoint URL').fill('http://127.0.0.1:4519/hook');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await expect
      .poll(() => page.locator('#webhook-error').textContent())
      .toBe(
        'The webhook URL cannot be used: 127.0.0.1 is not a public address (the server accepts it when started with URL_FETCH_ALLOW=127.0.0.1:4519).',
      );
    for (const name of ['orders', 'a-rather-long-path-segment/for-receiving-every-document-event']) {
      await page.getByLabel('Endpoint URL').fill(`https://hooks.example.com/docindex/${name}`);
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      await page.locator('#webhooks-body tr', { hasText: name }).waitFor();
    }
    expect(await page.locator('#webhook-error').textContent()).toBe('');
    for (const width of [1280, 700]) {
      await page.setViewportSize({ width, height: 900 });
      // Both tables, every column and button inside the card, and nothing to scroll sideways.
      const fit = await page.evaluate(`['webhooks', 'documents'].map((panel) => {
        const card = document.querySelector('.' + panel);
        const box = card.getBoundingClientRect();
        const wrap = card.querySelector('.table-wrap');
        const buttons = [...card.querySelectorAll('tbody button')].map((b) => b.getBoundingClientRect());
        return {
          panel,
          scrolls: wrap.scrollWidth > wrap.clientWidth,
          insideCard: buttons.every((b) => b.left >= box.left && b.right <= box.right),
          insidePage: box.right <= document.documentElement.clientWidth,
          buttons: buttons.length,
        };
      })`);
      expect(fit, `${width} px`).toEqual([
        { panel: 'webhooks', scrolls: false, insideCard: true, insidePage: true, buttons: 6 },
        // Four documents (Open, Delete each), the failed one with Reprocess too.
        { panel: 'documents', scrolls: false, insideCard: true, insidePage: true, buttons: 9 },
      ]);
    }
    await expect.poll(() => page.locator('.toast').count(), { timeout: 10_000 }).toBe(0);
    await page.screenshot({ path: path.join(ARTIFACTS, 'console-narrow.png'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });
    expect(problems).toEqual([]);
  });

  it('evaluations: the newest ones with their runs side by side', async () => {
    const [doc] = (await h.request('GET', '/v1/documents?limit=1')).json().documents;
    const created = await h.request('POST', '/v1/evaluations', {
      body: {
        name: 'console comparison',
        queries: [{ query: 'otter', relevant: [{ document_id: doc.id }] }],
        runs: [{ mode: 'keyword' }, { mode: 'keyword', rerank: false }],
      },
    });
    expect(created.statusCode).toBe(202);
    const id = created.json().evaluation_id;
    await expect
      .poll(async () => (await h.request('GET', `/v1/evaluations/${id}`)).json().status, { timeout: 30_000 })
      .toBe('done');
    await page.locator('#evaluations-refresh').click();
    const row = page.locator('#evaluations-body tr', { hasText: 'console comparison' });
    await row.waitFor();
    expect(await row.locator('.badge').textContent()).toBe('done');
    const runs = row.locator('.eval-runs li');
    expect(await runs.allTextContents()).toEqual([
      expect.stringMatching(/^R1 keyword: \d\.\d{4} · \d\.\d{4} · \d\.\d{4} · \d+\.\d ms$/),
      expect.stringMatching(/^R2 keyword: \d\.\d{4} · \d\.\d{4} · \d\.\d{4} · \d+\.\d ms$/),
    ]);
    // Side by side: both runs on one line at this width.
    const [first, second] = [await runs.nth(0).boundingBox(), await runs.nth(1).boundingBox()];
    expect(second!.y).toBe(first!.y);
    expect(second!.x).toBeGreaterThan(first!.x);
    // The drill-down: each query's nDCG@10 run by run, its change from R1 and its ranks.
    expect(await page.locator('#evaluation-detail').isVisible()).toBe(false);
    await row.getByRole('button', { name: 'Compare runs: console comparison' }).click();
    await page.locator('#evaluation-detail').waitFor({ state: 'visible' });
    expect(await page.locator('#evaluation-detail-title').textContent()).toBe(
      'Runs compared: console comparison',
    );
    expect(await page.locator('#evaluation-detail-head th').allTextContents()).toEqual([
      'Query',
      'R1 keyword',
      'R2 keyword',
    ]);
    const queryRows = page.locator('#evaluation-detail-body tr');
    expect(await queryRows.count()).toBe(1);
    const cells = await queryRows.nth(0).locator('td').allInnerTexts();
    const shortId = doc.external_id ?? doc.id.slice(0, 8);
    expect(cells).toEqual([
      'otter',
      expect.stringMatching(new RegExp(`^(1|0)\\.\\d{4}\\n${shortId}:(\\d+|–)$`)),
      expect.stringMatching(new RegExp(`^(1|0)\\.\\d{4}\\n±0\\n${shortId}:(\\d+|–)$`)),
    ]);
    // Two runs of the same settings: nothing got worse, and no row is marked.
    expect(await page.locator('#evaluation-detail-note').textContent()).toBe(
      '1 evaluated query; 0 worse than in R1 in a later run (listed first).',
    );
    expect(await page.locator('#evaluation-detail-body tr.eval-worse').count()).toBe(0);
    await page.locator('#evaluation-detail-close').click();
    expect(await page.locator('#evaluation-detail').isVisible()).toBe(false);
    expect(problems).toEqual([]);
  });

  it('notices: at most three at once, one per message, each gone within six seconds', async () => {
    const other = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    try {
      await other.clock.install();
      await other.goto(`${baseUrl}/console`);
      await other.getByLabel('API key').fill(h.orgA.apiKey);
      await other.getByLabel('API key').press('Enter');
      await other.locator('#dashboard').waitFor({ state: 'visible' });
      // The most notices ever shown at once, and every time a notice of the repeated refusal is added.
      await other.evaluate(`(() => {
        window.mostNotices = 0;
        window.sameAdded = [];
        const box = document.getElementById('toasts');
        new MutationObserver((mutations) => {
          window.mostNotices = Math.max(window.mostNotices, box.children.length);
          for (const node of mutations.flatMap((m) => [...m.addedNodes])) {
            if (node.dataset.message.startsWith('same.bin: ')) window.sameAdded.push(node);
          }
        }).observe(box, { childList: true });
      })()`);
      let refused = 0;
      other.on('response', (response) => {
        if (response.url().endsWith('/v1/ingest/file') && response.status() === 415) refused += 1;
      });
      // Five files the server refuses, at once: a notice for the batch and one per file.
      const junk = (name: string) => ({
        name,
        mimeType: 'application/octet-stream',
        buffer: Buffer.from([0, 1, 2, 3, 0xff]),
      });
      await other
        .locator('#file-input')
        .setInputFiles(['a', 'b', 'c', 'd', 'e'].map((n) => junk(`${n}.bin`)));
      await expect.poll(() => refused).toBe(5);
      await expect.poll(() => other.locator('.toast').count()).toBe(3);
      expect(await other.evaluate('window.mostNotices')).toBe(3);
      // The same refusal twice: the second time, the notice already shown stays (moved last), no new one.
      for (let i = 0; i < 2; i++) await other.locator('#file-input').setInputFiles(junk('same.bin'));
      await expect.poll(() => other.evaluate('window.sameAdded.length')).toBe(2);
      expect(await other.evaluate('window.sameAdded[0] === window.sameAdded[1]')).toBe(true);
      expect(await other.locator('.toast', { hasText: /^same\.bin: / }).count()).toBe(1);
      expect(await other.locator('.toast', { hasText: 'Uploading same.bin' }).count()).toBe(1);
      // Six seconds later (on the page's clock) every notice is gone.
      await other.clock.fastForward(6_000);
      expect(await other.locator('.toast').count()).toBe(0);
    } finally {
      await other.close();
    }
  });

  it('the admin page has the console’s header', async () => {
    const header = async (p: Page) =>
      p.evaluate(`(() => {
        const bar = document.querySelector('header.topbar');
        return {
          mark: bar.querySelector('.brand-mark').getAttribute('src'),
          name: bar.querySelector('.brand-name').textContent,
          docs: [...bar.querySelectorAll('.topnav a')].map((a) => a.textContent).includes('API docs'),
          signOut: bar.querySelector('#sign-out').textContent,
          height: Math.round(bar.getBoundingClientRect().height),
        };
      })()`);
    const consoleHeader = await header(page);
    const admin = await browser.newPage({ viewport: { width: 1280, height: 900 }, colorScheme: 'light' });
    try {
      await admin.goto(`${baseUrl}/console/admin.html`);
      await admin.getByLabel('Admin token').fill(ADMIN_TOKEN);
      await admin.getByLabel('Admin token').press('Enter');
      await admin.locator('#orgs-body tr', { hasText: 'org-a' }).waitFor();
      expect(await header(admin)).toEqual(consoleHeader);
      expect(await admin.locator('.brand-sub').textContent()).toBe('admin');
      expect(await admin.locator('#session').isVisible()).toBe(true);
      await admin.screenshot({ path: path.join(ARTIFACTS, 'admin.png'), fullPage: true });
    } finally {
      await admin.close();
    }
    expect(offsite).toEqual([]);
  });
});

describe.runIf(hasChromium)('console with an embedding provider', () => {
  let provider: EmbeddingsServer;
  let h: Harness;
  let browser: Browser;

  beforeAll(async () => {
    provider = await new EmbeddingsServer({ dimensions: 16 }).start();
    h = await startHarness({
      worker: false,
      env: { EMBEDDINGS: 'openai', EMBEDDINGS_URL: provider.url, EMBEDDINGS_MODEL: 'test-embedding' },
    });
    await h.app.listen({ host: '127.0.0.1', port: 0 });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await h?.close();
    await provider?.stop();
  });

  it('offers every mode, names hybrid as the default, and labels the answer with its mode', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}/console`);
    await page.getByLabel('API key').fill(h.orgA.apiKey);
    await page.getByLabel('API key').press('Enter');
    await page.locator('#dashboard').waitFor({ state: 'visible' });
    await expect
      .poll(() => modeOptions(page))
      .toEqual([
        ['', 'Default (hybrid)', false],
        ['keyword', 'Keyword', false],
        ['semantic', 'Semantic', false],
        ['hybrid', 'Hybrid', false],
      ]);
    await page.getByLabel('Query').fill('anything at all');
    await page.getByLabel('Query').press('Enter');
    await expect
      .poll(() => page.locator('#results-summary').textContent())
      .toBe('No chunk matches that query (hybrid search).');
    await page.getByLabel('Search mode').selectOption('semantic');
    await expect
      .poll(() => page.locator('#results-summary').textContent())
      .toBe('No chunk matches that query (semantic search).');
    await page.close();
  });
});

describe.runIf(hasChromium)('console sources', () => {
  let site: LoopbackSite;
  let h: Harness;
  let browser: Browser;

  beforeAll(async () => {
    site = await startLoopbackSite({
      '/': { body: htmlPage('Console site', 'a page the console syncs', ['broken']) },
      '/broken': { status: 302, location: '/broken' },
    });
    h = await startHarness({ env: { URL_FETCH_ALLOW: '127.0.0.1' } });
    await h.app.listen({ host: '127.0.0.1', port: 0 });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await h?.close();
    await site?.close();
  });

  it('lists sources with their newest run, syncs one now and shows its runs with per-item errors', async () => {
    const created = await h.request('POST', '/v1/sources', {
      body: {
        type: 'web',
        name: 'console web source',
        schedule: 'P1D',
        config: { start_urls: [`${site.origin}/`], max_pages: 10, max_depth: 1 },
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    await page.goto(`http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}/console`);
    await page.getByLabel('API key').fill(h.orgA.apiKey);
    await page.getByLabel('API key').press('Enter');
    const row = page.locator('#sources-body tr', { hasText: 'console web source' });
    await row.waitFor();
    expect(await row.locator('td').allTextContents()).toEqual([
      `console web source${created.json().id}`,
      'web',
      'P1D',
      'never run',
      'RunsSync now',
    ]);

    await row.getByRole('button', { name: 'Sync now' }).click();
    const run = page.locator('#source-runs-list .source-run').first();
    await run.waitFor();
    // The run finishes in the background; Refresh and Runs show where it ended.
    await expect
      .poll(
        async () => {
          await page.locator('#sources-refresh').click();
          return row.locator('.badge').textContent();
        },
        { timeout: 30_000 },
      )
      .toBe('completed');
    expect(await row.locator('.source-counts').textContent()).toBe(' 1 · 0 · 0 · 0 · 1');
    await row.getByRole('button', { name: 'Runs' }).click();
    await expect
      .poll(() => page.locator('#source-runs-title').textContent())
      .toBe('Runs of console web source');
    await expect
      .poll(() => run.locator('.source-run-errors li').allTextContents())
      .toEqual([expect.stringMatching(new RegExp(`^${site.origin}/broken: too_many_redirects, `))]);
    expect(await run.locator('.source-counts').textContent()).toBe(
      'added · updated · deleted · unchanged · failed: 1 · 0 · 0 · 0 · 1',
    );
    expect(problems).toEqual([]);
    await page.close();
  });
});

describe.runIf(hasChromium)('console partition picker in a real browser', () => {
  let h: Harness;
  let browser: Browser;

  beforeAll(async () => {
    h = await startHarness();
    await h.app.listen({ host: '127.0.0.1', port: 0 });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  it('lists the partitions, restricts the documents, the search and the usage to one, and ingests into it', async () => {
    const red = await h.ingest(h.orgA, ['Red kites circle the valley.', 'Red squirrels hoard hazelnuts.'], {
      partition: 'red',
    });
    const blue = await h.ingest(h.orgA, ['A blue kite hangs over the bay.'], { partition: 'blue' });
    await h.waitForDone(h.orgA, [...red, ...blue]);

    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    await page.goto(`http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}/console`);
    await page.getByLabel('API key').fill(h.orgA.apiKey);
    await page.getByLabel('API key').press('Enter');
    await page.locator('#dashboard').waitFor({ state: 'visible' });

    const picker = page.getByLabel('Partition');
    const options = () =>
      page
        .locator('#partition-input option')
        .evaluateAll((all) => all.map((o) => [o.getAttribute('value'), o.textContent]));
    await expect.poll(options).toEqual([
      ['', 'All partitions'],
      ['blue', 'blue (1)'],
      ['red', 'red (2)'],
    ]);
    const shown = () =>
      page
        .locator('#documents-body tr')
        .evaluateAll((rows) => rows.map((row) => row.querySelector('.doc-partition')?.textContent).sort());
    await expect.poll(shown).toEqual(['blue', 'red', 'red']);

    await picker.selectOption('blue');
    await expect.poll(shown).toEqual(['blue']);
    await page.getByLabel('Query').fill('kite');
    await page.getByLabel('Query').press('Enter');
    const found = () =>
      page
        .locator('#results .result')
        .evaluateAll((items) => items.map((li) => li.getAttribute('data-document-id')));
    await expect.poll(found).toEqual(blue);
    // The usage card counts the blue partition's queries: the one just sent.
    await expect.poll(() => page.locator('#stat-total').textContent()).toBe('1');

    await picker.selectOption('red');
    await expect.poll(shown).toEqual(['red', 'red']);
    // The search runs again over the red partition.
    await expect.poll(async () => (await found()).sort()).toEqual([red[0]]);

    // Pasted text goes into the chosen partition.
    await page.getByRole('tab', { name: 'Paste text' }).click();
    await page.getByLabel('Text', { exact: true }).fill('Red deer rut in October.');
    await page.getByRole('button', { name: 'Ingest text' }).click();
    await expect.poll(shown).toEqual(['red', 'red', 'red']);
    await expect.poll(options).toContainEqual(['red', 'red (3)']);
    const listed = await h.request('GET', '/v1/documents?partitions=red', { key: h.orgA.apiKey });
    expect(listed.json().documents).toHaveLength(3);

    await picker.selectOption('');
    await expect.poll(shown).toEqual(['blue', 'red', 'red', 'red']);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('shows a document’s access list in its row and its dialog, and says so when it has none', async () => {
    const ingested = await h.request('POST', '/v1/ingest', {
      body: {
        documents: [
          { text: 'Salaries for the engineering group.', access: ['group:eng', 'user:42'] },
          { text: 'The cafeteria menu for the week.' },
        ],
      },
    });
    expect(ingested.statusCode, ingested.body).toBe(202);
    const [restricted, open] = ingested.json().document_ids as string[];
    await h.waitForDone(h.orgA, [restricted!, open!]);

    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    await page.goto(`http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}/console`);
    await page.getByLabel('API key').fill(h.orgA.apiKey);
    await page.getByLabel('API key').press('Enter');
    const row = (id: string) => page.locator('#documents-body tr', { hasText: id });
    await row(restricted!).waitFor();
    const badge = row(restricted!).locator('.doc-access');
    expect(await badge.textContent()).toBe('2 principals');
    expect(await badge.getAttribute('title')).toBe('Access list: group:eng, user:42');
    expect(await row(open!).locator('.doc-access').count()).toBe(0);

    await row(restricted!).click();
    await expect
      .poll(() => page.locator('#dialog-access').textContent())
      .toBe('Access list: group:eng, user:42. Requests acting for other principals do not see it.');
    await page.getByRole('button', { name: 'Close' }).first().click();
    await row(open!).click();
    await expect
      .poll(() => page.locator('#dialog-access').textContent())
      .toBe('No access list: every key that may see the partition default sees it.');
    expect(problems).toEqual([]);
    await page.close();
  });
});
