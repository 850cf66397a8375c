// Conformance suite for the table-backed queues' two lanes (SQLite and PostgreSQL): a URL
// document is claimed only by the download lane, and attachBlob hands it to the process lane in
// one step that the finishing download run cannot undo.
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { type JobRows, LeaseQueue } from '../../src/adapters/lease-queue/engine.js';
import type { DocumentStore, JobConsumer } from '../../src/domain/ports.js';
import { jobDocument, urlDocument } from './job-document.js';

/** Each lane's job rows, driven by hand here (claim/settle, as a consumer does). */
export interface LanesHarness {
  store: DocumentStore;
  downloads: JobRows;
  processing: JobRows;
  close(): Promise<void>;
}

export function tableQueueLanesContract(name: string, make: () => Promise<LanesHarness>): void {
  describe(name, () => {
    let h: LanesHarness | null = null;
    afterEach(async () => {
      await h?.close();
      h = null;
    });

    it('hands a finished download to the process lane in one step, whatever the download run does next', async () => {
      h = await make();
      const { store, downloads, processing } = h;
      const ref = { documentId: randomUUID(), orgId: 'org_x' };
      await store.createDocuments([urlDocument(ref)]);
      expect(await processing.claim('host/1/token/1', 30_000)).toBeNull();
      const download = await downloads.claim('host/1/token/2', 30_000);
      expect(download?.id).toBe(ref.documentId);
      expect(
        await store.attachBlob(ref.documentId, { blobKey: 'ab/x', contentType: 'application/pdf', bytes: 9 }),
      ).toBe(true);
      // The download run ends after the hand-over: its settle must not finish the new job.
      await downloads.settle('host/1/token/2', download!, { state: 'done' });
      const next = await processing.claim('host/1/token/3', 30_000);
      expect(next).toMatchObject({ id: ref.documentId, attempt: 1 });
      expect(await downloads.claim('host/1/token/4', 30_000)).toBeNull();
    });

    it('a document left processing with its job finished (a lost run) is revived by the next enqueue', async () => {
      h = await make();
      const { store, downloads, processing } = h;
      const ref = { documentId: randomUUID(), orgId: 'org_x' };
      await store.createDocuments([urlDocument(ref)]);
      const download = await downloads.claim('host/1/token/2', 30_000);
      await store.attachBlob(ref.documentId, { blobKey: 'ab/x', contentType: 'image/png', bytes: 9 });
      await downloads.settle('host/1/token/2', download!, { state: 'done' });
      const run = await processing.claim('host/1/token/3', 30_000);
      expect(run).toMatchObject({ id: ref.documentId });
      // The run ends without the document ending: it stays unfinished (processing where the claim
      // marks it so), with no job to finish it.
      await processing.settle('host/1/token/3', run!, { state: 'done' });
      expect(await processing.waiting(ref.documentId)).toBe(false);
      expect(['queued', 'processing']).toContain(
        (await store.getDocument(ref.orgId, ref.documentId))?.status,
      );
      await processing.revive([ref.documentId]);
      expect(await processing.claim('host/1/token/4', 30_000)).toMatchObject({ id: ref.documentId });
    });

    it('keeps a slot for another org while one org’s backlog holds its share (maxPerOrg)', async () => {
      h = await make();
      const { store, processing } = h;
      const backlog = Array.from({ length: 6 }, () => ({ documentId: randomUUID(), orgId: 'org_a' }));
      await store.createDocuments(backlog.map(jobDocument));
      const queue = new LeaseQueue(processing, { pollMs: 10 });
      const started: string[] = [];
      let release = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      const consumer = queue.consume(
        async (job) => {
          started.push(job.orgId);
          await held;
        },
        { concurrency: 3, maxPerOrg: 2 },
      );
      try {
        const until = async (what: () => boolean) => {
          for (let i = 0; i < 500 && !what(); i++) await new Promise((wait) => setTimeout(wait, 10));
        };
        await until(() => started.length >= 2);
        // Org A holds its share (2 of 3 slots) while its other jobs wait; the third slot is free.
        await new Promise((wait) => setTimeout(wait, 200));
        expect(started).toEqual(['org_a', 'org_a']);
        const other = { documentId: randomUUID(), orgId: 'org_b' };
        await store.createDocuments([jobDocument(other)]);
        await queue.enqueue([other], { created: true });
        await until(() => started.length >= 3);
        // Org B's document starts while org A's two runs still hold their slots.
        expect(started).toEqual(['org_a', 'org_a', 'org_b']);
      } finally {
        release();
        await consumer.stop();
      }
    });

    it('a download run that ends after the process lane took its document leaves the new run alone', async () => {
      // The lanes' consumers, as the worker starts them: one queue per lane over the same rows.
      h = await make();
      const { store, downloads, processing } = h;
      const ref = { documentId: randomUUID(), orgId: 'org_x' };
      await store.createDocuments([urlDocument(ref)]);
      const downloadQueue = new LeaseQueue(downloads, { pollMs: 10 });
      const processQueue = new LeaseQueue(processing, { pollMs: 10 });
      let downloadDone = () => {};
      const downloadEnding = new Promise<void>((resolve) => {
        downloadDone = resolve;
      });
      let processStarted = () => {};
      const started = new Promise<void>((resolve) => {
        processStarted = resolve;
      });
      const consumers: JobConsumer[] = [];
      const seen = new Promise<{ aborted: boolean; waiting: boolean }>((resolve) => {
        consumers.push(
          processQueue.consume(
            async (job) => {
              processStarted();
              await downloadEnding;
              // Long enough for the download consumer to record its run's end.
              await new Promise((wait) => setTimeout(wait, 100));
              resolve({ aborted: job.signal.aborted, waiting: await processing.waiting(job.documentId) });
            },
            { concurrency: 1 },
          ),
        );
      });
      consumers.push(
        downloadQueue.consume(
          async (job) => {
            await store.attachBlob(job.documentId, { blobKey: 'ab/x', contentType: 'image/png', bytes: 9 });
            await processQueue.enqueue([ref]);
            // The process lane has the document before this run ends.
            await started;
            downloadDone();
          },
          { concurrency: 1 },
        ),
      );
      try {
        // Still the process run's job: neither finished by the download run nor taken from it.
        expect(await seen).toEqual({ aborted: false, waiting: true });
      } finally {
        for (const consumer of consumers) await consumer.stop();
      }
    });
  });
}
