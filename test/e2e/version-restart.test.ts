// Durability of version swaps (embedded): 120 documents with external ids, four of them large
// enough to be written in slices, are all re-ingested as version 2 while the server is killed with
// SIGKILL twice at random moments. Afterwards every document answers as version 2 only (the old
// text matches nothing, the new text matches), no (document_id, chunk_index) exists twice, each
// document's chunk_count is its number of chunks, and no shadow row is left.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { type ServerProcess, startServer, stopServer } from '../helpers/process.js';
import { syntheticDocument } from '../helpers/texts.js';

const DOCS = 120;
const LARGE = 4;
const KILLS = 2;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Version `v` of document `i`: a marker word per version, large for the first LARGE documents. */
const textOf = (i: number, v: number) => {
  const body = `${v === 1 ? 'oldmarker' : 'newmarker'} ${syntheticDocument(i)}`;
  return i < LARGE ? `${body}\n\n`.repeat(120) : body;
};

describe('SIGKILL during version swaps (embedded)', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'docindex-version-restart-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('leaves exactly one version answering, nothing lost and no duplicate chunk', async () => {
    const env = { DATA_DIR: dataDir, WORKER_CONCURRENCY: '2', DEFAULT_RATE_LIMIT_RPM: '1000000' };
    let server: ServerProcess = await startServer(['serve'], env);
    const key = /api_key: (\S+)/.exec(server.stdout())![1]!;
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    let restarting: Promise<void> = Promise.resolve();
    const run = randomUUID();
    const call = async (method: string, url: string, body?: unknown, key?: string): Promise<Response> => {
      for (;;) {
        await restarting;
        try {
          return await fetch(`${server.baseUrl}${url}`, {
            method,
            headers: key === undefined ? headers : { ...headers, 'idempotency-key': key },
            ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          });
        } catch {
          // Killed mid-request: ask again once it is back.
          await sleep(50);
        }
      }
    };
    const ingest = async (version: number) => {
      const ids: string[] = [];
      for (let first = 0; first < DOCS; first += 20) {
        const documents = Array.from({ length: 20 }, (_, k) => ({
          text: textOf(first + k, version),
          external_id: `doc-${first + k}`,
        }));
        // A batch whose answer a kill cut off is sent again with its key: replayed, not a version 3.
        const res = await call(
          'POST',
          '/v1/ingest',
          { documents, chunk_size: 128, chunk_overlap: 16 },
          `${run}-v${version}-${first}`,
        );
        expect(res.status).toBe(202);
        ids.push(...((await res.json()) as { document_ids: string[] }).document_ids);
      }
      return ids;
    };
    const records = async (ids: string[]) => {
      const found: { id: string; status: string; version: number; pending_version: unknown }[] = [];
      for (let i = 0; i < ids.length; i += 100) {
        const res = await call('GET', `/v1/documents?limit=100&ids=${ids.slice(i, i + 100).join(',')}`);
        found.push(...((await res.json()) as { documents: typeof found }).documents);
      }
      return found;
    };
    const waitUntil = async (
      ids: string[],
      done: (doc: Awaited<ReturnType<typeof records>>[number]) => boolean,
    ) => {
      const deadline = Date.now() + 240_000;
      while (Date.now() < deadline) {
        const docs = await records(ids);
        if (docs.length === ids.length && docs.every(done)) return docs;
        await sleep(200);
      }
      throw new Error('documents did not finish in time');
    };

    try {
      const ids = await ingest(1);
      await waitUntil(ids, (d) => d.status === 'ready');

      const killer = (async () => {
        for (let k = 0; k < KILLS; k++) {
          await sleep(200 + Math.floor(Math.random() * 800));
          let release!: () => void;
          restarting = new Promise((resolve) => {
            release = resolve;
          });
          await stopServer(server, 'SIGKILL');
          server = await startServer(['serve'], env);
          release();
        }
      })();
      const again = await ingest(2);
      await killer;
      expect(again).toEqual(ids);
      const docs = await waitUntil(
        ids,
        (d) => d.version === 2 && d.pending_version === null && d.status === 'ready',
      );
      expect(docs.every((d) => d.version === 2)).toBe(true);

      // One query per document: a large document's chunks would fill a shared top_k.
      const found = async (query: string) => {
        const hits = new Set<string>();
        for (const id of ids) {
          const res = await call('POST', '/v1/query', { query, top_k: 1, document_ids: [id] });
          if (((await res.json()) as { results: unknown[] }).results.length > 0) hits.add(id);
        }
        return hits;
      };
      expect((await found('oldmarker')).size).toBe(0);
      expect((await found('newmarker')).size).toBe(DOCS);
    } finally {
      await stopServer(server);
    }

    const db = new Database(path.join(dataDir, 'docindex.db'), { readonly: true });
    const count = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
    const duplicates = count(
      'SELECT count(*) AS n FROM (SELECT document_id, chunk_index FROM chunks GROUP BY 1, 2 HAVING count(*) > 1)',
    );
    const mismatched = count(
      `SELECT count(*) AS n FROM documents d WHERE d.org_id NOT LIKE 'shadow:%' AND d.org_id <> ''
         AND d.chunk_count != (SELECT count(*) FROM chunks c WHERE c.document_id = d.id)`,
    );
    const live = count(`SELECT count(*) AS n FROM documents WHERE org_id LIKE 'org_%'`);
    const shadows = count(`SELECT count(*) AS n FROM documents WHERE org_id LIKE 'shadow:%'`);
    db.close();
    console.log(
      `version swap crash test (embedded, ${KILLS} × SIGKILL): documents ${live}, duplicate chunks ${duplicates}, ` +
        `chunk counts off ${mismatched}, shadow rows left ${shadows}`,
    );
    expect(live).toBe(DOCS);
    expect(duplicates).toBe(0);
    expect(mismatched).toBe(0);
    expect(shadows).toBe(0);
  });
});
