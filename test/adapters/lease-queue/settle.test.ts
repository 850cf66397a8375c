// A job whose handler has finished keeps its lease until its settlement is written: a settle that
// takes longer than the lease (a busy database) must not let another consumer run the job again.
// The rows are the real SQLite table queue's; only the settle's write is held back.
import { afterEach, expect, it } from 'vitest';
import { type JobRows, LeaseQueue } from '../../../src/adapters/lease-queue/engine.js';
import { SqliteDocumentStore } from '../../../src/adapters/sqlite/document-store.js';
import { SqliteKeywordIndex } from '../../../src/adapters/sqlite/keyword/index.js';
import { SqliteTableQueue } from '../../../src/adapters/sqlite/table-queue.js';
import { jobDocument } from '../../contract/job-document.js';
import { sleep } from '../../contract/support.js';
import { sqliteFile } from '../../helpers/sqlite-file.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const LEASE_MS = 200;

it('keeps renewing a finished job’s lease until its settlement is written', async () => {
  const { db, close } = sqliteFile('docindex-settle-');
  cleanups.push(close);
  const documents = new SqliteDocumentStore(db, { keyword: new SqliteKeywordIndex(db) });
  const rows = new SqliteTableQueue(db).rows;
  // Every settlement is written only after three leases' time.
  const slowSettle: JobRows = Object.assign(Object.create(rows) as JobRows, {
    settle: async (...args: Parameters<JobRows['settle']>) => {
      await sleep(LEASE_MS * 3);
      return rows.settle(...args);
    },
  });
  const queues = [slowSettle, rows].map((r) => new LeaseQueue(r, { leaseMs: LEASE_MS, pollMs: 10 }));
  for (const queue of queues) cleanups.push(() => queue.close());

  const ref = { documentId: 'doc_settling', orgId: 'org_a' };
  await documents.createDocuments([jobDocument(ref)]);
  const runs: string[] = [];
  queues[0]!.consume(
    async (job) => {
      runs.push(`slow:${job.documentId}`);
    },
    { concurrency: 1 },
  );
  await queues[0]!.enqueue([ref], { created: true });
  while (runs.length === 0) await sleep(5);
  // The other consumer starts polling while the first one's settlement is still being written.
  queues[1]!.consume(
    async (job) => {
      runs.push(`other:${job.documentId}`);
    },
    { concurrency: 1 },
  );
  await sleep(LEASE_MS * 5);
  expect(runs).toEqual(['slow:doc_settling']);
});
