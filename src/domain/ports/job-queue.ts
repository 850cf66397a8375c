// The queue of document jobs and the consumers that run them.
import type { JobRef } from '../types.js';

export interface JobContext {
  documentId: string;
  orgId: string;
  /** 1 for the first try. */
  attempt: number;
  maxAttempts: number;
  /** Aborted when the job is being abandoned (shutdown or lost lease). */
  signal: AbortSignal;
  /** The trace the job was queued in (W3C traceparent), when it was queued in one. */
  traceparent?: string | null;
  /** When the job was queued or became due again (milliseconds since the epoch), where the queue knows. */
  queuedAt?: number | null;
}

/**
 * Resolves when the job is done (the handler records success or failure on the document itself).
 * Throwing asks the queue to retry later with backoff (only while attempt < maxAttempts).
 */
export type JobHandler = (job: JobContext) => Promise<void>;

export interface JobConsumer {
  /** Stops taking jobs and waits for running ones (up to the queue's grace time). */
  stop(): Promise<void>;
}

export interface ConsumeOptions {
  /** Jobs run at once by this consumer. */
  concurrency: number;
  /**
   * Of those, how many one org may hold (default: all). Below `concurrency`, a slot stays free for
   * another org's document while one org has a backlog, so it starts without waiting for one of
   * the first org's jobs to end. The table queues honour it; BullMQ has no way to pass a job over
   * and ignores it (docs/SCALING.md).
   */
  maxPerOrg?: number;
}

export interface JobQueue {
  /**
   * Idempotent: a document already queued is not queued twice. `created`: the documents were
   * created just now by DocumentStore.createDocuments and none of them has run, so no earlier run
   * of theirs has to be looked for (a queue that would look may skip that read).
   */
  enqueue(jobs: JobRef[], opts?: { created?: boolean }): Promise<void>;
  /**
   * Jobs are taken fairly between orgs: the next job is of the org with the fewest running, then
   * the oldest; one org's backlog does not hold another org's document back.
   */
  consume(handler: JobHandler, opts: ConsumeOptions): JobConsumer;
  /** Whether a job for this document is known to the queue (waiting, delayed or active). */
  has(documentId: string): Promise<boolean>;
  close(): Promise<void>;
}
