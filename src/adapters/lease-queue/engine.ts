// The lease-queue engine both table queues run on (SQLite embedded, PostgreSQL without Redis):
// consumers that claim a job, hold it with a heartbeat, record how the run ended, and release
// the leases of dead processes of this host. A backend supplies only its SQL, as a JobRows.
// docs/ARCHITECTURE.md ("Job queues") says how a document row doubles as its job.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { exponentialBackoffMs } from '../../domain/backoff.js';
import type { ConsumeOptions, EnqueueHint, JobConsumer, JobHandler, JobQueue } from '../../domain/ports.js';
import type { JobRef } from '../../domain/types.js';

/** A job this consumer holds: its document, and the attempt the claim counted. */
export interface LeasedJob {
  id: string;
  orgId: string;
  attempt: number;
  /** The trace the job was queued in (the row's job_traceparent); null or absent: none. */
  traceparent?: string | null;
  /** When the job became due (its run_at), milliseconds since the epoch. */
  queuedAt?: number | null;
}

/**
 * What a consumer tells a claim about whose turn it is: orgs holding their share of its slots
 * (passed over), and the orgs of its latest claims, least recent first (on a tie in running
 * jobs, an org not among them goes first, then the least recent).
 */
export interface ClaimTurn {
  skip: readonly string[];
  recent: readonly string[];
}

/** How a run ends for the queue: finished for good, or due again after `delayMs`. */
export type Settlement = { state: 'done' } | { state: 'pending'; delayMs: number };

type MaybePromise<T> = T | Promise<T>;

/**
 * A backend's job rows (a synchronous driver may answer at once). Every write that touches a held
 * job is guarded by owner and attempt, so a stale run can never overwrite a newer one. Times are
 * the backend's own clock.
 */
export interface JobRows {
  /**
   * Takes one due job for `leaseMs`, or null: a lapsed lease first; else, of the orgs with a due
   * pending job and not in `turn.skip`, the one with the fewest leased jobs in the lane (then the
   * one `turn.recent` served least recently, then the one waiting longest), its oldest due job.
   * Fair between orgs: one org's backlog never keeps another org's document waiting for more
   * than the next free slot.
   */
  claim(owner: string, leaseMs: number, turn?: ClaimTurn): MaybePromise<LeasedJob | null>;
  /** Extends the leases of `jobs`; returns the ids that are no longer ours (re-claimed or deleted). */
  renew(owner: string, jobs: readonly LeasedJob[], leaseMs: number): MaybePromise<Set<string>>;
  settle(owner: string, job: LeasedJob, next: Settlement): MaybePromise<void>;
  /**
   * Makes the finished jobs of documents still unfinished (`queued` or `processing`) pending again:
   * the reconciler's case, a document whose job was lost.
   */
  revive(documentIds: readonly string[]): MaybePromise<void>;
  /** Whether the document's job is pending or leased. */
  waiting(documentId: string): MaybePromise<boolean>;
  /** Leases whose owner name starts with `prefix`. */
  leasesStartingWith(prefix: string): MaybePromise<Array<{ id: string; owner: string }>>;
  /** Makes a job leased by `owner` pending and due at once. */
  release(id: string, owner: string): MaybePromise<void>;
  /**
   * Optional, with onAnnounced: tells consumers in other processes that jobs were enqueued (after
   * their rows committed), so that they look now rather than at their next poll.
   */
  announce?(): Promise<void>;
  /** Calls `listener` at each announce, from any process; returns the unsubscribe. */
  onAnnounced?(listener: () => void): () => void;
}

export interface LeaseQueueOptions {
  /** How long a claim stays valid without a heartbeat (default 30 s). */
  leaseMs?: number;
  /** Lease renewal interval (default leaseMs / 3). */
  heartbeatMs?: number;
  /** Tries per job, the first included (default 5). */
  maxAttempts?: number;
  /** Retry n waits backoffBaseMs × 2^(n-1), at most backoffMaxMs (defaults 1 s and 60 s). */
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  /** How often an idle consumer looks for due jobs (default 250 ms). */
  pollMs?: number;
  /** stop(): time running jobs get to finish before their signals abort, and again after (default 10 s). */
  graceMs?: number;
  /** Database errors while claiming or recording outcomes; the job's lease then lapses and it runs again. */
  onError?: (error: unknown) => void;
}

interface RunningJob {
  job: LeasedJob;
  controller: AbortController;
  done: Promise<void>;
  /** Someone else holds the lease now (it lapsed, or the document was deleted): write nothing. */
  lost: boolean;
  /** Aborted by stop(): a throw releases the job at once instead of counting as a failure. */
  stopping: boolean;
  /** stop() gave up waiting: whatever the handler does later is not recorded. */
  abandoned: boolean;
  /** The handler returned: its outcome is being recorded, the lease ends with it. */
  finished: boolean;
}

// Distinguishes this process from an earlier one with the same pid (containers restart as pid 1).
const PROCESS_TOKEN = randomUUID().slice(0, 8);
const HOST = hostname();

/**
 * Consumers are numbered across every queue of the process, not per queue: the two lanes' queues
 * share the document rows, and a download run that owned a row under the same name as the process
 * lane's consumer would finish the process lane's job when it settled its own after the hand-over
 * (the document then stayed `processing` with no job to finish it).
 */
let consumerSeq = 0;

/** Lease owners read `<hostname>/<pid>/<process token>/<consumer>`; hostnames cannot contain '/'. */
function parseOwner(owner: string): { host: string; pid: number; token: string } | null {
  const parts = owner.split('/');
  if (parts.length < 4) return null;
  const token = parts[parts.length - 2] ?? '';
  const pid = Number(parts[parts.length - 3]);
  const host = parts.slice(0, parts.length - 3).join('/');
  return Number.isInteger(pid) && pid > 0 ? { host, pid, token } : null;
}

function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** How many of its latest claims' orgs a consumer remembers, for turns between orgs. */
const RECENT_ORGS = 32;

const delay = (ms: number) =>
  new Promise<void>((resolve) => {
    setTimeout(resolve, ms).unref();
  });

export class LeaseQueue implements JobQueue {
  readonly leaseMs: number;
  readonly heartbeatMs: number;
  readonly maxAttempts: number;
  readonly backoffBaseMs: number;
  readonly backoffMaxMs: number;
  readonly pollMs: number;
  readonly graceMs: number;
  private readonly onError: (error: unknown) => void;
  private readonly consumers = new Set<LeaseConsumer>();
  /** Stops listening for other processes' announcements: set while this queue has consumers. */
  private unlisten: (() => void) | null = null;

  constructor(
    readonly rows: JobRows,
    opts: LeaseQueueOptions = {},
  ) {
    this.leaseMs = opts.leaseMs ?? 30_000;
    this.heartbeatMs = opts.heartbeatMs ?? Math.max(1, Math.floor(this.leaseMs / 3));
    this.maxAttempts = opts.maxAttempts ?? 5;
    this.backoffBaseMs = opts.backoffBaseMs ?? 1000;
    this.backoffMaxMs = opts.backoffMaxMs ?? 60_000;
    this.pollMs = opts.pollMs ?? 250;
    this.graceMs = opts.graceMs ?? 10_000;
    this.onError = opts.onError ?? (() => {});
  }

  async enqueue(jobs: JobRef[], opts: EnqueueHint = {}): Promise<void> {
    // The rows exist already (created with the document, or made pending by its new version,
    // which also took the lease from a run of an older one): nothing to write then. Otherwise
    // pending or leased jobs are left as they are, which makes enqueue idempotent, and a
    // finished job comes back only while its document still waits.
    if (jobs.length > 0 && opts.created !== true && opts.version !== true) {
      await this.rows.revive(jobs.map((j) => j.documentId));
    }
    this.wakeConsumers();
    if (jobs.length > 0 && this.rows.announce) {
      // The jobs are queued either way: a lost announcement costs another process a poll interval.
      await this.rows.announce().catch((error: unknown) => this.reportError(error));
    }
  }

  private wakeConsumers(): void {
    for (const c of this.consumers) c.wake();
  }

  consume(handler: JobHandler, opts: ConsumeOptions): JobConsumer {
    consumerSeq += 1;
    const owner = `${HOST}/${process.pid}/${PROCESS_TOKEN}/${consumerSeq}`;
    const concurrency = Math.max(1, Math.floor(opts.concurrency));
    const maxPerOrg = Math.min(concurrency, Math.max(1, Math.floor(opts.maxPerOrg ?? concurrency)));
    const consumer = new LeaseConsumer(this, handler, { concurrency, maxPerOrg }, owner, () => {
      this.consumers.delete(consumer);
      if (this.consumers.size === 0) {
        this.unlisten?.();
        this.unlisten = null;
      }
    });
    this.consumers.add(consumer);
    this.unlisten ??= this.rows.onAnnounced?.(() => this.wakeConsumers()) ?? null;
    consumer.start(this.releaseDeadLeases().catch((err: unknown) => this.reportError(err)));
    return consumer;
  }

  async has(documentId: string): Promise<boolean> {
    return this.rows.waiting(documentId);
  }

  async close(): Promise<void> {
    await Promise.all([...this.consumers].map((c) => c.stop()));
  }

  reportError(error: unknown): void {
    try {
      this.onError(error);
    } catch {
      // A failing error reporter must not take the consumer loop down.
    }
  }

  backoffMs(attempt: number): number {
    return exponentialBackoffMs(attempt - 1, { baseMs: this.backoffBaseMs, maxMs: this.backoffMaxMs });
  }

  /**
   * Leases held by a process of this host that no longer exists are released at once, so a
   * restarted process (same machine or container) resumes its jobs without waiting for the leases
   * to lapse. Processes on other hosts are left to their leases.
   */
  private async releaseDeadLeases(): Promise<void> {
    for (const { id, owner } of await this.rows.leasesStartingWith(`${HOST}/`)) {
      const parsed = parseOwner(owner);
      if (!parsed || parsed.host !== HOST) continue;
      // Our own pid with another token is a previous process that had our pid: it is gone.
      const dead = parsed.pid === process.pid ? parsed.token !== PROCESS_TOKEN : !processIsAlive(parsed.pid);
      if (dead) await this.rows.release(id, owner);
    }
  }
}

class LeaseConsumer implements JobConsumer {
  private readonly running = new Map<string, RunningJob>();
  private stopping = false;
  private stopped: Promise<void> | null = null;
  private loopDone: Promise<void> = Promise.resolve();
  private heartbeat: NodeJS.Timeout | null = null;
  private renewing = false;
  private wakeUp: (() => void) | null = null;
  /**
   * Set by a wake-up since the loop last began a claim. A wake-up that comes while a claim is in
   * flight (an asynchronous database) finds no sleep to cut short; the loop then looks again at
   * once instead of sleeping a poll interval past the job it announced.
   */
  private woken = false;
  /** The orgs of this consumer's latest claims, least recent first. */
  private readonly recent: string[] = [];

  constructor(
    private readonly queue: LeaseQueue,
    private readonly handler: JobHandler,
    private readonly slots: { concurrency: number; maxPerOrg: number },
    private readonly owner: string,
    private readonly onStopped: () => void,
  ) {}

  /** `ready`: claiming waits for the dead-lease sweep, so its jobs are not left for the lease to lapse. */
  start(ready: Promise<void>): void {
    this.heartbeat = setInterval(() => void this.renewLeases(), this.queue.heartbeatMs);
    this.heartbeat.unref();
    this.loopDone = ready.then(() => this.loop());
  }

  wake(): void {
    this.woken = true;
    const wakeUp = this.wakeUp;
    this.wakeUp = null;
    wakeUp?.();
  }

  stop(): Promise<void> {
    this.stopped ??= this.shutdown();
    return this.stopped;
  }

  private async loop(): Promise<void> {
    const { rows } = this.queue;
    while (!this.stopping) {
      let claimed: LeasedJob | null = null;
      this.woken = false;
      if (this.running.size < this.slots.concurrency) {
        try {
          claimed = await rows.claim(this.owner, this.queue.leaseMs, {
            skip: this.orgsAtShare(),
            recent: this.recent,
          });
        } catch (err) {
          this.queue.reportError(err);
        }
      }
      // Claimed while stop() began: the lease is ours, so hand the job straight back.
      if (claimed && this.stopping) {
        await this.settle(claimed, { state: 'pending', delayMs: 0 });
        break;
      }
      if (claimed) {
        this.served(claimed.orgId);
        this.run(claimed);
        // Let I/O in between claims: a backlog in a synchronous database must not monopolise
        // the event loop.
        await new Promise<void>((resolve) => setImmediate(resolve));
        continue;
      }
      await this.sleep(this.queue.pollMs);
    }
  }

  /** The org of a claim is now the most recently served. */
  private served(orgId: string): void {
    const at = this.recent.indexOf(orgId);
    if (at !== -1) this.recent.splice(at, 1);
    this.recent.push(orgId);
    if (this.recent.length > RECENT_ORGS) this.recent.shift();
  }

  /** Orgs holding their share of this consumer's slots: their next job waits for one to finish. */
  private orgsAtShare(): string[] {
    if (this.slots.maxPerOrg >= this.slots.concurrency) return [];
    const held = new Map<string, number>();
    for (const { job } of this.running.values()) held.set(job.orgId, (held.get(job.orgId) ?? 0) + 1);
    return [...held].filter(([, n]) => n >= this.slots.maxPerOrg).map(([org]) => org);
  }

  private sleep(ms: number): Promise<void> {
    if (this.woken) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.wakeUp = null;
        resolve();
      }, ms);
      timer.unref();
      this.wakeUp = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  private run(job: LeasedJob): void {
    const running: RunningJob = {
      job,
      controller: new AbortController(),
      done: Promise.resolve(),
      lost: false,
      stopping: false,
      abandoned: false,
      finished: false,
    };
    this.running.set(job.id, running);
    running.done = (async () => {
      let threw = false;
      try {
        await this.handler({
          documentId: job.id,
          orgId: job.orgId,
          attempt: job.attempt,
          maxAttempts: this.queue.maxAttempts,
          signal: running.controller.signal,
          traceparent: job.traceparent ?? null,
          queuedAt: job.queuedAt ?? null,
        });
      } catch {
        threw = true;
      }
      running.finished = true;
      if (!running.lost && !running.abandoned) await this.settle(job, this.outcome(running, threw));
      this.running.delete(job.id);
      this.wake();
    })();
  }

  private outcome(running: RunningJob, threw: boolean): Settlement {
    const { attempt } = running.job;
    if (!threw) return { state: 'done' };
    // Interrupted by shutdown, not failed: hand it to the next consumer straight away.
    if (running.stopping) return { state: 'pending', delayMs: 0 };
    if (attempt < this.queue.maxAttempts) return { state: 'pending', delayMs: this.queue.backoffMs(attempt) };
    return { state: 'done' };
  }

  private async settle(job: LeasedJob, next: Settlement): Promise<void> {
    try {
      await this.queue.rows.settle(this.owner, job, next);
    } catch (err) {
      // The lease lapses and the job runs again: at least once, never lost.
      this.queue.reportError(err);
    }
  }

  private async renewLeases(): Promise<void> {
    if (this.renewing) return;
    // A finished job is renewed too until its settlement is written (it leaves `running` then): a
    // slow settle must not let the lease lapse and another consumer run the job again.
    const held = [...this.running.values()].filter((j) => !j.lost && !j.abandoned);
    if (held.length === 0) return;
    this.renewing = true;
    try {
      const lost = await this.queue.rows.renew(
        this.owner,
        held.map((j) => j.job),
        this.queue.leaseMs,
      );
      for (const running of held) {
        // A job settled while the renewal was in flight is no longer leased, but not lost either.
        if (!lost.has(running.job.id) || running.finished) continue;
        running.lost = true;
        running.controller.abort(new Error('job lease lost'));
      }
    } catch (err) {
      // Busy or unreachable database: keep going; the next beat tries again well before the lease ends.
      this.queue.reportError(err);
    } finally {
      this.renewing = false;
    }
  }

  private async shutdown(): Promise<void> {
    this.stopping = true;
    this.wake();
    await this.loopDone;
    const settled = () => Promise.all([...this.running.values()].map((j) => j.done));
    const finishedInTime = async (ms: number) =>
      Promise.race([settled().then(() => true), delay(ms).then(() => false)]);
    if (this.running.size > 0 && !(await finishedInTime(this.queue.graceMs))) {
      for (const running of this.running.values()) {
        running.stopping = true;
        running.controller.abort(new Error('job consumer stopping'));
      }
      if (!(await finishedInTime(this.queue.graceMs))) {
        // Handlers that ignore their signal are left behind; their leases lapse without heartbeats.
        for (const running of this.running.values()) running.abandoned = true;
      }
    }
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.onStopped();
  }
}
