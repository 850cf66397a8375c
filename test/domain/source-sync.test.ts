// A run whose error escapes the run itself (the store fails while recording a step) on the SQLite
// store: it is tried again while tries are left, then ends failed with the reason, instead of
// staying queued for the queue to revive again and again; a run claimed after its last try died
// with its process ends failed as interrupted.
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Database, openSqlite } from '../../src/adapters/sqlite/database.js';
import { SqliteSourceStore } from '../../src/adapters/sqlite/source-store.js';
import type { DocumentService } from '../../src/domain/documents.js';
import type { IngestionService } from '../../src/domain/ingestion.js';
import type { JobContext } from '../../src/domain/ports.js';
import { SourceSync } from '../../src/domain/source-sync.js';
import type { SourceRecord, SourceRun, SourceStore, SourceType } from '../../src/domain/sources.js';
import { FixedClock } from './fakes.js';

const T0 = new Date('2026-03-15T12:00:00.000Z');
const ORG = 'org_1';

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

  async function queuedRun(): Promise<string> {
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

  const job = (runId: string, attempt: number): JobContext => ({
    documentId: runId,
    orgId: ORG,
    attempt,
    maxAttempts: 3,
    signal: new AbortController().signal,
    traceparent: null,
    queuedAt: null,
  });

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
