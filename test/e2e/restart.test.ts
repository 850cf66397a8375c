// Durability (embedded): SIGKILL the server three times at random moments while 1,000 documents
// are being posted and processed. Afterwards every accepted document is `ready` with the chunk
// count of a clean run, and no (document_id, chunk_index) exists twice. Each batch carries an
// Idempotency-Key, so a batch whose answer was lost in a kill is retried without duplicates.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { chunkText } from '../../src/pipeline/chunk/chunker.js';
import { type ServerProcess, startServer, stopServer } from '../helpers/process.js';
import { syntheticDocument } from '../helpers/texts.js';

const DOCS = 1_000;
const BATCH = 50;
const KILLS = 3;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('SIGKILL during ingest (embedded)', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'docindex-restart-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('loses no accepted document and duplicates no chunk', async () => {
    const env = { DATA_DIR: dataDir, WORKER_CONCURRENCY: '2', DEFAULT_RATE_LIMIT_RPM: '1000000' };
    let server: ServerProcess = await startServer(['serve'], env);
    const key = /api_key: (\S+)/.exec(server.stdout())![1]!;
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const texts = Array.from({ length: DOCS }, (_, i) => syntheticDocument(i));
    const accepted = new Map<string, number>(); // document id → text index
    let restarting: Promise<void> = Promise.resolve();

    const post = async (first: number) => {
      const body = JSON.stringify({
        documents: texts.slice(first, first + BATCH).map((text) => ({ text })),
        chunk_size: 128,
        chunk_overlap: 16,
      });
      const idempotencyKey = randomUUID();
      for (;;) {
        await restarting;
        try {
          const res = await fetch(`${server.baseUrl}/v1/ingest`, {
            method: 'POST',
            headers: { ...headers, 'idempotency-key': idempotencyKey },
            body,
          });
          if (res.status === 202) {
            const ids = ((await res.json()) as { document_ids: string[] }).document_ids;
            for (const [i, id] of ids.entries()) accepted.set(id, first + i);
            return;
          }
        } catch {
          // The server was killed mid-request: retry once it is back.
        }
        await sleep(50);
      }
    };

    const poster = (async () => {
      for (let first = 0; first < DOCS; first += BATCH) await post(first);
    })();
    const killer = (async () => {
      for (let k = 0; k < KILLS; k++) {
        await sleep(300 + Math.floor(Math.random() * 700));
        let release!: () => void;
        restarting = new Promise((resolve) => {
          release = resolve;
        });
        await stopServer(server, 'SIGKILL');
        server = await startServer(['serve'], env);
        release();
      }
    })();
    await Promise.all([poster, killer]);

    const ids = [...accepted.keys()];
    expect(ids).toHaveLength(DOCS);
    const done = new Map<string, { status: string; chunk_count: number }>();
    try {
      const deadline = Date.now() + 180_000;
      while (Date.now() < deadline) {
        done.clear();
        for (let i = 0; i < ids.length; i += 100) {
          const res = await fetch(
            `${server.baseUrl}/v1/documents?limit=100&ids=${ids.slice(i, i + 100).join(',')}`,
            {
              headers,
            },
          );
          const body = (await res.json()) as {
            documents: { id: string; status: string; chunk_count: number }[];
          };
          for (const doc of body.documents) done.set(doc.id, doc);
        }
        if (
          done.size === ids.length &&
          [...done.values()].every((d) => d.status === 'ready' || d.status === 'failed')
        )
          break;
        await sleep(200);
      }
    } finally {
      await stopServer(server);
    }

    const db = new Database(path.join(dataDir, 'docindex.db'), { readonly: true });
    const duplicates = (
      db
        .prepare(
          'SELECT count(*) AS n FROM (SELECT document_id, chunk_index FROM chunks GROUP BY 1, 2 HAVING count(*) > 1)',
        )
        .get() as { n: number }
    ).n;
    const mismatched = (
      db
        .prepare(
          'SELECT count(*) AS n FROM documents d WHERE d.chunk_count != (SELECT count(*) FROM chunks c WHERE c.document_id = d.id)',
        )
        .get() as { n: number }
    ).n;
    const totalRows = (db.prepare('SELECT count(*) AS n FROM documents').get() as { n: number }).n;
    db.close();

    const statuses = [...done.values()].map((d) => d.status);
    const ready = statuses.filter((s) => s === 'ready').length;
    const failed = statuses.filter((s) => s === 'failed').length;
    console.log(
      `crash test (embedded, ${KILLS} × SIGKILL): accepted ${ids.length}, ready ${ready}, failed ${failed}, ` +
        `duplicate chunks ${duplicates}, document rows ${totalRows}`,
    );
    expect(ready).toBe(DOCS);
    for (const [id, index] of accepted) {
      const expected = chunkText(texts[index]!, { chunkSize: 128, chunkOverlap: 16 }).chunks.length;
      expect(done.get(id)?.chunk_count).toBe(expected);
    }
    expect(duplicates).toBe(0);
    expect(mismatched).toBe(0);
    // Idempotency-Keys: a batch retried after a kill did not create a second set of documents.
    expect(totalRows).toBe(DOCS);
  }, 300_000);
});
