// A consumer woken while its claim is still in flight (an asynchronous database: the enqueue's
// announcement arrives before the claim's answer) looks again at once, instead of sleeping a poll
// interval past the job it was told of. The rows are the real SQLite table queue's; only the
// claim's answer is held back until the job is enqueued.
import { afterEach, expect, it } from 'vitest';
import { type JobRows, LeaseQueue } from '../../../src/adapters/lease-queue/engine.js';
import { SqliteDocumentStore } from '../../../src/adapters/sqlite/document-store.js';
import { SqliteKeywordIndex } from '../../../src/adapters/sqlite/keyword/index.js';
import { SqliteTableQueue } from '../../../src/adapters/sqlite/table-queue.js';
import { jobDocument } from '../../contract/job-document.js';
import { sqliteFile } from '../../helpers/sqlite-file.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

it('looks again at once when woken while a claim is in flight', async () => {
  const { db, close } = sqliteFile('docindex-wake-');
  cleanups.push(close);
  const documents = new SqliteDocumentStore(db, { keyword: new SqliteKeywordIndex(db) });
  const rows = new SqliteTableQueue(db).rows;

  // The first claim reads the table (nothing is due), then its answer waits for `answer`.
  let answer!: () => void;
  const held = new Promise<void>((resolve) => {
    answer = resolve;
  });
  let inFlight!: () => void;
  const claiming = new Promise<void>((resolve) => {
    inFlight = resolve;
  });
  let claims = 0;
  const slowFirstClaim: JobRows = Object.assign(Object.create(rows) as JobRows, {
    claim: async (...args: Parameters<JobRows['claim']>) => {
      const found = await rows.claim(...args);
      claims += 1;
      if (claims === 1) {
        inFlight();
        await held;
      }
      return found;
    },
  });
  // An idle consumer would look again only after ten minutes.
  const queue = new LeaseQueue(slowFirstClaim, { pollMs: 600_000 });
  cleanups.push(() => queue.close());
  const started: string[] = [];
  queue.consume(
    async (job) => {
      started.push(job.documentId);
    },
    { concurrency: 1 },
  );

  await claiming;
  const ref = { documentId: 'doc_woken', orgId: 'org_a' };
  await documents.createDocuments([jobDocument(ref)]);
  // Wakes the consumer, whose claim has not answered yet.
  await queue.enqueue([ref], { created: true });
  answer();

  const deadline = Date.now() + 5_000;
  while (started.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  expect(started).toEqual(['doc_woken']);
});
