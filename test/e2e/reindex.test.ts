// `docindex reindex`, run as a user runs it: an index an earlier release wrote without stemming
// (one analysis for every document) is rewritten in each document's language, told from its text,
// while the server keeps answering queries and accepting documents.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, type ServerProcess, startServer, stopServer } from '../helpers/process.js';

const DOCS = 200;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('docindex reindex', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'docindex-reindex-'));
  // A failed assertion must not leave a server running (stopServer is a no-op once stopped).
  let running: ServerProcess | null = null;
  afterAll(async () => {
    if (running) await stopServer(running);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('rewrites the index online: queries and ingests keep working, then stemmed words match', async () => {
    const env = { DATA_DIR: dataDir, DEFAULT_RATE_LIMIT_RPM: '1000000' };
    let server = await startServer(['serve'], { ...env, SEARCH_LANGUAGE: 'none' });
    running = server;
    const key = /api_key: (\S+)/.exec(server.stdout())![1]!;
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const post = async (pathname: string, body: unknown) =>
      fetch(`${server.baseUrl}${pathname}`, { method: 'POST', headers, body: JSON.stringify(body) });
    /** How many chunks a query finds (top_k 100), optionally within some documents. */
    const hits = async (query: string, documentIds?: string[]) => {
      const res = await post('/v1/query', { query, top_k: 100, document_ids: documentIds });
      expect(res.status).toBe(200);
      return ((await res.json()) as { results: unknown[] }).results.length;
    };
    const waitReady = async (ids: string[]) => {
      for (let i = 0; i < ids.length; i += 100) {
        const batch = ids.slice(i, i + 100);
        for (;;) {
          const res = await fetch(`${server.baseUrl}/v1/documents?ids=${batch.join(',')}&limit=100`, {
            headers,
          });
          const docs = ((await res.json()) as { documents: { status: string }[] }).documents;
          expect(docs.some((d) => d.status === 'failed')).toBe(false);
          if (docs.length === batch.length && docs.every((d) => d.status === 'ready')) break;
          await sleep(100);
        }
      }
    };
    const ingest = async (texts: string[]) => {
      const res = await post('/v1/ingest', {
        documents: texts.map((text) => ({ text })),
        chunk_size: 128,
        chunk_overlap: 0,
      });
      expect(res.status, await res.clone().text()).toBe(202);
      return ((await res.json()) as { document_ids: string[] }).document_ids;
    };

    const text = (i: number) =>
      Array.from(
        { length: 60 },
        (_, j) => `Runner ${i} kept running lap ${j} while the crowd was cheering.`,
      ).join(' ');
    const first: string[] = [];
    for (let i = 0; i < DOCS; i += 50) {
      first.push(...(await ingest(Array.from({ length: 50 }, (_, j) => text(i + j)))));
    }
    await waitReady(first);
    expect(await hits('running')).toBe(100);
    expect(await hits('runs')).toBe(0);
    await stopServer(server);
    // What an earlier release left: every chunk in one analysis, no document languages.
    const db = new Database(path.join(dataDir, 'docindex.db'));
    db.exec(`UPDATE search_analysis SET written = 'none';
      UPDATE documents SET language = NULL; DELETE FROM search_languages;`);
    db.close();

    server = await startServer(['serve'], env);
    running = server;
    // Written without stemming, read with it: until the rewrite, a query looks for both forms.
    expect(await hits('running')).toBe(100);
    expect(await hits('runs')).toBe(0);

    const reindex = runCli(['reindex'], env);
    let finished = false;
    void reindex.then(() => {
      finished = true;
    });
    const during: string[] = [];
    let queries = 0;
    while (!finished) {
      expect(await hits('running')).toBe(100);
      queries++;
      if (queries % 10 === 0) during.push(...(await ingest([`late runner ${queries} running`])));
    }
    const result = await reindex;
    expect(queries).toBeGreaterThan(0);
    expect(result.status, result.stderr).toBe(0);
    const rewritten = Number(/: (\d+) chunks/.exec(result.stdout)?.[1]);
    expect(result.stdout).toMatch(/rewritten from the analysis 'none' to 'languages'/);
    expect(rewritten).toBeGreaterThan(1000);
    await waitReady(during);

    // Every form of the word now finds every document, those written during the rewrite included.
    for (const id of [...first.slice(0, 10), ...during])
      expect(await hits('runs', [id]), id).toBeGreaterThan(0);
    expect(await hits('cheers')).toBe(100);
    await stopServer(server);

    const again = await runCli(['reindex'], env);
    expect(again.status).toBe(0);
    expect(again.stdout).toMatch(/already written with the analysis 'languages'; nothing to rewrite/);
  });
});
