// JobQueue on BullMQ (Redis) for scale-out deployments: API processes enqueue, `docindex worker`
// processes consume. The job id is the document id, so enqueueing a document twice (a retried
// request, the reconciler racing the original enqueue) never makes two jobs; one enqueued while
// its job runs (a new version) runs once more after it (reruns.ts). A job's lock is its
// lease: a worker that dies stops renewing it, and BullMQ's stalled-job check hands the job to
// another worker once the lock has lapsed.
import { hostname } from 'node:os';
import { type Job, Queue, type RedisOptions, WaitingError, Worker } from 'bullmq';
import { exponentialBackoffMs } from '../../domain/backoff.js';
import type {
  ConsumeOptions,
  EnqueueHint,
  JobConsumer,
  JobContext,
  JobHandler,
  JobQueue,
} from '../../domain/ports.js';
import { withTimeout } from '../../domain/timeout.js';
import type { JobRef } from '../../domain/types.js';
import { FairPriorities } from './fair-priority.js';
import { Reruns } from './reruns.js';

export interface BullmqJobQueueOptions {
  /** redis:// or rediss:// URL. */
  url: string;
  /** Prefix of every BullMQ key (config REDIS_PREFIX), so deployments can share one Redis. */
  prefix: string;
  name?: string;
  /** Lock duration of a running job: a dead worker's job runs again once it lapses (default 30 s). */
  leaseMs?: number;
  /** How often workers look for lapsed locks (default leaseMs / 2, so a lapsed lock is found within one lease). */
  stalledIntervalMs?: number;
  /** Tries per job, the first included (default 5). */
  maxAttempts?: number;
  /** Retry n waits backoffBaseMs × 2^(n-1), at most backoffMaxMs (defaults 1 s and 60 s). */
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  /** stop(): time running jobs get to finish before their signals abort, and again after (default 10 s). */
  graceMs?: number;
  /** Redis commands of the producer side (enqueue, has) fail after this instead of waiting (default 2 s). */
  commandTimeoutMs?: number;
  /** Redis and BullMQ errors (connection loss, lock renewal failures); the queue keeps going. */
  onError?: (error: unknown) => void;
}

/** Payload of a job. `v` lets a later release read jobs queued by an earlier one. */
interface DocumentJobData {
  v: 1;
  documentId: string;
  orgId: string;
  /** The W3C traceparent of the span that queued the job, when tracing is on. */
  tp?: string;
}

const JOB_NAME = 'process-document';
const WORKER_NAME = `${hostname()}/${process.pid}`;
const BACKOFF_TYPE = 'docindex-capped-exponential';

const delay = (ms: number) =>
  new Promise<void>((resolve) => {
    setTimeout(resolve, ms).unref();
  });

/** BullMQ job states in which the job will still run (or is running). */
const LIVE_STATES = new Set(['waiting', 'active', 'delayed', 'prioritized', 'waiting-children']);

export class BullmqJobQueue implements JobQueue {
  readonly name: string;
  readonly prefix: string;
  readonly leaseMs: number;
  readonly stalledIntervalMs: number;
  readonly maxAttempts: number;
  readonly backoffBaseMs: number;
  readonly backoffMaxMs: number;
  readonly graceMs: number;
  private readonly url: string;
  private readonly commandTimeoutMs: number;
  private readonly onError: (error: unknown) => void;
  private readonly queue: Queue<DocumentJobData>;
  private readonly fair: FairPriorities;
  private readonly reruns: Reruns;
  private readonly consumers = new Set<BullmqConsumer>();

  constructor(opts: BullmqJobQueueOptions) {
    this.url = opts.url;
    this.prefix = opts.prefix;
    this.name = opts.name ?? 'documents';
    this.leaseMs = opts.leaseMs ?? 30_000;
    this.stalledIntervalMs = opts.stalledIntervalMs ?? Math.max(50, Math.floor(this.leaseMs / 2));
    this.maxAttempts = opts.maxAttempts ?? 5;
    this.backoffBaseMs = opts.backoffBaseMs ?? 1000;
    this.backoffMaxMs = opts.backoffMaxMs ?? 60_000;
    this.graceMs = opts.graceMs ?? 10_000;
    this.commandTimeoutMs = opts.commandTimeoutMs ?? 2_000;
    this.onError = opts.onError ?? (() => {});
    this.queue = new Queue<DocumentJobData>(this.name, {
      prefix: this.prefix,
      // Producer calls sit on the request path: with Redis down they fail at once (the document
      // is already committed and the reconciler enqueues it later) instead of queueing commands
      // in memory until Redis returns.
      connection: {
        url: this.url,
        enableOfflineQueue: false,
        maxRetriesPerRequest: 1,
        commandTimeout: this.commandTimeoutMs,
      } as RedisOptions,
    });
    this.queue.on('error', (error) => this.reportError(error));
    this.fair = new FairPriorities(this.queue);
    this.reruns = new Reruns(this.queue);
  }

  /** Resolves once the producer connection is up (BullMQ's scripts loaded); rejects after timeoutMs. */
  async ready(timeoutMs: number): Promise<void> {
    await withTimeout(this.queue.waitUntilReady(), timeoutMs, 'Redis did not answer');
  }

  /** Readiness: a round trip to Redis on the producer connection. */
  async ping(): Promise<void> {
    await this.producerCall(() => this.queue.getJobCounts('waiting'));
  }

  /**
   * Until its first connection BullMQ holds producer calls back rather than failing them (the
   * offline queue setting only applies afterwards): bound them so that a process started while
   * Redis is down answers instead of hanging.
   */
  private producerCall<T>(call: () => Promise<T>): Promise<T> {
    return withTimeout(call(), this.commandTimeoutMs, 'Redis did not answer');
  }

  async enqueue(jobs: JobRef[], opts: EnqueueHint = {}): Promise<void> {
    if (jobs.length === 0) return;
    // A job id that already exists (waiting, delayed or running) makes BullMQ skip the add; a
    // running one is marked to run again once it ends (reruns.ts). Just created documents have no
    // job yet. Finished jobs are removed at once, so the reconciler can enqueue a document again.
    // Priorities take turns between orgs (fair-priority.ts). The marks and the priorities go out
    // together; both come before the add, which a mark set after it could miss.
    await this.producerCall(async () => {
      const [, priorities] = await Promise.all([
        opts.created === true ? undefined : this.reruns.mark(jobs),
        this.fair.assign(jobs.map((j) => j.orgId)),
      ]);
      return this.queue.addBulk(
        jobs.map((j, i) => ({
          name: JOB_NAME,
          data: {
            v: 1 as const,
            documentId: j.documentId,
            orgId: j.orgId,
            ...(j.traceparent ? { tp: j.traceparent } : {}),
          },
          opts: {
            jobId: j.documentId,
            priority: priorities[i] ?? 1,
            attempts: this.maxAttempts,
            backoff: { type: BACKOFF_TYPE },
            removeOnComplete: true,
            removeOnFail: true,
          },
        })),
      );
    });
  }

  /** `maxPerOrg` is not honoured: a BullMQ worker cannot pass a job over (docs/SCALING.md). */
  consume(handler: JobHandler, opts: ConsumeOptions): JobConsumer {
    const consumer = new BullmqConsumer(this, handler, Math.max(1, Math.floor(opts.concurrency)), () =>
      this.consumers.delete(consumer),
    );
    this.consumers.add(consumer);
    return consumer;
  }

  async has(documentId: string): Promise<boolean> {
    return LIVE_STATES.has(await this.producerCall(() => this.queue.getJobState(documentId)));
  }

  async close(): Promise<void> {
    await Promise.all([...this.consumers].map((c) => c.stop()));
    await this.queue.close();
  }

  // ---- used by BullmqConsumer ----

  reportError(error: unknown): void {
    try {
      this.onError(error);
    } catch {
      // A failing error reporter must not take a worker down.
    }
  }

  /** A worker starts a job: the orgs' round robin moves on to its priority. */
  async started(priority: number | undefined): Promise<void> {
    try {
      await this.fair.started(priority ?? 0);
    } catch (error) {
      // Only the order of later jobs depends on it; the job itself runs.
      this.reportError(error);
    }
  }

  /** A job ended (done, failed, or failed with a retry ahead): adds it anew if it was marked while it ran. */
  async ended(job: Job<DocumentJobData>): Promise<void> {
    try {
      const rerun = await this.reruns.take(job.data.documentId);
      if (rerun === null) return;
      await this.enqueue([
        { documentId: job.data.documentId, orgId: job.data.orgId, traceparent: rerun.traceparent },
      ]);
    } catch (error) {
      // The document stays unfinished with no job: the reconciler enqueues it.
      this.reportError(error);
    }
  }

  backoffMs(attemptsMade: number): number {
    return exponentialBackoffMs(attemptsMade - 1, { baseMs: this.backoffBaseMs, maxMs: this.backoffMaxMs });
  }

  createWorker(processor: (job: Job<DocumentJobData>, token?: string) => Promise<void>, concurrency: number) {
    return new Worker<DocumentJobData>(this.name, processor, {
      // Recorded on each job it takes (processedBy): which process ran, or holds, a job.
      name: WORKER_NAME,
      prefix: this.prefix,
      // Workers block on Redis for new jobs: BullMQ needs maxRetriesPerRequest null on that
      // connection and reconnects by itself when Redis comes back.
      connection: { url: this.url, maxRetriesPerRequest: null } as RedisOptions,
      concurrency,
      lockDuration: this.leaseMs,
      stalledInterval: this.stalledIntervalMs,
      // A stall (the worker died) is not a failure of the document: let it run again as often as
      // it may be retried. The handler sees stalls in `attempt` and gives up on the last one.
      maxStalledCount: this.maxAttempts,
      settings: { backoffStrategy: (attemptsMade: number) => this.backoffMs(attemptsMade) },
    });
  }
}

interface RunningJob {
  controller: AbortController;
  /** Aborted by stop(): a throw hands the job back instead of counting as a failure. */
  stopping: boolean;
  done: Promise<void>;
}

class BullmqConsumer implements JobConsumer {
  private readonly worker: Worker<DocumentJobData>;
  private readonly running = new Map<string, RunningJob>();
  /** ended() calls under way; stop() waits for them. */
  private readonly ending = new Set<Promise<void>>();
  private stopping = false;
  private stopped: Promise<void> | null = null;

  constructor(
    private readonly queue: BullmqJobQueue,
    private readonly handler: JobHandler,
    concurrency: number,
    private readonly onStopped: () => void,
  ) {
    this.worker = queue.createWorker((job, token) => this.process(job, token), concurrency);
    this.worker.on('error', (error) => queue.reportError(error));
    // Another worker may run the job now: tell the handler to stop writing.
    this.worker.on('lockRenewalFailed', (jobIds) => {
      for (const id of jobIds) this.running.get(id)?.controller.abort(new Error('job lock lost'));
    });
    const ended = (job: Job<DocumentJobData> | undefined) => {
      if (!job) return;
      const call = queue.ended(job).finally(() => this.ending.delete(call));
      this.ending.add(call);
    };
    this.worker.on('completed', ended);
    this.worker.on('failed', ended);
  }

  stop(): Promise<void> {
    this.stopped ??= this.shutdown();
    return this.stopped;
  }

  private async process(job: Job<DocumentJobData>, token: string | undefined): Promise<void> {
    const id = job.id ?? job.data.documentId;
    if (this.stopping) {
      // Fetched while stop() began: back to the wait list, not counted as an attempt.
      await job.moveToWait(token);
      throw new WaitingError();
    }
    await this.queue.started(job.opts.priority);
    const run: RunningJob = { controller: new AbortController(), stopping: false, done: Promise.resolve() };
    let finish = () => {};
    run.done = new Promise<void>((resolve) => {
      finish = resolve;
    });
    this.running.set(id, run);
    const ctx: JobContext = {
      documentId: job.data.documentId,
      orgId: job.data.orgId,
      // attemptsMade counts failed tries only; a stall (a worker that died mid-job) is a try too,
      // and BullMQ keeps those in stalledCounter.
      attempt: job.attemptsMade + job.stalledCounter + 1,
      maxAttempts: this.queue.maxAttempts,
      signal: run.controller.signal,
      traceparent: job.data.tp ?? null,
      // The time it was added, which is when a first try was queued; a retry's wait is its backoff.
      queuedAt: job.attemptsMade + job.stalledCounter === 0 ? job.timestamp : null,
    };
    try {
      await this.handler(ctx);
    } catch (error) {
      if (run.stopping) {
        // Interrupted by shutdown, not failed: hand it to the next worker straight away.
        await job.moveToWait(token);
        throw new WaitingError();
      }
      throw error;
    } finally {
      this.running.delete(id);
      finish();
    }
  }

  private async shutdown(): Promise<void> {
    this.stopping = true;
    // Stop fetching at once, without waiting: the grace time below is ours to manage.
    await this.worker.pause(true);
    const settled = () => Promise.all([...this.running.values()].map((j) => j.done));
    const finishedInTime = async (ms: number) =>
      Promise.race([settled().then(() => true), delay(ms).then(() => false)]);
    let abandoned = false;
    if (this.running.size > 0 && !(await finishedInTime(this.queue.graceMs))) {
      for (const job of this.running.values()) {
        job.stopping = true;
        job.controller.abort(new Error('job consumer stopping'));
      }
      // Handlers that ignore their signal are left behind: a forced close stops renewing their
      // locks, so the stalled check gives their jobs to another worker.
      abandoned = !(await finishedInTime(this.queue.graceMs));
    }
    await this.worker.close(abandoned);
    await Promise.all([...this.ending]);
    this.onStopped();
  }
}
