// JobQueue for a scale-out deployment without Redis: the job of a document is its row in the
// PostgreSQL documents table (job_* columns), as in the embedded SQLite queue. Consumers in any
// number of processes claim rows with FOR UPDATE SKIP LOCKED (never the same row twice, never
// waiting on each other), hold them with a lease renewed by a heartbeat, and a lease that lapses
// (its process died) is claimed again. Lease times come from the database clock, so hosts with
// skewed clocks agree on when a lease has ended.
//
// Two lanes share the rows, as in embedded mode: URL documents waiting for their download, and
// the rest. PgDocumentStore.attachBlob turns a finished download into a pending job of the
// process lane in the same statement, so the hand-over can neither be lost nor run twice.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { JobConsumer, JobHandler, JobQueue } from '../../domain/ports.js';
import type { JobRef } from '../../domain/types.js';
import type { PgDatabase } from '../postgres/database.js';

/**
 * Which jobs a queue instance serves: URL documents waiting for their download (`download`), the
 * rest (`process`), or all. Separate lanes let downloads of short-lived pre-signed URLs start
 * while hundreds of files wait for extraction.
 */
export type PgQueueLane = 'download' | 'process' | 'any';

const LANE_PREDICATE: Record<PgQueueLane, string> = {
  download: ' AND fetch_url IS NOT NULL',
  process: ' AND fetch_url IS NULL',
  any: '',
};

export interface PgTableQueueOptions {
  lane?: PgQueueLane;
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

export interface ClaimedJob {
  id: string;
  org_id: string;
  job_attempts: number;
}

interface RunningJob {
  row: ClaimedJob;
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

const delay = (ms: number) =>
  new Promise<void>((resolve) => {
    setTimeout(resolve, ms).unref();
  });

export class PgTableQueue implements JobQueue {
  readonly leaseMs: number;
  readonly heartbeatMs: number;
  readonly maxAttempts: number;
  readonly backoffBaseMs: number;
  readonly backoffMaxMs: number;
  readonly pollMs: number;
  readonly graceMs: number;
  private readonly onError: (error: unknown) => void;
  private readonly documents: string;
  private readonly lanePredicate: string;
  private readonly consumers = new Set<PgTableConsumer>();
  private consumerSeq = 0;

  constructor(
    private readonly db: PgDatabase,
    opts: PgTableQueueOptions = {},
  ) {
    this.lanePredicate = LANE_PREDICATE[opts.lane ?? 'any'];
    this.leaseMs = opts.leaseMs ?? 30_000;
    this.heartbeatMs = opts.heartbeatMs ?? Math.max(1, Math.floor(this.leaseMs / 3));
    this.maxAttempts = opts.maxAttempts ?? 5;
    this.backoffBaseMs = opts.backoffBaseMs ?? 1000;
    this.backoffMaxMs = opts.backoffMaxMs ?? 60_000;
    this.pollMs = opts.pollMs ?? 250;
    this.graceMs = opts.graceMs ?? 10_000;
    this.onError = opts.onError ?? (() => {});
    this.documents = db.table('documents');
  }

  async enqueue(jobs: JobRef[], opts: { created?: boolean } = {}): Promise<void> {
    // Just created: each row's job is already pending; the UPDATE would be a round trip for nothing.
    if (jobs.length > 0 && opts.created !== true) {
      // The rows already exist (created with the document, job_state 'pending'). Pending or
      // leased jobs are left as they are, which is what makes enqueue idempotent. A finished job
      // is revived only while its document still waits (status queued): the reconciler's case.
      // A document that reached ready or failed before a late enqueue is not run again.
      await this.db.query(
        `UPDATE ${this.documents} SET job_state = 'pending', run_at = now(), job_attempts = 0,
           lease_owner = NULL, lease_until = NULL
         WHERE id = ANY($1::text[]) AND job_state = 'done' AND status = 'queued'`,
        [jobs.map((j) => j.documentId)],
      );
    }
    for (const c of this.consumers) c.wake();
  }

  consume(handler: JobHandler, opts: { concurrency: number }): JobConsumer {
    this.consumerSeq += 1;
    const owner = `${HOST}/${process.pid}/${PROCESS_TOKEN}/${this.consumerSeq}`;
    const consumer = new PgTableConsumer(
      this,
      handler,
      Math.max(1, Math.floor(opts.concurrency)),
      owner,
      () => this.consumers.delete(consumer),
    );
    this.consumers.add(consumer);
    consumer.start(this.reclaimDeadLeases().catch((err: unknown) => this.reportError(err)));
    return consumer;
  }

  async has(documentId: string): Promise<boolean> {
    const { rows } = await this.db.query<{ job_state: string }>(
      `SELECT job_state FROM ${this.documents} WHERE id = $1`,
      [documentId],
    );
    const state = rows[0]?.job_state;
    return state === 'pending' || state === 'leased';
  }

  async close(): Promise<void> {
    await Promise.all([...this.consumers].map((c) => c.stop()));
  }

  // ---- used by PgTableConsumer ----

  reportError(error: unknown): void {
    try {
      this.onError(error);
    } catch {
      // A failing error reporter must not take the consumer loop down.
    }
  }

  backoffMs(attempt: number): number {
    return Math.min(this.backoffMaxMs, this.backoffBaseMs * 2 ** Math.max(0, attempt - 1));
  }

  /** Takes one due job (a lapsed lease first, then the oldest pending), or null. */
  async claim(owner: string): Promise<ClaimedJob | null> {
    // SKIP LOCKED: rows another consumer is claiming at this instant are passed over rather than
    // waited for, so concurrent claimers each get a different row. The two candidate lists use
    // the two partial indexes; each stays a short index scan however long the backlog is.
    const lane = this.lanePredicate;
    const { rows } = await this.db.query<ClaimedJob>(
      `WITH lapsed AS (
         SELECT id FROM ${this.documents} WHERE job_state = 'leased' AND lease_until < now()${lane}
         ORDER BY lease_until LIMIT 1 FOR UPDATE SKIP LOCKED
       ), due AS (
         SELECT id FROM ${this.documents} WHERE job_state = 'pending' AND run_at <= now()${lane}
         ORDER BY run_at LIMIT 1 FOR UPDATE SKIP LOCKED
       ), next AS (
         SELECT id FROM (SELECT id, 0 AS rank FROM lapsed UNION ALL SELECT id, 1 FROM due) AS candidates
         ORDER BY rank LIMIT 1
       )
       UPDATE ${this.documents} AS d
       SET job_state = 'leased', lease_owner = $1, lease_until = now() + $2 * interval '1 millisecond',
           job_attempts = d.job_attempts + 1
       FROM next WHERE d.id = next.id
       RETURNING d.id, d.org_id, d.job_attempts`,
      [owner, this.leaseMs],
    );
    return rows[0] ?? null;
  }

  /** Extends the leases of `jobs`; returns the ids that are no longer ours (re-claimed or deleted). */
  async renew(owner: string, jobs: ClaimedJob[]): Promise<Set<string>> {
    const { rows } = await this.db.query<{ id: string }>(
      `UPDATE ${this.documents} AS d SET lease_until = now() + $1 * interval '1 millisecond'
       FROM unnest($2::text[], $3::int[]) AS held (id, attempts)
       WHERE d.id = held.id AND d.job_attempts = held.attempts
         AND d.job_state = 'leased' AND d.lease_owner = $4
       RETURNING d.id`,
      [this.leaseMs, jobs.map((j) => j.id), jobs.map((j) => j.job_attempts), owner],
    );
    const held = new Set(rows.map((r) => r.id));
    return new Set(jobs.map((j) => j.id).filter((id) => !held.has(id)));
  }

  /** Records how a run ended; guarded by owner and attempt so a stale run cannot overwrite a newer one. */
  async settle(
    owner: string,
    row: ClaimedJob,
    next: { state: 'done' } | { state: 'pending'; delayMs: number },
  ): Promise<void> {
    await this.db.query(
      `UPDATE ${this.documents}
       SET job_state = $1,
           run_at = CASE WHEN $2::int IS NULL THEN run_at ELSE now() + $2::int * interval '1 millisecond' END,
           lease_owner = NULL, lease_until = NULL
       WHERE id = $3 AND job_state = 'leased' AND lease_owner = $4 AND job_attempts = $5`,
      [next.state, next.state === 'pending' ? next.delayMs : null, row.id, owner, row.job_attempts],
    );
  }

  /**
   * Leases held by a process of this host that no longer exists are released at once, so a
   * restarted process (same container, same hostname) resumes its jobs without waiting for the
   * leases to lapse. Processes on other hosts are left to their leases.
   */
  private async reclaimDeadLeases(): Promise<void> {
    const prefix = `${HOST}/`;
    const { rows } = await this.db.query<{ id: string; lease_owner: string }>(
      `SELECT id, lease_owner FROM ${this.documents}
       WHERE job_state = 'leased' AND starts_with(lease_owner, $1)${this.lanePredicate}`,
      [prefix],
    );
    for (const { id, lease_owner } of rows) {
      const owner = parseOwner(lease_owner);
      if (!owner || owner.host !== HOST) continue;
      // Our own pid with another token is a previous process that had our pid: it is gone.
      const dead = owner.pid === process.pid ? owner.token !== PROCESS_TOKEN : !processIsAlive(owner.pid);
      if (!dead) continue;
      await this.db.query(
        `UPDATE ${this.documents} SET job_state = 'pending', run_at = now(), lease_owner = NULL, lease_until = NULL
         WHERE id = $1 AND job_state = 'leased' AND lease_owner = $2`,
        [id, lease_owner],
      );
    }
  }
}

class PgTableConsumer implements JobConsumer {
  private readonly running = new Map<string, RunningJob>();
  private stopping = false;
  private stopped: Promise<void> | null = null;
  private loopDone: Promise<void> = Promise.resolve();
  private heartbeat: NodeJS.Timeout | null = null;
  private renewing = false;
  private wakeUp: (() => void) | null = null;

  constructor(
    private readonly queue: PgTableQueue,
    private readonly handler: JobHandler,
    private readonly concurrency: number,
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
    const wakeUp = this.wakeUp;
    this.wakeUp = null;
    wakeUp?.();
  }

  stop(): Promise<void> {
    this.stopped ??= this.shutdown();
    return this.stopped;
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      let claimed: ClaimedJob | null = null;
      if (this.running.size < this.concurrency) {
        try {
          claimed = await this.queue.claim(this.owner);
        } catch (err) {
          this.queue.reportError(err);
        }
      }
      // Claimed while stop() began: the lease is ours, so hand the job straight back.
      if (claimed && this.stopping) {
        await this.queue
          .settle(this.owner, claimed, { state: 'pending', delayMs: 0 })
          .catch((err: unknown) => this.queue.reportError(err));
        break;
      }
      if (claimed) {
        this.run(claimed);
        continue;
      }
      await this.sleep(this.queue.pollMs);
    }
  }

  private sleep(ms: number): Promise<void> {
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

  private run(row: ClaimedJob): void {
    const job: RunningJob = {
      row,
      controller: new AbortController(),
      done: Promise.resolve(),
      lost: false,
      stopping: false,
      abandoned: false,
      finished: false,
    };
    this.running.set(row.id, job);
    job.done = (async () => {
      let threw = false;
      try {
        await this.handler({
          documentId: row.id,
          orgId: row.org_id,
          attempt: row.job_attempts,
          maxAttempts: this.queue.maxAttempts,
          signal: job.controller.signal,
        });
      } catch {
        threw = true;
      }
      job.finished = true;
      if (!job.lost && !job.abandoned) await this.record(job, threw);
      this.running.delete(row.id);
      this.wake();
    })();
  }

  private async record(job: RunningJob, threw: boolean): Promise<void> {
    const { row } = job;
    try {
      if (!threw) {
        await this.queue.settle(this.owner, row, { state: 'done' });
      } else if (job.stopping) {
        // Interrupted by shutdown, not failed: hand it to the next consumer straight away.
        await this.queue.settle(this.owner, row, { state: 'pending', delayMs: 0 });
      } else if (row.job_attempts < this.queue.maxAttempts) {
        await this.queue.settle(this.owner, row, {
          state: 'pending',
          delayMs: this.queue.backoffMs(row.job_attempts),
        });
      } else {
        await this.queue.settle(this.owner, row, { state: 'done' });
      }
    } catch (err) {
      // The lease lapses and the job runs again: at least once, never lost.
      this.queue.reportError(err);
    }
  }

  private async renewLeases(): Promise<void> {
    if (this.renewing) return;
    const held = [...this.running.values()].filter((j) => !j.lost && !j.abandoned && !j.finished);
    if (held.length === 0) return;
    this.renewing = true;
    try {
      const lost = await this.queue.renew(
        this.owner,
        held.map((j) => j.row),
      );
      for (const job of held) {
        // A job settled while the renewal was in flight is no longer leased, but not lost either.
        if (!lost.has(job.row.id) || job.finished) continue;
        job.lost = true;
        job.controller.abort(new Error('job lease lost'));
      }
    } catch (err) {
      // Unreachable database: keep going; the next beat tries again well before the lease ends.
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
      for (const job of this.running.values()) {
        job.stopping = true;
        job.controller.abort(new Error('job consumer stopping'));
      }
      if (!(await finishedInTime(this.queue.graceMs))) {
        // Handlers that ignore their signal are left behind; their leases lapse without heartbeats.
        for (const job of this.running.values()) job.abandoned = true;
      }
    }
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.onStopped();
  }
}
