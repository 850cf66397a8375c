import { mkdtempSync, rmSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FsBlobStore } from '../../src/adapters/blob/fs-blob-store.js';
import { MemoryRateLimiter } from '../../src/adapters/ratelimit/memory.js';
import { type Database, openSqlite } from '../../src/adapters/sqlite/database.js';
import { SqliteDocumentStore } from '../../src/adapters/sqlite/document-store.js';
import { SqliteEvaluationQueue, SqliteEvaluationStore } from '../../src/adapters/sqlite/evaluation-store.js';
import { SqliteIdempotencyStore } from '../../src/adapters/sqlite/idempotency-store.js';
import { SqliteKeywordIndex } from '../../src/adapters/sqlite/keyword/index.js';
import { SqliteOrgStore } from '../../src/adapters/sqlite/org-store.js';
import { SqliteSourceRunRows, SqliteSourceStore } from '../../src/adapters/sqlite/source-store.js';
import { SqliteTableQueue } from '../../src/adapters/sqlite/table-queue.js';
import { SqliteUsageStore } from '../../src/adapters/sqlite/usage-store.js';
import { SqliteWebhookOutbox, SqliteWebhookStore } from '../../src/adapters/sqlite/webhook-store.js';
import { sqliteFile } from '../helpers/sqlite-file.js';
import { blobStoreContract } from './blob-store.contract.js';
import { addWebhookEndpoint, type DocumentStoreOptions } from './document-fixtures.js';
import { documentStoreContract } from './document-store.contract.js';
import { documentVersionsContract } from './document-versions.contract.js';
import { evaluationStoreContract } from './evaluation-store.contract.js';
import { filterContract } from './filter.contract.js';
import { idempotencyStoreContract } from './idempotency-store.contract.js';
import { jobDocument, jobVersion } from './job-document.js';
import { jobQueueContract } from './job-queue.contract.js';
import { keywordIndexContract } from './keyword-index.contract.js';
import { orgStoreContract } from './org-store.contract.js';
import { rateLimiterContract } from './rate-limiter.contract.js';
import { sourceStoreContract } from './source-store.contract.js';
import { tableQueueLanesContract } from './table-queue-lanes.contract.js';
import { usageStoreContract } from './usage-store.contract.js';
import { webhookStoreContract } from './webhook-store.contract.js';

const fileDatabase = () => sqliteFile('docindex-contract-');

function memoryDatabase(): { db: Database; close(): Promise<void> } {
  const db = openSqlite(':memory:');
  return {
    db,
    async close() {
      db.close();
    },
  };
}

evaluationStoreContract('SqliteEvaluationStore', async () => {
  const { db, close } = fileDatabase();
  return {
    store: new SqliteEvaluationStore(db),
    queue: (opts) => new SqliteEvaluationQueue(db, { ...opts, pollMs: 20 }),
    close,
  };
});

orgStoreContract('SqliteOrgStore', async () => {
  const { db, close } = memoryDatabase();
  return { store: new SqliteOrgStore(db), close };
});

/** A record store and the keyword index its saveIndex writes, on one database. */
function sqliteStores(db: Database, options: DocumentStoreOptions) {
  const index = new SqliteKeywordIndex(db, options);
  return { store: new SqliteDocumentStore(db, { keyword: index }), index };
}

for (const [kind, open] of [
  ['file', fileDatabase],
  [':memory:', memoryDatabase],
] as const) {
  const make = async (options: DocumentStoreOptions) => {
    const { db, close } = open();
    return {
      ...sqliteStores(db, options),
      reopen: (other: DocumentStoreOptions) => sqliteStores(db, other),
      setWrittenAnalysis: async (analysis: string) => {
        db.prepare('UPDATE search_analysis SET written = ? WHERE id = 1').run(analysis);
      },
      close,
    };
  };
  documentStoreContract(`SqliteDocumentStore (${kind})`, make);
  documentVersionsContract(`SqliteDocumentStore versions (${kind})`, make);
  keywordIndexContract(`SqliteKeywordIndex (${kind})`, make);
  filterContract(`SQLite filters (${kind})`, make);
}

idempotencyStoreContract('SqliteIdempotencyStore', async () => {
  const { db, close } = memoryDatabase();
  return {
    store: new SqliteIdempotencyStore(db),
    documents: new SqliteDocumentStore(db, { keyword: new SqliteKeywordIndex(db) }),
    close,
  };
});

tableQueueLanesContract('SqliteTableQueue lanes', async () => {
  const { db, close } = fileDatabase();
  return {
    store: new SqliteDocumentStore(db, { keyword: new SqliteKeywordIndex(db) }),
    downloads: new SqliteTableQueue(db, { lane: 'download' }).rows,
    processing: new SqliteTableQueue(db, { lane: 'process' }).rows,
    close,
  };
});

webhookStoreContract('SqliteWebhookStore', async () => {
  const { db, close } = fileDatabase();
  // "Another process": a second connection to the same file.
  const second = openSqlite(db.name);
  return {
    store: new SqliteWebhookStore(db),
    documents: new SqliteDocumentStore(db, { keyword: new SqliteKeywordIndex(db) }),
    other: new SqliteWebhookStore(second),
    documentsBounded: (maxPending) =>
      new SqliteDocumentStore(db, {
        keyword: new SqliteKeywordIndex(db),
        outbox: new SqliteWebhookOutbox(db, undefined, { maxPending }),
      }),
    async close() {
      second.close();
      await close();
    },
  };
});

usageStoreContract('SqliteUsageStore', async () => {
  const { db, close } = memoryDatabase();
  return { store: new SqliteUsageStore(db), close };
});

jobQueueContract('SqliteTableQueue', async (opts) => {
  const { db, close } = fileDatabase();
  const documents = new SqliteDocumentStore(db, { keyword: new SqliteKeywordIndex(db) });
  const queue = new SqliteTableQueue(db, {
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
    claimAndAbandon: async () => queue.rows.claim('vanished-host/4242/deadbeef/1', queue.leaseMs)?.id ?? null,
    async close() {
      await queue.close();
      await close();
    },
  };
});

rateLimiterContract('MemoryRateLimiter', async ({ windowSeconds }) => {
  const limiter = new MemoryRateLimiter({ windowSeconds });
  return { limiter, close: () => limiter.close() };
});

blobStoreContract('FsBlobStore', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'docindex-blobs-'));
  return {
    store: new FsBlobStore(dir),
    async listAll() {
      const entries = await readdir(dir, { recursive: true, withFileTypes: true });
      return entries
        .filter((e) => e.isFile())
        .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
        .sort();
    },
    async close() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

sourceStoreContract('SqliteSourceStore', async () => {
  const { db, close } = fileDatabase();
  const webhooks = new SqliteWebhookStore(db);
  return {
    store: new SqliteSourceStore(db),
    runs: new SqliteSourceRunRows(db),
    async addEndpoint(orgId, events) {
      const id = await addWebhookEndpoint(webhooks, orgId, events);
      return async () =>
        db
          .prepare<[string], { type: string; payload: string }>(
            'SELECT event_type AS type, payload FROM webhook_messages WHERE endpoint_id = ? ORDER BY created_at',
          )
          .all(id)
          .map((r) => ({ type: r.type, payload: JSON.parse(r.payload) as unknown }));
    },
    close,
  };
});
