// Runs the port contracts against the PostgreSQL adapters (stores, PgTableQueue, PgRateLimiter,
// PgBlobStore; search, filters and versions are in postgres-search.test.ts), each test in a schema
// of its own that is dropped afterwards; plus what only PostgreSQL has: concurrent migrations, the
// full-text index layout, and an unreachable server answering 503.
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it, onTestFailed } from 'vitest';
import { PgBlobStore } from '../../src/adapters/postgres/blob-store.js';
import { PgDatabase } from '../../src/adapters/postgres/database.js';
import { PgDocumentStore } from '../../src/adapters/postgres/document-store.js';
import { PgEvaluationQueue, PgEvaluationStore } from '../../src/adapters/postgres/evaluation-store.js';
import { PgIdempotencyStore } from '../../src/adapters/postgres/idempotency-store.js';
import { PgKeywordIndex } from '../../src/adapters/postgres/keyword/index.js';
import { migratePostgres, PG_SCHEMA_VERSIONS } from '../../src/adapters/postgres/migrations.js';
import { PgOrgStore } from '../../src/adapters/postgres/org-store.js';
import { PgRateLimiter } from '../../src/adapters/postgres/rate-limiter.js';
import { PgSourceRunRows, PgSourceStore } from '../../src/adapters/postgres/source-store.js';
import { PgTableQueue } from '../../src/adapters/postgres/table-queue.js';
import { PgUsageStore } from '../../src/adapters/postgres/usage-store.js';
import { PgWebhookOutbox, PgWebhookStore } from '../../src/adapters/postgres/webhook-store.js';
import { ApiError } from '../../src/domain/errors.js';
import { reindexSearch } from '../../src/domain/reindex.js';
import { describeScaleOut, dropSchema, freshSchema, REQUIRED } from '../scale-out/services.js';
import { blobStoreContract } from './blob-store.contract.js';
import { addWebhookEndpoint, indexedInto, indexResult, newDoc, query } from './document-fixtures.js';
import { documentStoreContract } from './document-store.contract.js';
import { evaluationStoreContract } from './evaluation-store.contract.js';
import { idempotencyStoreContract } from './idempotency-store.contract.js';
import { jobDocument, jobVersion } from './job-document.js';
import { jobQueueContract } from './job-queue.contract.js';
import { orgStoreContract } from './org-store.contract.js';
import { freshDatabase, rum, services, stores, url } from './postgres-support.js';
import { rateLimiterContract } from './rate-limiter.contract.js';
import { sourceStoreContract } from './source-store.contract.js';
import { tableQueueLanesContract } from './table-queue-lanes.contract.js';
import { usageStoreContract } from './usage-store.contract.js';
import { webhookStoreContract } from './webhook-store.contract.js';

describeScaleOut('PostgreSQL adapters', services, () => {
  orgStoreContract('PgOrgStore', async () => {
    const { db, close } = await freshDatabase();
    return { store: new PgOrgStore(db), close };
  });

  documentStoreContract('PgDocumentStore', stores);

  idempotencyStoreContract('PgIdempotencyStore', async () => {
    const { db, close } = await freshDatabase();
    return {
      store: new PgIdempotencyStore(db),
      documents: new PgDocumentStore(db, undefined, { keyword: new PgKeywordIndex(db) }),
      close,
    };
  });

  webhookStoreContract('PgWebhookStore', async () => {
    const { db, close } = await freshDatabase();
    // "Another process": a second pool on the same schema.
    const second = new PgDatabase({ connectionString: url, schema: db.schema, maxConnections: 3 });
    return {
      store: new PgWebhookStore(db),
      documents: new PgDocumentStore(db, undefined, { keyword: new PgKeywordIndex(db) }),
      other: new PgWebhookStore(second),
      documentsBounded: (maxPending) =>
        new PgDocumentStore(db, undefined, {
          keyword: new PgKeywordIndex(db),
          outbox: new PgWebhookOutbox(db, { maxPending }),
        }),
      async close() {
        await second.close();
        await close();
      },
    };
  });

  evaluationStoreContract('PgEvaluationStore', async () => {
    const { db, close } = await freshDatabase();
    return {
      store: new PgEvaluationStore(db),
      queue: (opts) => new PgEvaluationQueue(db, { ...opts, pollMs: 20 }),
      close,
    };
  });

  sourceStoreContract('PgSourceStore', async () => {
    const { db, close } = await freshDatabase();
    const webhooks = new PgWebhookStore(db);
    return {
      store: new PgSourceStore(db),
      runs: new PgSourceRunRows(db),
      async addEndpoint(orgId, events) {
        const id = await addWebhookEndpoint(webhooks, orgId, events);
        return async () =>
          (
            await db.query<{ type: string; payload: unknown }>(
              `SELECT event_type AS type, payload FROM ${db.table('webhook_messages')} WHERE endpoint_id = $1 ORDER BY created_at`,
              [id],
            )
          ).rows;
      },
      close,
    };
  });

  usageStoreContract('PgUsageStore', async () => {
    const { db, close } = await freshDatabase();
    return { store: new PgUsageStore(db), close };
  });

  jobQueueContract('PgTableQueue', async (opts) => {
    const { db, close } = await freshDatabase();
    const documents = new PgDocumentStore(db, undefined, { keyword: new PgKeywordIndex(db) });
    const queue = new PgTableQueue(db, {
      leaseMs: opts.leaseMs,
      maxAttempts: opts.maxAttempts,
      backoffBaseMs: opts.backoffBaseMs,
      graceMs: opts.graceMs,
      pollMs: 20,
    });
    return {
      queue,
      addJobs: async (refs) => {
        await documents.createDocuments(refs.map(jobDocument));
      },
      startVersion: async (ref) => {
        await documents.startVersion(ref.orgId, ref.documentId, jobVersion());
      },
      // A consumer of another host that claims and then vanishes: no heartbeat, no outcome.
      claimAndAbandon: async () =>
        (await queue.rows.claim('vanished-host/4242/deadbeef/1', queue.leaseMs))?.id ?? null,
      async close() {
        await queue.close();
        await close();
      },
    };
  });

  tableQueueLanesContract('PgTableQueue lanes', async () => {
    const { db, close } = await freshDatabase();
    return {
      store: new PgDocumentStore(db, undefined, { keyword: new PgKeywordIndex(db) }),
      downloads: new PgTableQueue(db, { lane: 'download' }).rows,
      processing: new PgTableQueue(db, { lane: 'process' }).rows,
      close,
    };
  });

  rateLimiterContract('PgRateLimiter', async ({ windowSeconds }) => {
    const { db, close } = await freshDatabase();
    const limiter = new PgRateLimiter(db, { windowSeconds });
    return {
      limiter,
      async close() {
        await limiter.close();
        await close();
      },
    };
  });

  // Default chunk rows of 1 MiB, and small ones so that every test crosses many row boundaries.
  for (const [label, chunkBytes] of [
    ['1 MiB chunks', undefined],
    ['64 KiB chunks', 64 * 1024],
  ] as const) {
    blobStoreContract(`PgBlobStore (${label})`, async () => {
      const { db, close } = await freshDatabase();
      return {
        store: new PgBlobStore(db, { chunkBytes }),
        // One entry per blob row, complete or not (chunk rows cannot outlive theirs: a foreign key).
        async listAll() {
          const { rows } = await db.query<{ key: string; complete: boolean }>(
            `SELECT key, complete FROM ${db.table('blobs')} ORDER BY key`,
          );
          return rows.map((r) => (r.complete ? r.key : `${r.key} (incomplete)`));
        },
        close,
      };
    });
  }

  describe('PostgreSQL specifics', () => {
    const cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0)) await cleanup();
    });

    it('migrates once when several processes start at the same time', async () => {
      const schema = freshSchema();
      const dbs = Array.from(
        { length: 4 },
        () => new PgDatabase({ connectionString: url, schema, maxConnections: 2 }),
      );
      cleanups.push(async () => {
        await Promise.all(dbs.map((db) => db.close()));
        await dropSchema(url, schema);
      });
      const results = await Promise.all(dbs.map((db) => migratePostgres(db)));
      const versions = [...PG_SCHEMA_VERSIONS];
      expect(results.flatMap((r) => r.applied)).toEqual(versions);
      const { rows } = await dbs[0]!.query<{ version: number }>(
        `SELECT version FROM ${dbs[0]!.table('schema_migrations')} ORDER BY version`,
      );
      expect(rows.map((r) => r.version)).toEqual(versions);
      expect((await migratePostgres(dbs[1]!)).applied).toEqual([]);
    });

    it('restricts a search to one org inside the full-text index itself', async () => {
      const { db, close } = await freshDatabase();
      cleanups.push(close);
      const { rows } = await db.query<{ indexdef: string }>(
        `SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = 'chunks'`,
        [db.schema],
      );
      const defs = rows.map((r) => r.indexdef).join('\n');
      const btreeGin = await db.query(`SELECT 1 FROM pg_extension WHERE extname = 'btree_gin'`);
      if (!btreeGin.rowCount) {
        // Fallback layout when the extension cannot be installed: words and org in two indexes.
        expect(defs).toMatch(/USING gin \(tsv\)/);
        expect(defs).toMatch(/chunks_org ON .* \(org_id\)/);
        return;
      }
      expect(defs).toMatch(/USING gin \(org_id, tsv\)/);
      const plan = await db.transaction(async (tx) => {
        await tx.query('SET LOCAL enable_seqscan = off');
        return tx.query<{ 'QUERY PLAN': string }>(
          `EXPLAIN SELECT 1 FROM ${db.table('chunks')} WHERE org_id = 'o' AND tsv @@ 'x'::tsquery`,
        );
      });
      const text = plan.rows.map((r) => r['QUERY PLAN']).join('\n');
      expect(text).toMatch(/Bitmap Index Scan on chunks_org_tsv/);
      expect(text).toMatch(/Index Cond: \(\(org_id = 'o'::text\) AND \(tsv @@ '''x'''::tsquery\)\)/);
    });

    it.skipIf(!rum && !REQUIRED)(
      'moves keyword search of chunks written before RUM onto it with docindex reindex, online',
      async () => {
        // A database that had chunks before migration 60 (or before the rum package was installed):
        // no RUM index, and older chunks without terms.
        const { db, close } = await freshDatabase({ rum: false });
        cleanups.push(close);
        const gin = new PgKeywordIndex(db, { rum: false });
        const store = new PgDocumentStore(db, undefined, { keyword: gin });
        const org = `org_${crypto.randomUUID()}`;
        const texts = [
          'the otter swims in the cold river',
          'otter otter: an otter survey of the river banks',
          'a heron waits by the river',
          ...Array.from({ length: 12 }, (_, i) => `unrelated filler chunk number ${i}`),
        ];
        await indexedInto(store, org, texts);
        await indexedInto(store, org, ['river otter habitat', 'nothing here']);
        await db.query(`UPDATE ${db.table('chunks')} SET terms = NULL`);
        const queries = ['otter river', 'heron', 'river', 'otter habitat banks'];
        const before = await Promise.all(queries.map((q) => gin.search(query(org, q))));
        expect(before[0]?.length).toBeGreaterThan(0);

        const rum = new PgKeywordIndex(db);
        expect((await rum.analysisState()).reindexNeeded).toBe(true);
        // Until the reindex ends, search stays on GIN and finds everything.
        expect(await rum.search(query(org, 'otter river'))).toEqual(before[0]);
        const report = await reindexSearch(rum, { batchSize: 4, pause: async () => {} });
        expect(report.done).toBe(true);
        expect(report.rewritten).toBe(texts.length + 2);
        expect((await rum.analysisState()).reindexNeeded).toBe(false);
        const { rows } = await db.query<{ valid: boolean }>(
          `SELECT indisvalid AS valid FROM pg_index WHERE indexrelid = to_regclass($1)`,
          [`${db.quotedSchema}.chunks_terms_rum`],
        );
        expect(rows).toEqual([{ valid: true }]);
        const plan = await db.transaction(async (tx) => {
          await tx.query('SET LOCAL enable_seqscan = off');
          return tx.query<{ 'QUERY PLAN': string }>(
            `EXPLAIN SELECT 1 FROM ${db.table('chunks')} WHERE terms @@ '1_otter'::tsquery
           ORDER BY terms <=> '1_otter'::tsquery LIMIT 5`,
          );
        });
        expect(plan.rows.map((r) => r['QUERY PLAN']).join('\n')).toMatch(/Index Scan using chunks_terms_rum/);
        // Same hits in the same order, every word here having fewer matches than a word may bring;
        // the same hits in full too, but for one-word queries, whose count GIN skips (the order is
        // the same whatever it is) where RUM has it and ranks as embedded: their raw BM25 differs,
        // their scores do not (a lone word's IDF is both BM25's factor and its ceiling's).
        const after = await Promise.all(queries.map((q) => new PgKeywordIndex(db).search(query(org, q))));
        const keys = (hits: { documentId: string; chunkIndex: number }[] | undefined) =>
          hits?.map((h) => `${h.documentId}/${h.chunkIndex}`);
        expect(after.map(keys)).toEqual(before.map(keys));
        expect([after[0], after[3]]).toEqual([before[0], before[3]]);
        for (const [i, hits] of after.entries())
          for (const [j, hit] of hits.entries()) expect(hit.score).toBeCloseTo(before[i]![j]!.score, 12);
        // Chunks written from now on are found through RUM too, and only in their own org.
        await indexedInto(store, org, ['a kingfisher over the river']);
        await indexedInto(store, `org_${crypto.randomUUID()}`, ['another kingfisher elsewhere']);
        const hits = await new PgKeywordIndex(db).search(query(org, 'kingfisher'));
        expect(hits.map((h) => h.text)).toEqual(['a kingfisher over the river']);
      },
    );

    it.skipIf(!rum && !REQUIRED)(
      'finds an org whose first write was rolled back once it writes again',
      async () => {
        const { db, close } = await freshDatabase();
        cleanups.push(close);
        const index = new PgKeywordIndex(db);
        const store = new PgDocumentStore(db, undefined, { keyword: index });
        const org = `org_${crypto.randomUUID()}`;
        const doc = newDoc(org);
        await store.createDocuments([doc]);
        // The org's terms key is made inside this transaction, which then fails.
        await expect(
          db.transaction(async (tx) => {
            await index.writeChunks(doc.id, org, indexResult(['a lone walrus']).chunks, tx);
            await index.writeChunks(doc.id, org, indexResult(['', 'a second walrus']).chunks.slice(1), tx);
            throw new Error('rolled back');
          }),
        ).rejects.toThrow('rolled back');
        // Another org takes the next key meanwhile.
        await indexedInto(store, `org_${crypto.randomUUID()}`, ['a walrus elsewhere']);
        expect(await store.saveIndex(doc.id, indexResult(['a lone walrus', 'a second walrus']))).toBe(true);
        // Another process, which knows only the committed key.
        const hits = await new PgKeywordIndex(db).search(query(org, 'walrus'));
        expect(hits.map((h) => h.text).sort()).toEqual(['a lone walrus', 'a second walrus']);
      },
    );

    it('stores the job columns as done when BullMQ runs the jobs', async () => {
      const { db, close } = await freshDatabase();
      cleanups.push(close);
      const store = new PgDocumentStore(db, undefined, {
        keyword: new PgKeywordIndex(db),
        tableQueue: false,
      });
      const queue = new PgTableQueue(db);
      const ref = { documentId: crypto.randomUUID(), orgId: 'org_x' };
      await store.createDocuments([jobDocument(ref)]);
      expect(await queue.has(ref.documentId)).toBe(false);
      // Dropping Redis later: the reconciler's enqueue turns the row into a pending job.
      await queue.enqueue([ref]);
      expect(await queue.has(ref.documentId)).toBe(true);
    });

    it('removes a document deleted during its index write: by the write, or by finishDeletes when the writer died', async () => {
      const { db, close } = await freshDatabase();
      cleanups.push(close);
      const store = new PgDocumentStore(db, undefined, { keyword: new PgKeywordIndex(db) });
      const rowsOf = async (id: string) => {
        const { rows } = await db.query<{ docs: number; chunks: number }>(
          `SELECT (SELECT count(*) FROM ${db.table('documents')} WHERE id = $1)::int AS docs,
                  (SELECT count(*) FROM ${db.table('chunks')} WHERE document_id = $1)::int AS chunks`,
          [id],
        );
        return rows[0];
      };

      // A write that stops after its first batch until released: the delete marks the row, and
      // the write, told at its next batch, rolls back and removes the row with its chunks.
      const written = await indexedInto(store, 'org_a', ['walrus old text']);
      await store.startVersion('org_a', written.id, {
        source: { type: 'text', filename: null, url: null, content_type: 'text/plain', bytes: null },
        chunkSize: 512,
        chunkOverlap: 64,
        metadata: null,
        text: 'new',
        blobKey: null,
        fetchUrl: null,
        at: new Date(),
      });
      let release = () => {};
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      let reached = () => {};
      const waiting = new Promise<void>((resolve) => {
        reached = resolve;
      });
      const rows = indexResult(['narwhal one', 'narwhal two']);
      const chunks = (async function* () {
        yield rows.chunks.slice(0, 1);
        reached();
        await gate;
        yield rows.chunks.slice(1);
      })();
      const saving = store.saveIndex(written.id, { ...rows, chunks, totals: () => rows, version: 2 });
      await waiting;
      expect(await store.deleteDocument('org_a', written.id)).not.toBeNull();
      expect(await rowsOf(written.id)).toEqual({ docs: 1, chunks: 1 });
      expect(await store.finishDeletes(100)).toBe(0);
      release();
      expect(await saving).toBe(false);
      expect(await rowsOf(written.id)).toEqual({ docs: 0, chunks: 0 });

      // A writer that dies holding the row (its connection cut): the reconciler's sweep finishes.
      const orphan = await indexedInto(store, 'org_a', ['walrus orphan']);
      const writer = await db.connect();
      await writer.query('BEGIN');
      await writer.query(`SELECT 1 FROM ${db.table('documents')} WHERE id = $1 FOR KEY SHARE`, [orphan.id]);
      const pid = (await writer.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
      expect(await store.deleteDocument('org_a', orphan.id)).not.toBeNull();
      expect(await store.getDocument('org_a', orphan.id)).toBeNull();
      expect(await rowsOf(orphan.id)).toEqual({ docs: 1, chunks: 1 });
      await db.query('SELECT pg_terminate_backend($1)', [pid]);
      writer.release(true);
      // The server ends the backend asynchronously; its locks go with it.
      const deadline = Date.now() + 30_000;
      let removed = 0;
      while (removed === 0 && Date.now() < deadline) {
        removed = await store.finishDeletes(100);
        if (removed === 0) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(removed).toBe(1);
      expect(await rowsOf(orphan.id)).toEqual({ docs: 0, chunks: 0 });
    });
  });
});

/** The LISTEN connections of the pools named `name` (their application_name + " listen"). */
async function listenConnections(db: PgDatabase, name: string): Promise<Array<{ pid: number }>> {
  const { rows } = await db.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'LISTEN%'`,
    [`${name} listen`],
  );
  return rows;
}

describeScaleOut('PostgreSQL wake-ups across processes', services, () => {
  it('wakes a listener in another process, and again after its LISTEN connection was cut', async () => {
    const { db, close } = await freshDatabase();
    // Named apart, so that cutting its connection touches no other test's.
    const name = `docindex-test-${randomUUID().slice(0, 8)}`;
    const other = new PgDatabase({
      connectionString: url,
      schema: db.schema,
      maxConnections: 2,
      applicationName: name,
    });
    try {
      const documents = new PgDocumentStore(db, undefined, { keyword: new PgKeywordIndex(db) });
      const webhooks = new PgWebhookStore(other);
      const orgId = `org_${randomUUID()}`;
      await addWebhookEndpoint(webhooks, orgId, ['document.ready']);
      let wakes = 0;
      const unsubscribe = webhooks.onEnqueued(() => {
        wakes += 1;
      });
      const waitForWake = async (count: number) => {
        const deadline = Date.now() + 15_000;
        while (wakes < count) {
          if (Date.now() > deadline) throw new Error(`${wakes} wake-ups, not ${count}`);
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      };
      const listening = () => listenConnections(db, name);
      // Its first LISTEN wakes it once.
      await waitForWake(1);
      const [first] = await listening();
      expect(first).toBeDefined();
      await indexedInto(documents, orgId, ['walrus one']);
      await waitForWake(2);

      await db.query('SELECT pg_terminate_backend($1)', [first?.pid]);
      // Listening again wakes it once more (what was written meanwhile gets looked at); then a new
      // message does, on the new connection.
      await waitForWake(3);
      const [second] = await listening();
      expect(second?.pid).not.toBe(first?.pid);
      await indexedInto(documents, orgId, ['walrus two']);
      await waitForWake(4);

      unsubscribe();
      const deadline = Date.now() + 15_000;
      while ((await listening()).length > 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(await listening()).toEqual([]);
    } finally {
      await other.close();
      await close();
    }
  });

  it('starts a job enqueued by another process at once, not at the consumer’s next poll', async () => {
    // A failure (a time-out above all) says which step it was waiting in.
    let step = 'creating the schema';
    onTestFailed(() => {
      console.error(`the wake-up test failed while ${step}`);
    });
    const { db, close } = await freshDatabase();
    const name = `docindex-test-${randomUUID().slice(0, 8)}`;
    const other = new PgDatabase({
      connectionString: url,
      schema: db.schema,
      maxConnections: 3,
      applicationName: name,
    });
    // The consumer's process would look again only after ten minutes.
    const consuming = new PgTableQueue(other, { pollMs: 600_000 });
    try {
      const documents = new PgDocumentStore(db, undefined, { keyword: new PgKeywordIndex(db) });
      const enqueuing = new PgTableQueue(db);
      const started: string[] = [];
      consuming.consume(
        async (job) => {
          started.push(job.documentId);
        },
        { concurrency: 1 },
      );
      const deadline = Date.now() + 15_000;
      const listening = async () => (await listenConnections(db, name)).length > 0;
      step = 'waiting for the consumer’s LISTEN';
      while (!(await listening()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      // Its first pass is over, with nothing to do.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const ref = { documentId: randomUUID(), orgId: 'org_a' };
      step = 'creating the document';
      await documents.createDocuments([jobDocument(ref)]);
      step = 'enqueueing its job';
      await enqueuing.enqueue([ref], { created: true });
      step = 'waiting for the job to start';
      while (started.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(started).toEqual([ref.documentId]);
    } finally {
      step = 'stopping the consumer';
      await consuming.close();
      step = 'closing the consumer’s pool';
      await other.close();
      step = 'dropping the schema';
      await close();
    }
  });
});

describe('PostgreSQL unreachable', () => {
  it('fails fast with service_unavailable (503), never a hang or a 500', async () => {
    // Port 1 on loopback: nothing listens, the connection is refused at once.
    const db = new PgDatabase({
      connectionString: 'postgres://postgres@127.0.0.1:1/test',
      schema: 'unreachable',
      connectTimeoutMs: 1000,
    });
    try {
      const t0 = Date.now();
      const error = await new PgOrgStore(db).getOrg('org_x').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({ status: 503, code: 'service_unavailable' });
      await expect(db.transaction(async () => 1)).rejects.toMatchObject({ status: 503 });
      await expect(db.ping()).rejects.toBeInstanceOf(ApiError);
      expect(Date.now() - t0).toBeLessThan(3000);
    } finally {
      await db.close();
    }
  });
});
