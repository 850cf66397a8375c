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

/** JobQueue.enqueue's hint of what the caller just wrote. */
export interface EnqueueHint {
  created?: boolean;
  version?: boolean;
}

export interface JobQueue {
  /**
   * Idempotent: a document already waiting is not queued twice; one enqueued while its job runs
   * runs again after that run (what it was enqueued for may be new to the run). What the caller
   * just wrote, when it knows: `created`, the documents were created by
   * DocumentStore.createDocuments and none of them has run, so no earlier run of theirs has to
   * be looked for; `version`, DocumentStore started a new version of each, which a run of an
   * older version may still be working beside. Either way a queue whose jobs are the document
   * rows finds them pending already and has nothing to read.
   */
  enqueue(jobs: JobRef[], opts?: EnqueueHint): Promise<void>;
  /**
   * Jobs are taken fairly between orgs: the next job is of the org with the fewest running, then
   * the oldest; one org's backlog does not hold another org's document back.
   */
  consume(handler: JobHandler, opts: ConsumeOptions): JobConsumer;
  /** Whether a job for this document is known to the queue (waiting, delayed or active). */
  has(documentId: string): Promise<boolean>;
  close(): Promise<void>;
}
