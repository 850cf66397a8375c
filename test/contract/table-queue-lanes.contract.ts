// Conformance suite for the table-backed queues' two lanes (SQLite and PostgreSQL): a URL
// document is claimed only by the download lane, and attachBlob hands it to the process lane in
// one step that the finishing download run cannot undo.
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { JobRows } from '../../src/adapters/lease-queue/engine.js';
import type { DocumentStore } from '../../src/domain/ports.js';
import { urlDocument } from './job-document.js';

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
  });
}
