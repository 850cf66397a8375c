// A run whose error escapes the run itself (the store fails while recording a step) on the SQLite
// store: it is tried again while tries are left, then ends failed with the reason, instead of
// staying queued for the queue to revive again and again; a run claimed after its last try died
// with its process ends failed as interrupted. And a run's items, read several at once.
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Database, openSqlite } from '../../src/adapters/sqlite/database.js';
import { SqliteSourceStore } from '../../src/adapters/sqlite/source-store.js';
import type { DocumentService } from '../../src/domain/documents.js';
import { ApiError } from '../../src/domain/errors.js';
import type { IngestionService } from '../../src/domain/ingestion.js';
import type { JobContext } from '../../src/domain/ports.js';
import { SourceSync } from '../../src/domain/source-sync.js';
import type { SourceRecord, SourceRun, SourceStore, SourceType } from '../../src/domain/sources.js';
import { FixedClock } from './fakes.js';

const T0 = new Date('2026-03-15T12:00:00.000Z');
const ORG = 'org_1';

/** A source row and a queued run of it in `store`; returns the run's id. */
async function queuedRunIn(store: SqliteSourceStore): Promise<string> {
  const source: SourceRecord = {
    id: `src_${randomUUID().replaceAll('-', '')}`,
    orgId: ORG,
    type: 's3',
    name: 'bucket',
    config: {},
    sealedCredentials: null,
    schedule: 'manual',
    scheduleMs: null,
    nextRunAt: null,
    partition: null,
    metadata: {},
    access: null,
    createdAt: T0,
    updatedAt: T0,
    deletedAt: null,
  };
  await store.createSource(source);
  const run = await store.createRun({
    id: `run_${randomUUID()}`,
    sourceId: source.id,
    orgId: ORG,
    createdAt: T0,
  });
  return run?.id as string;
}

const jobOf = (runId: string, attempt: number, maxAttempts = 3): JobContext => ({
  documentId: runId,
  orgId: ORG,
  attempt,
  maxAttempts,
  signal: new AbortController().signal,
  traceparent: null,
  queuedAt: null,
});

describe('source runs whose error escapes', () => {
  let db: Database;
  let store: SqliteSourceStore;
  let failing: SourceStore;
  let finished: SourceRun[];
  let listings: number;

  /** A type whose listing is empty (and counted): the failure under test is elsewhere. */
  const emptyType: SourceType = {
    name: 's3',
    prepare: () => ({ config: {}, credentials: null, urls: [] }),
    connect: () => ({
      // biome-ignore lint/correctness/useYield: an empty listing
      async *list() {
        listings += 1;
      },
      open: async () => {
        throw new Error('nothing to open');
      },
      close: () => {},
    }),
  };

  beforeEach(() => {
    db = openSqlite(':memory:');
    store = new SqliteSourceStore(db);
    finished = [];
    listings = 0;
    // The store as a database that fails every time the run records its start.
    failing = new Proxy(store, {
      get(target, property, receiver) {
        if (property === 'markRunning') {
          return async () => {
            throw new Error('database unavailable');
          };
        }
        const value = Reflect.get(target, property, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  });
  afterEach(() => db.close());

  function sync(over: SourceStore): SourceSync {
    return new SourceSync({
      store: over,
      types: new Map([['s3', emptyType]]),
      secrets: null,
      ingestion: {} as IngestionService,
      documents: {} as DocumentService,
      clock: new FixedClock(T0),
      renderRun: (run) => ({ run_id: run.id, status: run.status }),
      onFinished: (run) => finished.push(run),
    });
  }

  const queuedRun = () => queuedRunIn(store);
  const job = (runId: string, attempt: number) => jobOf(runId, attempt);

  it('is tried again while tries are left, then ends failed with the reason', async () => {
    const runId = await queuedRun();
    const handler = sync(failing);
    await expect(handler.handle(job(runId, 1))).rejects.toThrow('database unavailable');
    await expect(handler.handle(job(runId, 2))).rejects.toThrow('database unavailable');
    expect((await store.getRun(runId))?.status).toBe('queued');

    await handler.handle(job(runId, 3));
    const run = await store.getRun(runId);
    expect(run).toMatchObject({ status: 'failed', finishedAt: T0 });
    expect(run?.errors).toEqual([
      // The reason stays in the server's log: a database's message is not the tenant's to read.
      { item: null, code: 'internal', message: expect.stringContaining('3 tries') },
    ]);
    expect(finished.map((r) => r.id)).toEqual([runId]);
    // Finished: no longer among the runs the queue revives.
    expect((await store.listActiveRuns(10)).map((r) => r.runId)).not.toContain(runId);
  });

  it('claimed again after its last try died with its process, ends failed as interrupted', async () => {
    const runId = await queuedRun();
    await sync(store).handle(job(runId, 4));
    expect(await store.getRun(runId)).toMatchObject({
      status: 'failed',
      errors: [{ item: null, code: 'interrupted', message: expect.any(String) }],
    });
    expect(listings).toBe(0);
  });

  it('a run that works is unaffected', async () => {
    const runId = await queuedRun();
    await sync(store).handle(job(runId, 1));
    expect(await store.getRun(runId)).toMatchObject({ status: 'completed' });
    expect(listings).toBe(1);
  });
});

describe('a run’s items', () => {
  const ITEMS = 10;
  let db: Database;
  let store: SqliteSourceStore;
  beforeEach(() => {
    db = openSqlite(':memory:');
    store = new SqliteSourceStore(db);
  });
  afterEach(() => db.close());

  /**
   * A bucket of ITEMS objects whose reads each take a few turns of the event loop, and an
   * ingestion that reads each file to its end; `failAt` makes that item's commit answer 503.
   */
  function bucketRun(failAt: string | null = null) {
    const seen = { open: 0, mostOpen: 0, committed: 0, unfinished: 0 };
    const type: SourceType = {
      name: 's3',
      prepare: () => ({ config: {}, credentials: null, urls: [] }),
      connect: () => ({
        async *list() {
          for (let i = 0; i < ITEMS; i++) yield { key: `docs/${i}.txt`, etag: `"${i}"` };
        },
        open: async (key: string) => {
          seen.open += 1;
          seen.unfinished += 1;
          seen.mostOpen = Math.max(seen.mostOpen, seen.unfinished);
          for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
          return Readable.from([`the text of ${key}`]);
        },
        close: () => {},
      }),
    };
    const ingestion = {
      withStagedFile: async (
        upload: { stream: Readable; filename: string | null },
        _metadata: unknown,
        use: (staged: { filename: string | null }) => Promise<unknown>,
      ) => {
        for await (const _ of upload.stream);
        try {
          return await use({ filename: upload.filename });
        } finally {
          seen.unfinished -= 1;
        }
      },
      commitFile: async (_org: string, _access: unknown, staged: { filename: string | null }) => {
        await new Promise((resolve) => setImmediate(resolve));
        if (staged.filename === failAt) throw new ApiError('overloaded', 'too many documents queued');
        seen.committed += 1;
        return { document_ids: [randomUUID()] };
      },
    } as unknown as IngestionService;
    const sync = new SourceSync({
      store,
      types: new Map([['s3', type]]),
      secrets: null,
      ingestion,
      documents: {} as DocumentService,
      clock: new FixedClock(T0),
      renderRun: (run) => ({ run_id: run.id, status: run.status }),
    });
    return { sync, seen };
  }

  it('are read and ingested several at once, each recorded', async () => {
    const runId = await queuedRunIn(store);
    const { sync, seen } = bucketRun();
    await sync.handle(jobOf(runId, 1));
    expect(await store.getRun(runId)).toMatchObject({ status: 'completed', added: ITEMS, failed: 0 });
    expect(seen).toMatchObject({ open: ITEMS, committed: ITEMS, unfinished: 0 });
    // More than one at a time, and never more than a few.
    expect(seen.mostOpen).toBeGreaterThan(1);
    expect(seen.mostOpen).toBeLessThanOrEqual(4);
  });

  it('stop at backpressure once the items under way have finished, and resume from what was recorded', async () => {
    const runId = await queuedRunIn(store);
    const first = bucketRun('3.txt');
    await expect(first.sync.handle(jobOf(runId, 1))).rejects.toThrow('too many documents queued');
    // Nothing is left under way when the run gives up, and it stopped short of the listing's end.
    expect(first.seen.unfinished).toBe(0);
    expect(first.seen.open).toBeLessThan(ITEMS);
    const recorded = (await store.getRun(runId))?.added ?? 0;
    expect(recorded).toBe(first.seen.committed);

    const second = bucketRun();
    await second.sync.handle(jobOf(runId, 2));
    // The items recorded by the first try are not read again.
    expect(second.seen.open).toBe(ITEMS - recorded);
    expect(await store.getRun(runId)).toMatchObject({ status: 'completed', added: ITEMS });
  });

  it('stop at backpressure met by the last item, after the listing has been gone through', async () => {
    const runId = await queuedRunIn(store);
    const run = bucketRun(`${ITEMS - 1}.txt`);
    await expect(run.sync.handle(jobOf(runId, 1))).rejects.toThrow('too many documents queued');
    expect(run.seen).toMatchObject({ open: ITEMS, committed: ITEMS - 1, unfinished: 0 });
    const stopped = await store.getRun(runId);
    expect(stopped?.status).not.toBe('completed');
    expect(stopped?.added).toBe(ITEMS - 1);
  });
});
