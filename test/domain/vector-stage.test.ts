// The vector stage against a real OpenAI-protocol server on 127.0.0.1 and a real SQLite database:
// documents that are ready get their vectors in the background; while the provider is stopped,
// failing, rate limiting or hanging, documents stay ready (keyword-searchable) with their vectors
// `pending` and the error recorded; once it is back, every document's vectors turn ready.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OpenAiEmbedder } from '../../src/adapters/embeddings/openai/openai-embedder.js';
import { type Database, openSqlite } from '../../src/adapters/sqlite/database.js';
import { SqliteDocumentStore } from '../../src/adapters/sqlite/document-store.js';
import { SqliteKeywordIndex } from '../../src/adapters/sqlite/keyword/index.js';
import { SqliteVectorIndex } from '../../src/adapters/sqlite/vector-index.js';
import type { Clock } from '../../src/domain/ports.js';
import { QueryEmbeddings } from '../../src/domain/query-embeddings.js';
import { VectorStage } from '../../src/domain/vector-stage.js';
import { indexedInto, query } from '../contract/document-fixtures.js';
import { waitFor } from '../contract/support.js';
import { EmbeddingsServer } from '../helpers/embeddings-server.js';

class ManualClock implements Clock {
  constructor(private t = Date.parse('2026-03-01T00:00:00Z')) {}
  now(): Date {
    return new Date(this.t);
  }
  advance(ms: number): void {
    this.t += ms;
  }
}

let dir: string;
let db: Database;
let server: EmbeddingsServer;
let embedder: OpenAiEmbedder;
let store: SqliteDocumentStore;
let keyword: SqliteKeywordIndex;
let vectors: SqliteVectorIndex;
const ORG = 'org_vectors';

beforeEach(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'docindex-stage-'));
  db = openSqlite(path.join(dir, 'docindex.db'));
  keyword = new SqliteKeywordIndex(db, {});
  store = new SqliteDocumentStore(db, { keyword: keyword });
  vectors = new SqliteVectorIndex(db);
  server = await new EmbeddingsServer({ dimensions: 32 }).start();
  embedder = new OpenAiEmbedder({
    url: server.url,
    model: 'test-embedding',
    batchSize: 16,
    concurrency: 2,
    timeoutMs: 300,
    maxRetries: 1,
    retryBaseMs: 5,
    maxRetryDelayMs: 200,
  });
});

afterEach(async () => {
  await embedder.close();
  await server.stop();
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

async function states(ids: string[]) {
  const profile = await vectors.profileId({ provider: 'openai', model: 'test-embedding', dimensions: 32 });
  const map = await vectors.vectorStates(ids, profile);
  return ids.map((id) => map.get(id)?.status ?? 'none');
}

describe('vector stage', () => {
  it('embeds every chunk of ready documents; a semantic search then finds them', async () => {
    const stage = new VectorStage(embedder, vectors, new ManualClock());
    const river = await indexedInto(store, ORG, ['the blue river water', 'a red car on the road']);
    const fruit = await indexedInto(store, ORG, ['green apple and banana fruit']);
    expect(await stage.runOnce()).toEqual({ ready: 2, pending: 0, failed: 0 });
    expect(await states([river.id, fruit.id])).toEqual(['ready', 'ready']);
    const profile = (await stage.activeProfile())!;
    expect(await vectors.countVectors(river.id, profile)).toBe(2);
    const q = await new QueryEmbeddings(embedder).vectorFor('banana fruit');
    const [best] = await vectors.search({ orgId: ORG, profileId: profile, vector: q, limit: 1 });
    expect(best).toMatchObject({ documentId: fruit.id, chunkIndex: 0 });
    expect(await stage.runOnce()).toEqual({ ready: 0, pending: 0, failed: 0 });
  });

  type Step = () => Promise<void>;
  it.each<[string, Step, Step, string]>([
    [
      'stopped',
      () => server.stop(),
      async () => {
        await server.start();
      },
      'unreachable',
    ],
    ['answering 500', async () => server.failNext(100, 500), async () => server.recover(), 'server_error'],
    ['hanging', async () => server.hang(true), async () => server.recover(), 'timeout'],
  ])(
    'provider %s: documents stay ready and keyword-searchable, vectors pending, then catch up',
    async (_name, breakIt, fixIt, code) => {
      const clock = new ManualClock();
      const stage = new VectorStage(embedder, vectors, clock);
      await stage.activeProfile();
      await breakIt();
      const docs = [
        await indexedInto(store, ORG, ['quokka habitat survey']),
        await indexedInto(store, ORG, ['another quokka note']),
      ];
      const pass = await stage.runOnce();
      expect(pass.ready).toBe(0);
      expect(pass.pending).toBeGreaterThan(0);
      expect((await keyword.search(query(ORG, 'quokka'))).length).toBe(2);
      const profile = (await stage.activeProfile())!;
      const recorded = (await vectors.vectorStates([docs[0]!.id], profile)).get(docs[0]!.id);
      expect(recorded).toMatchObject({ status: 'pending', error: { code } });
      await fixIt();
      clock.advance(30_000);
      await stage.runOnce();
      expect(await states(docs.map((d) => d.id))).toEqual(['ready', 'ready']);
    },
  );

  it('a 429 with Retry-After leaves the document pending until then (at most 30 s)', async () => {
    const clock = new ManualClock();
    const stage = new VectorStage(embedder, vectors, clock);
    await stage.activeProfile();
    const doc = await indexedInto(store, ORG, ['rate limited text']);
    server.failNext(1, 429, '20');
    expect((await stage.runOnce()).pending).toBe(1);
    clock.advance(19_000);
    expect(await vectors.dueDocuments((await stage.activeProfile())!, clock.now(), 10)).toEqual([]);
    clock.advance(1_000);
    expect((await stage.runOnce()).ready).toBe(1);
    expect(await states([doc.id])).toEqual(['ready']);
  });

  it('a refused request fails the document; a restart of the stage retries it', async () => {
    const stage = new VectorStage(embedder, vectors, new ManualClock(), { pollMs: 20 });
    await stage.activeProfile();
    const doc = await indexedInto(store, ORG, ['refused text']);
    server.failNext(1, 400);
    expect((await stage.runOnce()).failed).toBe(1);
    expect(await states([doc.id])).toEqual(['failed']);
    stage.start();
    try {
      await waitFor(
        'the failed document to be retried',
        async () => (await states([doc.id]))[0] === 'ready',
        10_000,
      );
    } finally {
      await stage.stop();
    }
  });

  it('running in the background, it catches up once a stopped provider is back', async () => {
    const stage = new VectorStage(
      embedder,
      vectors,
      { now: () => new Date() },
      { pollMs: 20, minBackoffMs: 20, maxBackoffMs: 100 },
    );
    await server.stop();
    stage.start();
    try {
      const docs: Array<{ id: string }> = [];
      for (let i = 0; i < 5; i++) docs.push(await indexedInto(store, ORG, [`document ${i} about rivers`]));
      expect((await keyword.search(query(ORG, 'rivers'))).length).toBe(5);
      await server.start();
      await waitFor(
        "every document's vectors",
        async () => (await states(docs.map((d) => d.id))).every((s) => s === 'ready'),
        15_000,
        20,
      );
    } finally {
      await stage.stop();
    }
  });
});
