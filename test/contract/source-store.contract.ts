// Conformance suite for SourceStore and the run rows' job table: every adapter (SQLite,
// PostgreSQL) runs these same tests.
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JobRows } from '../../src/adapters/lease-queue/engine.js';
import type { SourceRecord, SourceRun, SourceStore } from '../../src/domain/sources.js';

export interface SourceStoreHarness {
  store: SourceStore;
  runs: JobRows;
  /** A webhook endpoint of the org subscribed to `events`; returns the payloads of its messages. */
  addEndpoint(
    orgId: string,
    events: string[],
  ): Promise<() => Promise<Array<{ type: string; payload: unknown }>>>;
  close(): Promise<void>;
}

const T0 = new Date('2026-03-15T12:00:00.000Z');

function source(orgId: string, overrides: Partial<SourceRecord> = {}): SourceRecord {
  return {
    id: `src_${randomUUID().replaceAll('-', '')}`,
    orgId,
    type: 's3',
    name: 'bucket',
    config: { bucket: 'b', prefix: 'p/' },
    sealedCredentials: 'v1.sealed.value',
    schedule: 'manual',
    scheduleMs: null,
    nextRunAt: null,
    partition: null,
    metadata: { team: 'x' },
    access: ['group:eng'],
    createdAt: T0,
    updatedAt: T0,
    deletedAt: null,
    ...overrides,
  };
}

const runId = () => `run_${randomUUID().replaceAll('-', '')}`;

export function sourceStoreContract(name: string, make: () => Promise<SourceStoreHarness>): void {
  describe(name, () => {
    let h: SourceStoreHarness;
    let store: SourceStore;
    const org = () => `org_${randomUUID()}`;

    beforeEach(async () => {
      h = await make();
      store = h.store;
    });
    afterEach(async () => {
      await h.close();
    });

    it('keeps a source as written and shows it to its org only', async () => {
      const a = org();
      const s = source(a);
      await store.createSource(s);
      expect(await store.getSource(a, s.id)).toEqual(s);
      expect(await store.getSource(org(), s.id)).toBeNull();
      expect((await store.listSources(a)).map((x) => x.id)).toEqual([s.id]);
      expect(await store.listSources(org())).toEqual([]);
    });

    it('updates the fields given and keeps credentials unless replaced', async () => {
      const a = org();
      const s = source(a);
      await store.createSource(s);
      const at = new Date(T0.getTime() + 1000);
      const updated = await store.updateSource(a, s.id, { name: 'renamed', updatedAt: at });
      expect(updated).toMatchObject({
        name: 'renamed',
        sealedCredentials: s.sealedCredentials,
        updatedAt: at,
      });
      const rekeyed = await store.updateSource(a, s.id, {
        sealedCredentials: 'v1.other.value',
        schedule: 'PT1H',
        scheduleMs: 3_600_000,
        nextRunAt: new Date(T0.getTime() + 3_600_000),
        updatedAt: at,
      });
      expect(rekeyed).toMatchObject({
        sealedCredentials: 'v1.other.value',
        scheduleMs: 3_600_000,
        schedule: 'PT1H',
      });
      expect(await store.updateSource(org(), s.id, { name: 'x', updatedAt: at })).toBeNull();
    });

    it('a deleted source is gone for the API but still loads for its removal', async () => {
      const a = org();
      const s = source(a);
      await store.createSource(s);
      expect(await store.markDeleted(org(), s.id, T0)).toBe(false);
      expect(await store.markDeleted(a, s.id, T0)).toBe(true);
      expect(await store.markDeleted(a, s.id, T0)).toBe(false);
      expect(await store.getSource(a, s.id)).toBeNull();
      expect(await store.listSources(a)).toEqual([]);
      expect((await store.loadSource(s.id))?.deletedAt).toEqual(T0);
      expect(await store.listDeletedWithoutRun(10)).toEqual([{ id: s.id, orgId: a }]);
      await store.removeSource(s.id);
      expect(await store.loadSource(s.id)).toBeNull();
      expect(await store.listDeletedWithoutRun(10)).toEqual([]);
    });

    it('purges one org’s sources, items and runs and nothing of another org', async () => {
      const a = org();
      const b = org();
      const sa = source(a);
      const sb = source(b);
      await store.createSource(sa);
      await store.createSource(sb);
      for (const s of [sa, sb]) {
        const run = (await store.createRun({ id: runId(), sourceId: s.id, orgId: s.orgId, createdAt: T0 }))!;
        await store.recordItem(
          run.id,
          s.id,
          { key: 'k', etag: 'e', documentId: randomUUID(), changedByRun: run.id, links: null },
          'added',
        );
      }
      expect(await store.purgeOrg(a)).toBe(1);
      expect(await store.loadSource(sa.id)).toBeNull();
      expect(await store.listItems(sa.id)).toEqual([]);
      expect(await store.listRuns(sa.id, 10)).toEqual([]);
      expect(await store.getSource(b, sb.id)).not.toBeNull();
      expect(await store.listItems(sb.id)).toHaveLength(1);
      expect(await store.listRuns(sb.id, 10)).toHaveLength(1);
    });

    it('allows one run per source at a time', async () => {
      const a = org();
      const s = source(a);
      await store.createSource(s);
      const first = await store.createRun({ id: runId(), sourceId: s.id, orgId: a, createdAt: T0 });
      expect(first).toMatchObject({ status: 'queued', added: 0, errors: [] });
      expect(await store.createRun({ id: runId(), sourceId: s.id, orgId: a, createdAt: T0 })).toBeNull();
      const attempts = await Promise.all(
        Array.from({ length: 5 }, () =>
          store.createRun({ id: runId(), sourceId: s.id, orgId: a, createdAt: T0 }),
        ),
      );
      expect(attempts.filter((r) => r !== null)).toHaveLength(0);
      await store.markRunning(first!.id, T0);
      await store.finishRun(first!.id, { status: 'completed', unchanged: 0, finishedAt: T0 }, () => ({}));
      expect(await store.createRun({ id: runId(), sourceId: s.id, orgId: a, createdAt: T0 })).not.toBeNull();
    });

    it('records items and counts, once per item even when a run is resumed', async () => {
      const a = org();
      const s = source(a);
      await store.createSource(s);
      const run = (await store.createRun({ id: runId(), sourceId: s.id, orgId: a, createdAt: T0 }))!;
      const started = await store.markRunning(run.id, T0);
      expect(started).toMatchObject({ status: 'running', startedAt: T0 });
      // A resumed run keeps its first start.
      expect((await store.markRunning(run.id, new Date(T0.getTime() + 5000)))?.startedAt).toEqual(T0);
      const doc = randomUUID();
      await store.recordItem(
        run.id,
        s.id,
        { key: 'a.txt', etag: '"1"', documentId: doc, changedByRun: run.id, links: null },
        'added',
      );
      await store.recordItem(
        run.id,
        s.id,
        { key: 'b.txt', etag: '"1"', documentId: randomUUID(), changedByRun: run.id, links: null },
        'added',
      );
      await store.recordItem(
        run.id,
        s.id,
        {
          key: 'a.txt',
          etag: '"2"',
          documentId: doc,
          changedByRun: run.id,
          links: ['http://127.0.0.1:8080/b', 'http://127.0.0.1:8080/c?q=1'],
        },
        'updated',
      );
      await store.forgetItem(run.id, s.id, 'b.txt');
      await store.forgetItem(run.id, s.id, 'b.txt');
      await store.recordItemError(run.id, { item: 'c.bin', code: 'unsupported_format', message: 'no' });
      await store.recordItemError(run.id, { item: 'c.bin', code: 'unsupported_format', message: 'no' });
      // The links a version recorded replace the earlier ones, in their order.
      expect(await store.listItems(s.id)).toEqual([
        {
          key: 'a.txt',
          etag: '"2"',
          documentId: doc,
          changedByRun: run.id,
          links: ['http://127.0.0.1:8080/b', 'http://127.0.0.1:8080/c?q=1'],
        },
      ]);
      const finished = await store.finishRun(
        run.id,
        { status: 'completed', unchanged: 7, finishedAt: new Date(T0.getTime() + 9000) },
        () => ({}),
      );
      expect(finished).toMatchObject({
        status: 'completed',
        added: 2,
        updated: 1,
        deleted: 1,
        unchanged: 7,
        failed: 1,
        errors: [{ item: 'c.bin', code: 'unsupported_format', message: 'no' }],
        finishedAt: new Date(T0.getTime() + 9000),
      });
      // A finished run is not finished again.
      expect(
        await store.finishRun(run.id, { status: 'failed', unchanged: 0, finishedAt: T0 }, () => ({})),
      ).toBeNull();
      expect((await store.listRuns(s.id, 10)).map((r) => r.id)).toEqual([run.id]);
    });

    it('a failed run keeps its error first; the webhook message carries the run', async () => {
      const a = org();
      const s = source(a);
      await store.createSource(s);
      const messages = await h.addEndpoint(a, ['source.sync.failed']);
      const quiet = await h.addEndpoint(org(), ['source.sync.failed']);
      const run = (await store.createRun({ id: runId(), sourceId: s.id, orgId: a, createdAt: T0 }))!;
      await store.recordItemError(run.id, { item: 'x', code: 'too_large', message: 'big' });
      const finished = await store.finishRun(
        run.id,
        {
          status: 'failed',
          unchanged: 0,
          finishedAt: T0,
          error: { item: null, code: 'access_denied', message: 'refused' },
        },
        (r: SourceRun) => ({ run_id: r.id, status: r.status, failed: r.failed }),
      );
      expect(finished?.errors.map((e) => e.code)).toEqual(['access_denied', 'too_large']);
      expect(await messages()).toEqual([
        { type: 'source.sync.failed', payload: { run_id: run.id, status: 'failed', failed: 1 } },
      ]);
      expect(await quiet()).toEqual([]);
    });

    it('starts each due scheduled source once and moves its next time on', async () => {
      const a = org();
      const due = source(a, { schedule: 'PT10M', scheduleMs: 600_000, nextRunAt: T0 });
      const later = source(a, {
        schedule: 'PT10M',
        scheduleMs: 600_000,
        nextRunAt: new Date(T0.getTime() + 60_000),
      });
      const manual = source(a);
      for (const s of [due, later, manual]) await store.createSource(s);
      const [one, two] = await Promise.all([store.startDueRuns(T0, 10), store.startDueRuns(T0, 10)]);
      const started = [...one!, ...two!];
      expect(started).toHaveLength(1);
      expect((await store.getRun(started[0]!.runId))?.sourceId).toBe(due.id);
      expect((await store.getSource(a, due.id))?.nextRunAt).toEqual(new Date(T0.getTime() + 600_000));
      // Due again while its run is under way: the time moves on, no second run (the other
      // source, due by then, gets its first).
      const next = await store.startDueRuns(new Date(T0.getTime() + 600_000), 10);
      expect(await Promise.all(next.map(async (r) => (await store.getRun(r.runId))?.sourceId))).toEqual([
        later.id,
      ]);
      expect((await store.getSource(a, due.id))?.nextRunAt).toEqual(new Date(T0.getTime() + 1_200_000));
      expect((await store.listActiveRuns(10)).map((r) => r.runId).sort()).toEqual(
        [started[0]!.runId, next[0]!.runId].sort(),
      );
    });

    it('a run is a job: claimed once, released, settled', async () => {
      const a = org();
      const s = source(a);
      await store.createSource(s);
      const run = (await store.createRun({ id: runId(), sourceId: s.id, orgId: a, createdAt: T0 }))!;
      expect(await h.runs.waiting(run.id)).toBe(true);
      const claimed = await h.runs.claim('host/1/tok/1', 30_000);
      expect(claimed).toEqual({ id: run.id, orgId: a, attempt: 1 });
      expect(await h.runs.claim('host/1/tok/2', 30_000)).toBeNull();
      expect(await h.runs.leasesStartingWith('host/')).toEqual([{ id: run.id, owner: 'host/1/tok/1' }]);
      await h.runs.release(run.id, 'host/1/tok/1');
      const again = await h.runs.claim('host/2/tok/1', 30_000);
      expect(again).toEqual({ id: run.id, orgId: a, attempt: 2 });
      // A stale holder writes nothing.
      await h.runs.settle('host/1/tok/1', claimed!, { state: 'done' });
      expect(await h.runs.waiting(run.id)).toBe(true);
      await h.runs.settle('host/2/tok/1', again!, { state: 'done' });
      expect(await h.runs.waiting(run.id)).toBe(false);
      // Ended without its run ending: made pending again.
      await h.runs.revive([run.id]);
      expect(await h.runs.waiting(run.id)).toBe(true);
    });
  });
}
