// Repairs the gap between "committed" and "enqueued": a document still unfinished a while after
// it was last touched, with no job in the queue (the enqueue after the commit failed, or the
// queue lost it — a Redis that lost its data), is enqueued again. A document whose job is still
// waiting or running is left alone; enqueue is idempotent, so a race with the original is harmless.
// It also finishes deletes whose index write died before it could remove the document.
import type { Clock, DocumentStore, JobQueue } from './ports.js';

const BATCH = 500;

export class QueueReconciler {
  constructor(
    private readonly documents: DocumentStore,
    private readonly queues: { process: JobQueue; download: JobQueue },
    private readonly clock: Clock,
    /** How long a queued document may wait before it is checked. */
    private readonly graceMs: number,
  ) {}

  /** Returns how many documents were enqueued again. */
  async runOnce(): Promise<number> {
    // Deletes a crashed index write left to finish (see DocumentStore.deleteDocument).
    await this.documents.finishDeletes?.(BATCH);
    const olderThan = new Date(this.clock.now().getTime() - this.graceMs);
    const stale = await this.documents.listStaleQueued(olderThan, BATCH);
    let requeued = 0;
    for (const ref of stale) {
      const queue = ref.needsDownload ? this.queues.download : this.queues.process;
      if (await queue.has(ref.documentId)) continue;
      await queue.enqueue([{ documentId: ref.documentId, orgId: ref.orgId }]);
      requeued += 1;
    }
    return requeued;
  }
}
