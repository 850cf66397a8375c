// Conformance suite for EvaluationStore and the evaluations' job queue: every backend (SQLite,
// PostgreSQL) runs these same tests.
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type {
  EvaluationReport,
  EvaluationStore,
  NewEvaluation,
  RunSummary,
} from '../../src/domain/evaluations.js';
import type { JobContext, JobQueue } from '../../src/domain/ports.js';

export interface EvaluationStoreHarness {
  store: EvaluationStore;
  /** A queue over the same rows, with these lease and retry settings. */
  queue(opts: { leaseMs: number; maxAttempts: number; backoffBaseMs: number }): JobQueue;
  close(): Promise<void>;
}

const SUMMARY: RunSummary[] = [
  {
    settings: { mode: 'keyword', rerank: false, semanticWeight: null },
    metrics: {
      ndcgAt10: 0.5,
      recallAtK: 1,
      mrrAt10: 0.5,
      latencyMs: { p50: 3, p95: 4 },
      degradedQueries: 0,
      evaluatedQueries: 1,
    },
  },
];

const REPORT: EvaluationReport = {
  queries: [{ unknown: [{ externalId: 'gone' }], evaluated: true }],
  perRun: [
    [
      {
        ndcgAt10: 0.5,
        recallAtK: 1,
        mrrAt10: 0.5,
        latencyMs: 3,
        degraded: false,
        ranks: [{ documentId: 'd1', externalId: null, grade: 1, rank: 2 }],
      },
    ],
  ],
};

function evaluation(orgId: string, createdAt: Date, overrides: Partial<NewEvaluation> = {}): NewEvaluation {
  return {
    id: `eval_${randomUUID().replaceAll('-', '')}`,
    orgId,
    name: 'a name',
    topK: 10,
    queries: [{ query: 'parental leave – ünïcödé', relevant: [{ ref: { documentId: 'd1' }, grade: 2 }] }],
    runs: [{ mode: 'keyword', rerank: false, semanticWeight: null }],
    createdAt,
    ...overrides,
  };
}

async function until<T>(probe: () => Promise<T | null | undefined | false>, what: string): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export function evaluationStoreContract(name: string, make: () => Promise<EvaluationStoreHarness>): void {
  describe(name, () => {
    let h: EvaluationStoreHarness;
    let store: EvaluationStore;
    const queues: JobQueue[] = [];
    const org = () => `org_${randomUUID()}`;

    beforeEach(async () => {
      h = await make();
      store = h.store;
    });
    afterEach(async () => {
      for (const q of queues.splice(0)) await q.close();
      await h.close();
    });

    it('stores an evaluation queued, readable by its org only', async () => {
      const a = org();
      const e = evaluation(a, new Date('2026-03-01T10:00:00.000Z'));
      await store.create(e);
      const got = await store.get(a, e.id);
      expect(got).toMatchObject({
        id: e.id,
        orgId: a,
        name: 'a name',
        status: 'queued',
        topK: 10,
        queries: e.queries,
        queryCount: 1,
        runs: e.runs,
        summary: null,
        report: null,
        error: null,
        startedAt: null,
        finishedAt: null,
      });
      expect(got?.createdAt.toISOString()).toBe('2026-03-01T10:00:00.000Z');
      expect(await store.get(org(), e.id)).toBeNull();
      expect(await store.get(a, 'eval_unknown')).toBeNull();
      expect((await store.load(e.id))?.orgId).toBe(a);
    });

    it('lists an org newest first, in pages, without the queries or the per-query report', async () => {
      const a = org();
      const times = ['2026-03-01T10:00:00Z', '2026-03-02T10:00:00Z', '2026-03-03T10:00:00Z'];
      const made = [];
      for (const t of times) {
        const e = evaluation(a, new Date(t));
        await store.create(e);
        made.push(e);
      }
      await store.create(evaluation(org(), new Date('2026-03-04T10:00:00Z')));
      await store.markRunning(made[2]!.id, new Date());
      await store.complete(made[2]!.id, SUMMARY, REPORT, new Date());

      const first = await store.list(a, { limit: 2, after: null });
      expect(first.map((e) => e.id)).toEqual([made[2]!.id, made[1]!.id]);
      expect(first[0]?.summary).toEqual(SUMMARY);
      // The list reads neither the queries nor the per-query report, only how many queries.
      expect(first[0]).not.toHaveProperty('report');
      expect(first[0]).not.toHaveProperty('queries');
      expect(first[0]?.queryCount).toBe(1);
      const last = first[1]!;
      const second = await store.list(a, { limit: 2, after: { createdAt: last.createdAt, id: last.id } });
      expect(second.map((e) => e.id)).toEqual([made[0]!.id]);
    });

    it('runs, completes with its results, and refuses writes once finished', async () => {
      const a = org();
      const e = evaluation(a, new Date());
      await store.create(e);
      expect(await store.complete(e.id, SUMMARY, REPORT, new Date())).toBe(false);
      expect(await store.markRunning(e.id, new Date('2026-03-01T10:00:01Z'))).toBe(true);
      expect((await store.get(a, e.id))?.status).toBe('running');
      expect(await store.complete(e.id, SUMMARY, REPORT, new Date('2026-03-01T10:00:02Z'))).toBe(true);
      const done = await store.get(a, e.id);
      expect(done).toMatchObject({ status: 'done', summary: SUMMARY, report: REPORT, error: null });
      expect(done?.finishedAt?.toISOString()).toBe('2026-03-01T10:00:02.000Z');
      expect(await store.markRunning(e.id, new Date())).toBe(false);
      expect(await store.fail(e.id, { code: 'internal', message: 'late' }, new Date())).toBe(false);
      expect((await store.get(a, e.id))?.status).toBe('done');
    });

    it('fails a queued evaluation with its error', async () => {
      const a = org();
      const e = evaluation(a, new Date());
      await store.create(e);
      expect(await store.fail(e.id, { code: 'rerank_unavailable', message: 'no reranker' }, new Date())).toBe(
        true,
      );
      expect(await store.get(a, e.id)).toMatchObject({
        status: 'failed',
        error: { code: 'rerank_unavailable', message: 'no reranker' },
      });
    });

    it('purges one org only', async () => {
      const a = org();
      const b = org();
      await store.create(evaluation(a, new Date()));
      await store.create(evaluation(a, new Date()));
      const kept = evaluation(b, new Date());
      await store.create(kept);
      expect(await store.purgeOrg(a)).toBe(2);
      expect(await store.list(a, { limit: 10, after: null })).toEqual([]);
      expect((await store.get(b, kept.id))?.id).toBe(kept.id);
    });

    it('hands each created evaluation to a consumer as a job of its org', async () => {
      const queue = h.queue({ leaseMs: 5_000, maxAttempts: 3, backoffBaseMs: 10 });
      queues.push(queue);
      const a = org();
      const e = evaluation(a, new Date());
      await store.create(e);
      const seen: JobContext[] = [];
      const consumer = queue.consume(
        async (job) => {
          seen.push(job);
          await store.markRunning(job.documentId, new Date());
          await store.complete(job.documentId, SUMMARY, REPORT, new Date());
        },
        { concurrency: 1 },
      );
      await queue.enqueue([{ documentId: e.id, orgId: a }], { created: true });
      await until(async () => (await store.get(a, e.id))?.status === 'done', 'the evaluation to be done');
      await consumer.stop();
      expect(seen.map((j) => [j.documentId, j.orgId, j.attempt])).toEqual([[e.id, a, 1]]);
      expect(await queue.has(e.id)).toBe(false);
    });

    it('retries a job that threw, and fails the evaluation whose job ends without a result', async () => {
      const queue = h.queue({ leaseMs: 5_000, maxAttempts: 2, backoffBaseMs: 10 });
      queues.push(queue);
      const a = org();
      const e = evaluation(a, new Date());
      await store.create(e);
      const attempts: number[] = [];
      const consumer = queue.consume(
        async (job) => {
          attempts.push(job.attempt);
          await store.markRunning(job.documentId, new Date());
          throw new Error('database went away');
        },
        { concurrency: 1 },
      );
      const failed = await until(async () => {
        const got = await store.get(a, e.id);
        return got?.status === 'failed' ? got : null;
      }, 'the evaluation to fail');
      await consumer.stop();
      expect(attempts).toEqual([1, 2]);
      expect(failed.error?.code).toBe('internal');
      expect(failed.finishedAt).not.toBeNull();
    });
  });
}
