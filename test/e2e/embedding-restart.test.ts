// Durability of the vector stage (embedded): SIGKILL the server twice while documents' vectors
// are being made by a slow provider (a real OpenAI-protocol server on 127.0.0.1). Afterwards every
// document is ready, every one's vectors are ready, and each has exactly one vector per chunk: a
// kill in the middle of a batch loses nothing and duplicates nothing.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { EmbeddingsServer } from '../helpers/embeddings-server.js';
import { type ServerProcess, startServer, stopServer } from '../helpers/process.js';
import { syntheticDocument } from '../helpers/texts.js';

const DOCS = 120;
const KILLS = 2;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('SIGKILL while vectors are being made (embedded)', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'docindex-embed-restart-'));
  // Slow enough that the kills land while batches are in flight.
  const provider = new EmbeddingsServer({ dimensions: 16, delayMs: 150 });
  afterAll(async () => {
    await provider.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('loses no vector and duplicates none', async () => {
    await provider.start();
    const env = {
      DATA_DIR: dataDir,
      DEFAULT_RATE_LIMIT_RPM: '1000000',
      EMBEDDINGS: 'openai',
      EMBEDDINGS_URL: provider.url,
      EMBEDDINGS_MODEL: 'test-embedding',
      EMBEDDINGS_BATCH_SIZE: '16',
    };
    let server: ServerProcess = await startServer(['serve'], env);
    const key = /api_key: (\S+)/.exec(server.stdout())![1]!;
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const ids: string[] = [];
    for (let first = 0; first < DOCS; first += 40) {
      const res = await fetch(`${server.baseUrl}/v1/ingest`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          documents: Array.from({ length: 40 }, (_, i) => ({ text: syntheticDocument(first + i) })),
          chunk_size: 128,
          chunk_overlap: 16,
        }),
      });
      expect(res.status).toBe(202);
      ids.push(...((await res.json()) as { document_ids: string[] }).document_ids);
    }

    const vectorStatuses = async () => {
      const out: string[] = [];
      for (let i = 0; i < ids.length; i += 100) {
        const res = await fetch(
          `${server.baseUrl}/v1/documents?limit=100&ids=${ids.slice(i, i + 100).join(',')}`,
          {
            headers,
          },
        );
        const body = (await res.json()) as { documents: { status: string; vectors: { status: string } }[] };
        for (const doc of body.documents) out.push(doc.status === 'ready' ? doc.vectors.status : doc.status);
      }
      return out;
    };

    let kills = 0;
    try {
      for (let k = 0; k < KILLS; k++) {
        // Wait for the provider to be asked for more vectors, then kill mid-batch.
        const asked = provider.requests.length;
        const deadline = Date.now() + 60_000;
        while (provider.requests.length < asked + 2 && Date.now() < deadline) await sleep(20);
        await sleep(Math.floor(Math.random() * 150));
        await stopServer(server, 'SIGKILL');
        kills += 1;
        server = await startServer(['serve'], env);
      }
      const deadline = Date.now() + 180_000;
      let statuses = await vectorStatuses();
      while (!(statuses.length === DOCS && statuses.every((s) => s === 'ready')) && Date.now() < deadline) {
        await sleep(200);
        statuses = await vectorStatuses();
      }
      expect(statuses.filter((s) => s === 'ready')).toHaveLength(DOCS);
    } finally {
      await stopServer(server);
    }

    const db = new Database(path.join(dataDir, 'docindex.db'), { readonly: true });
    const missing = (
      db
        .prepare(
          `SELECT count(*) AS n FROM chunks c JOIN documents d ON d.id = c.document_id AND d.status = 'ready'
           WHERE NOT EXISTS (SELECT 1 FROM chunk_vectors v WHERE v.document_id = c.document_id AND v.chunk_index = c.chunk_index)`,
        )
        .get() as { n: number }
    ).n;
    const extra = (
      db
        .prepare(
          `SELECT count(*) AS n FROM chunk_vectors v
           WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.document_id = v.document_id AND c.chunk_index = v.chunk_index)`,
        )
        .get() as { n: number }
    ).n;
    const chunks = (db.prepare('SELECT count(*) AS n FROM chunks').get() as { n: number }).n;
    const vectors = (db.prepare('SELECT count(*) AS n FROM chunk_vectors').get() as { n: number }).n;
    db.close();
    console.log(
      `vector crash test (embedded, ${kills} × SIGKILL): documents ${DOCS}, chunks ${chunks}, vectors ${vectors}, ` +
        `chunks without a vector ${missing}, vectors without a chunk ${extra}, provider requests ${provider.requests.length}`,
    );
    expect(kills).toBe(KILLS);
    expect(missing).toBe(0);
    expect(extra).toBe(0);
    // One profile: one vector per chunk, never two.
    expect(vectors).toBe(chunks);
  }, 300_000);
});
