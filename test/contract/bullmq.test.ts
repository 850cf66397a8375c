// Runs the JobQueue contract against BullmqJobQueue on a real Redis, each test under a key prefix
// of its own that is deleted afterwards; plus the BullMQ specifics: the job id is the document
// id, and a Redis that cannot be reached fails the producer fast instead of hanging a request.
import { randomUUID } from 'node:crypto';
import { Worker } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { BullmqJobQueue } from '../../src/adapters/bullmq/bullmq-queue.js';
import { checkServices, deleteRedisPrefix, describeScaleOut, freshPrefix } from '../scale-out/services.js';
import { jobQueueContract } from './job-queue.contract.js';
import { waitFor } from './support.js';

const services = await checkServices(['REDIS_URL']);
const url = services.urls.REDIS_URL ?? '';

describeScaleOut('BullMQ adapters', services, () => {
  jobQueueContract('BullmqJobQueue', async (opts) => {
    const prefix = freshPrefix();
    const queue = new BullmqJobQueue({
      url,
      prefix,
      leaseMs: opts.leaseMs,
      maxAttempts: opts.maxAttempts,
      backoffBaseMs: opts.backoffBaseMs,
      graceMs: opts.graceMs,
    });
    await queue.ready(5000);
    const abandoners: Worker[] = [];
    return {
      queue,
      // BullMQ keeps its jobs in Redis: nothing to create before enqueueing.
      addJobs: async () => {},
      startVersion: async () => {},
      // A worker that takes the next job with a lock and then vanishes: it never renews the lock,
      // completes or fails the job.
      claimAndAbandon: async () => {
        const worker = new Worker(queue.name, undefined, {
          connection: { url, maxRetriesPerRequest: null },
          prefix,
          lockDuration: opts.leaseMs,
          autorun: false,
          skipStalledCheck: true,
        });
        abandoners.push(worker);
        const job = await worker.getNextJob(randomUUID(), { block: false });
        return job?.id ?? null;
      },
      async close() {
        await queue.close();
        await Promise.all(abandoners.map((w) => w.close(true)));
        await deleteRedisPrefix(url, prefix);
      },
    };
  });

  describe('BullMQ specifics', () => {
    it('names each job after its document, so one document is one job', async () => {
      const prefix = freshPrefix();
      const queue = new BullmqJobQueue({ url, prefix });
      try {
        const ref = { documentId: randomUUID(), orgId: `org_${randomUUID()}` };
        await queue.enqueue([ref, ref]);
        await queue.enqueue([ref]);
        const seen: string[] = [];
        const consumer = queue.consume(
          async (job) => {
            seen.push(job.documentId);
          },
          { concurrency: 2 },
        );
        await waitFor('the job', () => seen.length === 1);
        await waitFor('the job to be forgotten', async () => !(await queue.has(ref.documentId)), 2000);
        await consumer.stop();
        expect(seen).toEqual([ref.documentId]);
        // Finished jobs are removed, so the reconciler can enqueue the document again.
        await queue.enqueue([ref]);
        expect(await queue.has(ref.documentId)).toBe(true);
      } finally {
        await queue.close();
        await deleteRedisPrefix(url, prefix);
      }
    });
  });
});

describe('Redis unreachable (BullMQ)', () => {
  it('fails enqueue and has() within the command timeout instead of hanging', async () => {
    // Port 1 on loopback: nothing listens.
    const errors: unknown[] = [];
    const queue = new BullmqJobQueue({
      url: 'redis://127.0.0.1:1',
      prefix: freshPrefix(),
      commandTimeoutMs: 500,
      onError: (e) => errors.push(e),
    });
    try {
      const t0 = Date.now();
      await expect(queue.enqueue([{ documentId: randomUUID(), orgId: 'org_x' }])).rejects.toThrow();
      await expect(queue.has(randomUUID())).rejects.toThrow();
      await expect(queue.ping()).rejects.toThrow();
      expect(Date.now() - t0).toBeLessThan(3000);
    } finally {
      await queue.close();
    }
  });
});
