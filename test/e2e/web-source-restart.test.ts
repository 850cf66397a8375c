// Durability of a web source's run (embedded): SIGKILL the server while a crawl of a site on
// 127.0.0.1 is ingesting its pages, start it again, and the run finishes with every page one
// document (no duplicate external_id), counted once; the next run, after pages were added and some
// vanished, is cut off the same way and still leaves exactly the site's pages.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { htmlPage, type LoopbackSite, startLoopbackSite } from '../helpers/loopback-site.js';
import { CrashableServer } from '../helpers/source-crash.js';

const PAGES = 200;
const ADDED_LATER = 100;
const VANISHED = 50;

describe('SIGKILL during a web source run (embedded)', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'docindex-web-restart-'));
  let site: LoopbackSite;
  let server: CrashableServer | undefined;

  beforeAll(async () => {
    site = await startLoopbackSite();
  });
  afterAll(async () => {
    await server?.stop('SIGKILL');
    await site?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const pagePath = (i: number) => `/p/${String(i).padStart(4, '0')}.html`;

  it('resumes the crawl: no duplicate document, no lost deletion, each page counted once', async () => {
    const all = Array.from({ length: PAGES }, (_, i) => i);
    site.pages.set('/', { body: htmlPage('Index', 'the index', all.map(pagePath)) });
    for (const i of all)
      site.pages.set(pagePath(i), { etag: `"${i}-1"`, body: htmlPage(`Page ${i}`, `page ${i} text`) });

    server = new CrashableServer({
      DATA_DIR: dataDir,
      DEFAULT_RATE_LIMIT_RPM: '1000000',
      URL_FETCH_ALLOW: '127.0.0.1',
    });
    await server.start();
    const sourceId = await server.createSource({
      type: 'web',
      name: 'crash',
      config: { start_urls: [`${site.origin}/`], max_pages: 1000, max_depth: 1 },
    });

    const first = await server.runWithKill(sourceId, 20);
    expect(first).toMatchObject({ status: 'completed', added: PAGES + 1, updated: 0, deleted: 0, failed: 0 });

    // New pages to ingest first, vanished ones (404) to delete after them: a kill during the
    // ingests leaves the deletions to the resumed run. The rest are unchanged (304).
    const later = Array.from({ length: ADDED_LATER }, (_, i) => PAGES + i);
    for (const i of later) site.pages.set(pagePath(i), { body: htmlPage(`Page ${i}`, `new page ${i}`) });
    for (let i = 0; i < VANISHED; i++) site.pages.delete(pagePath(i));
    site.pages.set('/', {
      etag: '"index-2"',
      body: htmlPage('Index', 'the index', [...all, ...later].map(pagePath)),
    });
    const second = await server.runWithKill(sourceId, 10);
    expect(second).toMatchObject({
      status: 'completed',
      added: ADDED_LATER,
      updated: 1,
      deleted: VANISHED,
      unchanged: PAGES - VANISHED,
      failed: 0,
    });
    await server.stop();
    server = undefined;

    const expected = [
      `${sourceId}:${site.origin}/`,
      ...[...all.slice(VANISHED), ...later].map((i) => `${sourceId}:${site.origin}${pagePath(i)}`),
    ].sort();
    const stored = new CrashableServer({ DATA_DIR: dataDir }).storedOf(sourceId);
    expect(stored.externalIds).toEqual(expected);
    expect(stored.items).toBe(expected.length);
  }, 300_000);
});
