// JobQueue for embedded mode: the job of a document is its row in the documents table (job_*
// columns), leased by consumers with a heartbeat. Claims are single UPDATE … RETURNING statements,
// which SQLite runs under its one write lock, so consumers in several processes sharing the
// database file never take the same job.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Clock, JobConsumer, JobHandler, JobQueue } from '../../domain/ports.js';
import type { JobRef } from '../../domain/types.js';
import type { Database } from '../sqlite/database.js';
import { startProcessingSet } from '../sqlite/start-processing.js';
import { StatementCache } from '../sqlite/statements.js';

/**
 * Which jobs a queue instance serves: URL documents waiting for their download (`download`), the
 * rest (`process`), or all. Separate lanes let downloads of short-lived pre-signed URLs start
 * while hundreds of files wait for extraction.
 */
export type QueueLane = 'download' | 'process' | 'any';

const LANE_PREDICATE: Record<QueueLane, string> = {
  download: ' AND fetch_url IS NOT NULL',
  process: ' AND fetch_url IS NULL',
  any: '',
};

/**
 * Pending jobs sit in one partial index per lane (migration 3), so a lane's claim walks only its
 * own jobs, not the other lane's backlog. SQLite uses a partial index only for a query whose WHERE
 * repeats the index's WHERE, hence these exact terms; 'any' looks in both.
 */
const PENDING_PARTITIONS: Record<QueueLane, readonly string[]> = {
  download: ['fetch_url IS NOT NULL'],
  process: ['fetch_url IS NULL'],
  any: ['fetch_url IS NULL', 'fetch_url IS NOT NULL'],
};

const pendingDue = (partition: string) =>
  `FROM documents WHERE job_state = 'pending' AND run_at <= @now AND ${partition}`;

/** Whether the lane has a due job: a lapsed lease or a pending job whose time has come. */
function dueSql(lane: QueueLane): string {
  // Leased jobs are few (at most every consumer's concurrency), so one index serves every lane.
  const leased = `EXISTS (SELECT 1 FROM documents WHERE job_state = 'leased' AND lease_until < @now${LANE_PREDICATE[lane]})`;
  const pending = PENDING_PARTITIONS[lane].map((p) => `EXISTS (SELECT 1 ${pendingDue(p)})`);
  return `SELECT ${[leased, ...pending].join(' OR ')}`;
}

/** The id of the lane's oldest due pending job. */
function oldestPendingSql(lane: QueueLane): string {
  const [only, ...more] = PENDING_PARTITIONS[lane];
  if (only !== undefined && more.length === 0) return `SELECT id ${pendingDue(only)} ORDER BY run_at LIMIT 1`;
  // The oldest of each partition, read from its own index, then the older of those.
  const heads = PENDING_PARTITIONS[lane].map(
    (p) => `SELECT * FROM (SELECT id, run_at ${pendingDue(p)} ORDER BY run_at LIMIT 1)`,
  );
  return `SELECT id FROM (${heads.join(' UNION ALL ')}) ORDER BY run_at LIMIT 1`;
}

export interface SqliteTableQueueOptions {
  lane?: QueueLane;
  /** How long a claim stays valid without a heartbeat (default 30 s). */
  leaseMs?: number;
  /** Lease renewal interval (default leaseMs / 3). */
  heartbeatMs?: number;
  /** Tries per job, the first included (default 5). */
  maxAttempts?: number;
  /** Retry n waits backoffBaseMs × 2^(n-1), at most backoffMaxMs (defaults 1 s and 60 s). */
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  /** How often an idle consumer looks for due jobs (default 200 ms). */
  pollMs?: number;
  /** stop(): time running jobs get to finish before their signals abort, and again after (default 10 s). */
  graceMs?: number;
  clock?: Clock;
  /** Database errors while claiming or recording outcomes; the job's lease then lapses and it runs again. */
  onError?: (error: unknown) => void;
}

interface ClaimedRow {
  id: string;
  org_id: string;
  job_attempts: number;
}

interface RunningJob {
  row: ClaimedRow;
  controller: AbortController;
  done: Promise<void>;
  /** Someone else holds the lease now (it lapsed, or the document was deleted): write nothing. */
  lost: boolean;
  /** Aborted by stop(): a throw releases the job at once instead of counting as a failure. */
  stopping: boolean;
  /** stop() gave up waiting: whatever the handler does later is not recorded. */
  abandoned: boolean;
}

// Distinguishes this process from an earlier one with the same pid (containers restart as pid 1).
const PROCESS_TOKEN = randomUUID().slice(0, 8);
const HOST = hostname();
const systemClock: Clock = { now: () => new Date() };

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

export class SqliteTableQueue implements JobQueue {
  readonly leaseMs: number;
  readonly heartbeatMs: number;
  readonly maxAttempts: number;
  readonly backoffBaseMs: number;
  readonly backoffMaxMs: number;
  readonly pollMs: number;
  readonly graceMs: number;
  private readonly clock: Clock;
  private readonly onError: (error: unknown) => void;
  private readonly sql: StatementCache;
  private readonly consumers = new Set<TableConsumer>();
  private consumerSeq = 0;
  private readonly lanePredicate: string;
  private readonly dueSql: string;
  private readonly claimSql: string;

  constructor(db: Database, opts: SqliteTableQueueOptions = {}) {
    const lane = opts.lane ?? 'any';
    this.lanePredicate = LANE_PREDICATE[lane];
    this.dueSql = dueSql(lane);
    // The job is its document's row, so the claim also does what the processor's first step
    // would (DocumentStore.markProcessing) to a queued document: one commit per document fewer.
    this.claimSql = `UPDATE documents
      SET job_state = 'leased', lease_owner = @owner, lease_until = @leaseUntil, job_attempts = job_attempts + 1,
        ${startProcessingSet(true)}
      WHERE id = coalesce(
        (SELECT id FROM documents WHERE job_state = 'leased' AND lease_until < @now${this.lanePredicate}
         ORDER BY lease_until LIMIT 1),
        (${oldestPendingSql(lane)}))
      RETURNING id, org_id, job_attempts`;
    this.leaseMs = opts.leaseMs ?? 30_000;
    this.heartbeatMs = opts.heartbeatMs ?? Math.max(1, Math.floor(this.leaseMs / 3));
    this.maxAttempts = opts.maxAttempts ?? 5;
    this.backoffBaseMs = opts.backoffBaseMs ?? 1000;
    this.backoffMaxMs = opts.backoffMaxMs ?? 60_000;
    this.pollMs = opts.pollMs ?? 200;
    this.graceMs = opts.graceMs ?? 10_000;
    this.clock = opts.clock ?? systemClock;
    this.onError = opts.onError ?? (() => {});
    this.sql = new StatementCache(db);
  }

  async enqueue(jobs: JobRef[], opts: { created?: boolean } = {}): Promise<void> {
    // Just created: each row's job is already pending (and a read per ingest would cost the
    // accept path about 7 µs of event loop per request).
    if (jobs.length > 0 && opts.created !== true) {
      // The rows already exist (created with the document, job_state 'pending'). Pending or
      // leased jobs are left as they are, which is what makes enqueue idempotent. A finished job
      // is revived only while its document still waits (status queued): the reconciler's case.
      // A document that reached ready or failed before a late enqueue is not run again.
      const ids = JSON.stringify(jobs.map((j) => j.documentId));
      const condition = `id IN (SELECT value FROM json_each(?)) AND job_state = 'done' AND status = 'queued'`;
      // A read first: a fresh document's job is already pending, and an UPDATE finding nothing
      // would still cost every ingest a write transaction, waiting for the lock like one.
      const revivable = this.sql
        .get<[string], number>(`SELECT EXISTS (SELECT 1 FROM documents WHERE ${condition})`)
        .pluck()
        .get(ids);
      if (revivable) {
        this.sql
          .get(
            `UPDATE documents SET job_state = 'pending', run_at = ?, job_attempts = 0,
               lease_owner = NULL, lease_until = NULL
             WHERE ${condition}`,
          )
          .run(this.now(), ids);
      }
    }
    for (const c of this.consumers) c.wake();
  }

  consume(handler: JobHandler, opts: { concurrency: number }): JobConsumer {
    this.consumerSeq += 1;
    const owner = `${HOST}/${process.pid}/${PROCESS_TOKEN}/${this.consumerSeq}`;
    const consumer = new TableConsumer(this, handler, Math.max(1, Math.floor(opts.concurrency)), owner, () =>
      this.consumers.delete(consumer),
    );
    this.consumers.add(consumer);
    try {
      this.reclaimDeadLeases();
    } catch (err) {
      this.onError(err);
    }
    consumer.start();
    return consumer;
  }

  async has(documentId: string): Promise<boolean> {
    const state = this.sql
      .get<[string], string>('SELECT job_state FROM documents WHERE id = ?')
      .pluck()
      .get(documentId);
    return state === 'pending' || state === 'leased';
  }

  async close(): Promise<void> {
    await Promise.all([...this.consumers].map((c) => c.stop()));
  }

  // ---- used by TableConsumer ----

  now(): number {
    return this.clock.now().getTime();
  }

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
  claim(owner: string): ClaimedRow | null {
    const now = this.now();
    // A read first: idle polling then never takes the write lock other processes need.
    const due = this.sql.get<[{ now: number }], number>(this.dueSql).pluck().get({ now });
    if (!due) return null;
    const row = this.sql
      .get<[{ owner: string; leaseUntil: number; now: number }], ClaimedRow>(this.claimSql)
      .get({ owner, leaseUntil: now + this.leaseMs, now });
    return row ?? null;
  }

  /** Extends a lease; false when it is no longer ours (lapsed and re-claimed, or row deleted). */
  renew(owner: string, row: ClaimedRow): boolean {
    return (
      this.sql
        .get(
          `UPDATE documents SET lease_until = ?
           WHERE id = ? AND job_state = 'leased' AND lease_owner = ? AND job_attempts = ?`,
        )
        .run(this.now() + this.leaseMs, row.id, owner, row.job_attempts).changes > 0
    );
  }

  /** Records how a run ended; guarded by owner and attempt so a stale run cannot overwrite a newer one. */
  settle(
    owner: string,
    row: ClaimedRow,
    next: { state: 'done' } | { state: 'pending'; runAt: number },
  ): void {
    this.sql
      .get(
        `UPDATE documents SET job_state = ?, run_at = coalesce(?, run_at), lease_owner = NULL, lease_until = NULL
         WHERE id = ? AND job_state = 'leased' AND lease_owner = ? AND job_attempts = ?`,
      )
      .run(next.state, next.state === 'pending' ? next.runAt : null, row.id, owner, row.job_attempts);
  }

  /**
   * Leases held by a process of this host that no longer exists are released at once, so a
   * restarted embedded server resumes its jobs without waiting for the leases to lapse.
   */
  private reclaimDeadLeases(): void {
    const prefix = `${HOST}/`;
    const leased = this.sql
      .get<[number, string], { id: string; lease_owner: string }>(
        `SELECT id, lease_owner FROM documents
         WHERE job_state = 'leased' AND substr(lease_owner, 1, ?) = ?`,
      )
      .all(prefix.length, prefix);
    const release = this.sql.get(
      `UPDATE documents SET job_state = 'pending', run_at = ?, lease_owner = NULL, lease_until = NULL
       WHERE id = ? AND job_state = 'leased' AND lease_owner = ?`,
    );
    for (const { id, lease_owner } of leased) {
      const owner = parseOwner(lease_owner);
      if (!owner || owner.host !== HOST) continue;
      // Our own pid with another token is a previous process that had our pid: it is gone.
      const dead = owner.pid === process.pid ? owner.token !== PROCESS_TOKEN : !processIsAlive(owner.pid);
      if (dead) release.run(this.now(), id, lease_owner);
    }
  }
}

class TableConsumer implements JobConsumer {
  private readonly running = new Map<string, RunningJob>();
  private stopping = false;
  private stopped: Promise<void> | null = null;
  private loopDone: Promise<void> = Promise.resolve();
  private heartbeat: NodeJS.Timeout | null = null;
  private wakeUp: (() => void) | null = null;

  constructor(
    private readonly queue: SqliteTableQueue,
    private readonly handler: JobHandler,
    private readonly concurrency: number,
    private readonly owner: string,
    private readonly onStopped: () => void,
  ) {}

  start(): void {
    this.heartbeat = setInterval(() => this.renewLeases(), this.queue.heartbeatMs);
    this.heartbeat.unref();
    this.loopDone = this.loop();
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
      let claimed: ClaimedRow | null = null;
      if (this.running.size < this.concurrency) {
        try {
          claimed = this.queue.claim(this.owner);
        } catch (err) {
          this.queue.reportError(err);
        }
      }
      if (claimed) {
        this.run(claimed);
        // Let I/O in between claims: a backlog must not monopolise the event loop.
        await new Promise<void>((resolve) => setImmediate(resolve));
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

  private run(row: ClaimedRow): void {
    const job: RunningJob = {
      row,
      controller: new AbortController(),
      done: Promise.resolve(),
      lost: false,
      stopping: false,
      abandoned: false,
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
      this.running.delete(row.id);
      if (!job.lost && !job.abandoned) this.record(job, threw);
      this.wake();
    })();
  }

  private record(job: RunningJob, threw: boolean): void {
    const { row } = job;
    const now = this.queue.now();
    try {
      if (!threw) {
        this.queue.settle(this.owner, row, { state: 'done' });
      } else if (job.stopping) {
        // Interrupted by shutdown, not failed: hand it to the next consumer straight away.
        this.queue.settle(this.owner, row, { state: 'pending', runAt: now });
      } else if (row.job_attempts < this.queue.maxAttempts) {
        this.queue.settle(this.owner, row, {
          state: 'pending',
          runAt: now + this.queue.backoffMs(row.job_attempts),
        });
      } else {
        this.queue.settle(this.owner, row, { state: 'done' });
      }
    } catch (err) {
      this.queue.reportError(err);
    }
  }

  private renewLeases(): void {
    for (const job of this.running.values()) {
      if (job.lost || job.abandoned) continue;
      let held = true;
      try {
        held = this.queue.renew(this.owner, job.row);
      } catch (err) {
        // Busy database: keep going; the next beat tries again well before the lease ends.
        this.queue.reportError(err);
      }
      if (!held) {
        job.lost = true;
        job.controller.abort(new Error('job lease lost'));
      }
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
