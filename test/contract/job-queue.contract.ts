// Conformance suite for JobQueue: the embedded table-backed queue and the BullMQ queue run these
// same tests. They pin what the worker relies on: every job runs, failures retry with backoff up
// to maxAttempts, a dead consumer's job runs again once its lease lapses, and no job ever runs
// twice at the same time.
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JobConsumer, JobContext, JobQueue } from '../../src/domain/ports.js';
import type { JobRef } from '../../src/domain/types.js';
import { deferred, sleep, waitFor } from './support.js';

/** What the contract asks of the queue under test; short times keep the suite fast. */
export interface JobQueueContractOptions {
  leaseMs: number;
  maxAttempts: number;
  /** First retry delay; retry n waits backoffBaseMs × 2^(n-1). */
  backoffBaseMs: number;
  /** stop(): how long running jobs may finish before their signals are aborted. */
  graceMs: number;
}

export interface JobQueueHarness {
  queue: JobQueue;
  /**
   * Makes jobs exist the way ingest does before it calls enqueue: the table-backed queue needs
   * document rows (that is where its jobs live); a queue with its own storage does nothing here.
   */
  addJobs(refs: JobRef[]): Promise<void>;
  /**
   * Starts a new version of the document the way a PUT does before it calls enqueue: the
   * table-backed queue's job is then due again (its row); a queue with its own storage does
   * nothing here.
   */
  startVersion(ref: JobRef): Promise<void>;
  /**
   * Claims the next due job as a consumer that dies at once: it never heartbeats, completes or
   * fails it. Returns the job's document id, or null when nothing was due.
   */
  claimAndAbandon(): Promise<string | null>;
  close(): Promise<void>;
}

export const QUEUE_CONTRACT_OPTIONS: JobQueueContractOptions = {
  leaseMs: 300,
  maxAttempts: 3,
  backoffBaseMs: 40,
  graceMs: 150,
};

interface Run {
  ctx: JobContext;
  startedAt: number;
}

export function jobQueueContract(
  name: string,
  make: (opts: JobQueueContractOptions) => Promise<JobQueueHarness>,
): void {
  const opts = QUEUE_CONTRACT_OPTIONS;

  describe(name, () => {
    let h: JobQueueHarness;
    let queue: JobQueue;
    const consumers: JobConsumer[] = [];

    beforeEach(async () => {
      h = await make(opts);
      queue = h.queue;
    });
    afterEach(async () => {
      await Promise.all(consumers.splice(0).map((c) => c.stop()));
      await h.close();
    });

    const consume = (handler: (ctx: JobContext) => Promise<void>, concurrency = 1) => {
      const c = queue.consume(handler, { concurrency });
      consumers.push(c);
      return c;
    };

    const refs = (n: number, orgId = `org_${randomUUID()}`): JobRef[] =>
      Array.from({ length: n }, () => ({ documentId: randomUUID(), orgId }));

    // As ingest does: the documents are created, then their jobs enqueued with that hint.
    async function submit(jobs: JobRef[]): Promise<void> {
      await h.addJobs(jobs);
      await queue.enqueue(jobs, { created: true });
    }

    it('runs every job once, with its org and attempt 1', async () => {
      const jobs = [...refs(10), ...refs(10)];
      await submit(jobs);
      const runs: Run[] = [];
      consume(async (ctx) => {
        runs.push({ ctx, startedAt: Date.now() });
      }, 4);
      await waitFor('all jobs to run', () => runs.length >= jobs.length);
      await sleep(opts.leaseMs * 2);
      expect(runs.map((r) => r.ctx.documentId).sort()).toEqual(jobs.map((j) => j.documentId).sort());
      const orgOf = new Map(jobs.map((j) => [j.documentId, j.orgId]));
      for (const { ctx } of runs) {
        expect(ctx.orgId).toBe(orgOf.get(ctx.documentId));
        expect(ctx.attempt).toBe(1);
        expect(ctx.maxAttempts).toBe(opts.maxAttempts);
        expect(ctx.signal.aborted).toBe(false);
      }
      for (const j of jobs) expect(await queue.has(j.documentId)).toBe(false);
    });

    it('hands each run the trace context its job was queued with, and when it was queued', async () => {
      const traced: JobRef = { ...refs(1)[0]!, traceparent: `00-${'ab'.repeat(16)}-${'cd'.repeat(8)}-01` };
      const untraced = refs(1)[0]!;
      const before = Date.now();
      await submit([traced, untraced]);
      const runs: Run[] = [];
      consume(async (ctx) => {
        runs.push({ ctx, startedAt: Date.now() });
      }, 2);
      await waitFor('both jobs to run', () => runs.length >= 2);
      const run = (id: string) => runs.find((r) => r.ctx.documentId === id)!;
      expect(run(traced.documentId).ctx.traceparent).toBe(traced.traceparent);
      expect(run(untraced.documentId).ctx.traceparent ?? null).toBeNull();
      for (const { ctx, startedAt } of runs) {
        // The database's clock or this process's: allow a second of difference between them.
        expect(ctx.queuedAt).toEqual(expect.any(Number));
        expect(ctx.queuedAt!).toBeGreaterThanOrEqual(before - 1_000);
        expect(ctx.queuedAt!).toBeLessThanOrEqual(startedAt + 1_000);
      }
    });

    it('runs jobs enqueued without the created hint (the reconciler’s way) once each', async () => {
      const jobs = refs(5);
      await h.addJobs(jobs);
      await queue.enqueue(jobs);
      await queue.enqueue(jobs, { created: true });
      const runs: string[] = [];
      consume(async (ctx) => {
        runs.push(ctx.documentId);
      }, 2);
      await waitFor('all jobs to run', () => runs.length >= jobs.length);
      await sleep(opts.leaseMs * 2);
      expect(runs.sort()).toEqual(jobs.map((j) => j.documentId).sort());
    });

    it('knows a job while it waits and runs, and forgets it when done', async () => {
      const [job] = refs(1) as [JobRef];
      await submit([job]);
      expect(await queue.has(job.documentId)).toBe(true);
      expect(await queue.has(randomUUID())).toBe(false);
      const release = deferred();
      let started = false;
      let finished = false;
      consume(async () => {
        started = true;
        await release.promise;
        finished = true;
      });
      await waitFor('the job to start', () => started);
      expect(await queue.has(job.documentId)).toBe(true);
      release.resolve();
      await waitFor('the job to finish', () => finished);
      await waitFor('the queue to forget the job', async () => !(await queue.has(job.documentId)), 2000);
    });

    it('starts a job enqueued while the consumer is idle within a second', async () => {
      let startedAt = 0;
      consume(async () => {
        startedAt = Date.now();
      });
      await sleep(100);
      const jobs = refs(1);
      const t0 = Date.now();
      await submit(jobs);
      await waitFor('the job to start', () => startedAt > 0, 1000);
      expect(startedAt - t0).toBeLessThan(1000);
    });

    it('retries a failing job with backoff, attempt by attempt, and stops at maxAttempts', async () => {
      const [job] = refs(1) as [JobRef];
      await submit([job]);
      const runs: Run[] = [];
      consume(async (ctx) => {
        runs.push({ ctx, startedAt: Date.now() });
        throw new Error('transient');
      });
      await waitFor('every attempt', () => runs.length >= opts.maxAttempts, 5000);
      await sleep(opts.backoffBaseMs * 2 ** opts.maxAttempts + opts.leaseMs * 2);
      expect(runs.map((r) => r.ctx.attempt)).toEqual(
        Array.from({ length: opts.maxAttempts }, (_, i) => i + 1),
      );
      for (let i = 1; i < runs.length; i++) {
        const gap = (runs[i] as Run).startedAt - (runs[i - 1] as Run).startedAt;
        // Timers may fire a millisecond early; the backoff itself must have been waited.
        expect(gap).toBeGreaterThanOrEqual(opts.backoffBaseMs * 2 ** (i - 1) - 2);
      }
      expect(await queue.has(job.documentId)).toBe(false);
    });

    it('stops retrying once a retry succeeds', async () => {
      const [job] = refs(1) as [JobRef];
      await submit([job]);
      const attempts: number[] = [];
      consume(async (ctx) => {
        attempts.push(ctx.attempt);
        if (ctx.attempt === 1) throw new Error('first try fails');
      });
      await waitFor('the retry', () => attempts.length >= 2);
      await sleep(opts.backoffBaseMs * 4 + opts.leaseMs * 2);
      expect(attempts).toEqual([1, 2]);
    });

    it('claims another org’s job ahead of one org’s backlog', async () => {
      // Org A queues 50 documents, then org B one. Claims are counted, not timed: with N slots,
      // B's job must be among the first N + 1 claims, not behind A's backlog.
      const slots = 3;
      const backlog = refs(50);
      await submit(backlog);
      const [other] = refs(1) as [JobRef];
      await submit([other]);
      const claims: string[] = [];
      const release = deferred();
      consume(async (ctx) => {
        claims.push(ctx.documentId);
        await release.promise;
      }, slots);
      await waitFor('every slot to hold a job', () => claims.length >= slots);
      release.resolve();
      await waitFor('the other org’s job to run', () => claims.includes(other.documentId), 10_000);
      expect(claims.indexOf(other.documentId)).toBeLessThan(slots + 1);
    });

    it('never runs more jobs at once than the concurrency', async () => {
      await submit(refs(12));
      let inFlight = 0;
      let maxInFlight = 0;
      let done = 0;
      consume(async () => {
        inFlight += 1;
        maxInFlight = Math.max(maxInFlight, inFlight);
        await sleep(60);
        inFlight -= 1;
        done += 1;
      }, 3);
      await waitFor('all jobs', () => done >= 12);
      expect(maxInFlight).toBe(3);
    });

    it('never runs one job twice at the same time, across consumers', async () => {
      const jobs = refs(30);
      await submit(jobs);
      const active = new Set<string>();
      const counts = new Map<string, number>();
      let overlaps = 0;
      const handler = async (ctx: JobContext) => {
        if (active.has(ctx.documentId)) overlaps += 1;
        active.add(ctx.documentId);
        counts.set(ctx.documentId, (counts.get(ctx.documentId) ?? 0) + 1);
        await sleep(20);
        active.delete(ctx.documentId);
      };
      consume(handler, 4);
      consume(handler, 4);
      consume(handler, 2);
      await waitFor('all jobs', () => counts.size >= jobs.length);
      await sleep(opts.leaseMs * 2);
      expect(overlaps).toBe(0);
      expect([...counts.values()].every((n) => n === 1)).toBe(true);
    });

    it('keeps a job leased while a long handler runs (no second run)', async () => {
      const [job] = refs(1) as [JobRef];
      await submit([job]);
      let calls = 0;
      const handler = async () => {
        calls += 1;
        await sleep(opts.leaseMs * 3);
      };
      consume(handler);
      await waitFor('the job to start', () => calls === 1);
      consume(handler);
      await sleep(opts.leaseMs * 4);
      expect(calls).toBe(1);
    });

    it('runs a dead consumer’s job again once its lease lapses', async () => {
      const [job] = refs(1) as [JobRef];
      await submit([job]);
      const claimedAt = Date.now();
      expect(await h.claimAndAbandon()).toBe(job.documentId);
      const runs: Run[] = [];
      consume(async (ctx) => {
        runs.push({ ctx, startedAt: Date.now() });
      });
      await waitFor('the abandoned job to run again', () => runs.length >= 1, opts.leaseMs * 10);
      await sleep(opts.leaseMs * 2);
      expect(runs).toHaveLength(1);
      expect(runs[0]?.ctx.documentId).toBe(job.documentId);
      expect(runs[0]?.ctx.attempt).toBe(2);
      expect((runs[0] as Run).startedAt - claimedAt).toBeGreaterThanOrEqual(opts.leaseMs - 5);
    });

    it('does not duplicate a job that is enqueued again, nor run it twice at once', async () => {
      const [job] = refs(1) as [JobRef];
      await submit([job]);
      await queue.enqueue([job]);
      await queue.enqueue([job, job]);
      let calls = 0;
      let running = 0;
      let most = 0;
      const release = deferred();
      consume(async () => {
        calls += 1;
        running += 1;
        most = Math.max(most, running);
        if (calls === 1) await release.promise;
        running -= 1;
      }, 4);
      await waitFor('the job to start', () => calls === 1);
      // Enqueued again while it runs: not beside it. A queue may run it once more afterwards
      // (what was enqueued may be new to the run), and only once.
      await queue.enqueue([job]);
      await queue.enqueue([job, job]);
      await sleep(100);
      expect(calls).toBe(1);
      release.resolve();
      await sleep(opts.leaseMs * 2);
      expect(calls).toBeLessThanOrEqual(2);
      expect(most).toBe(1);
    });

    it('runs a job again after a new version is enqueued while it runs', async () => {
      const [job] = refs(1) as [JobRef];
      await submit([job]);
      let calls = 0;
      const release = deferred();
      consume(async () => {
        calls += 1;
        // The first run is past its last look at the document when the new version comes.
        if (calls === 1) await release.promise;
      }, 4);
      await waitFor('the job to start', () => calls === 1);
      await h.startVersion(job);
      await queue.enqueue([job], { version: true });
      release.resolve();
      await waitFor('the job to run again', () => calls === 2);
      await sleep(opts.leaseMs * 2);
      expect(calls).toBe(2);
    });

    it('stop() waits for a running job, then takes no more', async () => {
      const [first, second] = refs(2) as [JobRef, JobRef];
      await submit([first]);
      const seen: string[] = [];
      let finished = false;
      const consumer = consume(async (ctx) => {
        seen.push(ctx.documentId);
        await sleep(Math.min(100, opts.graceMs / 2));
        finished = true;
      });
      await waitFor('the job to start', () => seen.length === 1);
      await consumer.stop();
      expect(finished).toBe(true);
      await submit([second]);
      await sleep(500);
      expect(seen).toEqual([first.documentId]);
      expect(await queue.has(second.documentId)).toBe(true);
    });

    it('stop() aborts a job that outlives the grace time, and the job runs again later', async () => {
      const [job] = refs(1) as [JobRef];
      await submit([job]);
      let aborted = false;
      let started = false;
      const consumer = consume(async (ctx) => {
        started = true;
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
        aborted = true;
        throw new Error('aborted');
      });
      await waitFor('the job to start', () => started);
      const t0 = Date.now();
      await consumer.stop();
      expect(aborted).toBe(true);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(opts.graceMs - 5);

      const again: number[] = [];
      consume(async (ctx) => {
        again.push(ctx.attempt);
      });
      await waitFor('the job to run again', () => again.length === 1, opts.leaseMs * 10);
    });

    it('close() stops its consumers', async () => {
      const [first, second] = refs(2) as [JobRef, JobRef];
      await submit([first, second]);
      const seen: string[] = [];
      const release = deferred();
      queue.consume(
        async (ctx) => {
          seen.push(ctx.documentId);
          await release.promise;
        },
        { concurrency: 1 },
      );
      await waitFor('the first job', () => seen.length === 1);
      const closed = queue.close();
      await sleep(20);
      release.resolve();
      await closed;
      await sleep(500);
      expect(seen).toHaveLength(1);
    });
  });
}
