// The evaluation job's own rules, on the SQLite store and stand-ins for search, documents, orgs
// and the rate limiter: a job claimed after its last attempt fails the evaluation, a query the
// service refuses fails it at once, a transient failure is retried and fails it on the last
// attempt, a spent rate limit is waited for, usage is left alone, and score ties follow trec_eval.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Database, openSqlite } from '../../src/adapters/sqlite/database.js';
import { SqliteEvaluationStore } from '../../src/adapters/sqlite/evaluation-store.js';
import { EvaluationRunner } from '../../src/domain/evaluation-runner.js';
import type { NewEvaluation, RunSettings } from '../../src/domain/evaluations.js';
import type {
  DocumentStore,
  JobContext,
  OrgStore,
  RateDecision,
  RateLimiter,
} from '../../src/domain/ports.js';
import { QueryService } from '../../src/domain/query.js';
import type { DocumentRecord, KeywordHit, ListQuery } from '../../src/domain/types.js';
import { UsageService } from '../../src/domain/usage.js';
import { FakeSearch, FixedClock, MemoryUsage } from './fakes.js';

const ORG = 'org_1';
const KEYWORD: RunSettings = { mode: 'keyword', rerank: false, semanticWeight: null };

function hit(documentId: string, score: number): KeywordHit {
  return {
    documentId,
    chunkIndex: 0,
    text: '',
    score,
    metadata: {},
    pageStart: null,
    pageEnd: null,
    bm25: score,
    bm25Max: 1,
  };
}

/** The documents d1…d5 of ORG, found by id or by external_id `x-<id>`. */
const documents = {
  async listDocuments(q: ListQuery): Promise<DocumentRecord[]> {
    const known = ['d1', 'd2', 'd3', 'd4', 'd5'];
    const ids = q.ids ?? (q.externalId ? [q.externalId.replace(/^x-/, '')] : []);
    return ids
      .filter((id) => known.includes(id))
      .map((id) => ({ id, externalId: `x-${id}` }) as DocumentRecord);
  },
} as unknown as DocumentStore;

const orgs = {
  async getOrg(id: string) {
    return id === ORG ? { id, name: 'o', rateLimitRpm: 600, createdAt: new Date() } : null;
  },
} as unknown as OrgStore;

class ScriptedLimiter implements RateLimiter {
  readonly keys: string[] = [];
  denials = 0;
  async consume(key: string, limit: number): Promise<RateDecision> {
    this.keys.push(key);
    if (this.denials > 0) {
      this.denials -= 1;
      return { allowed: false, limit, remaining: 0, resetSeconds: 1 };
    }
    return { allowed: true, limit, remaining: limit, resetSeconds: 60 };
  }
  async close(): Promise<void> {}
}

describe('EvaluationRunner', () => {
  let db: Database;
  let store: SqliteEvaluationStore;
  let search: FakeSearch;
  let usage: MemoryUsage;
  let limiter: ScriptedLimiter;
  let runner: EvaluationRunner;
  const clock = new FixedClock(new Date('2026-03-15T12:00:00.000Z'));

  beforeEach(() => {
    db = openSqlite(':memory:');
    store = new SqliteEvaluationStore(db, clock);
    search = new FakeSearch();
    usage = new MemoryUsage();
    limiter = new ScriptedLimiter();
    const query = new QueryService(search, new UsageService(usage, clock));
    runner = new EvaluationRunner({ store, documents, orgs, query, rateLimiter: limiter, clock });
  });
  afterEach(() => db.close());

  async function evaluation(runs: RunSettings[] = [KEYWORD], id = 'eval_1'): Promise<NewEvaluation> {
    const e: NewEvaluation = {
      id,
      orgId: ORG,
      name: null,
      topK: 10,
      queries: [
        {
          query: 'tied',
          relevant: [
            { ref: { documentId: 'd2' }, grade: 1 },
            { ref: { externalId: 'x-d9' }, grade: 1 },
          ],
        },
        { query: 'nothing known', relevant: [{ ref: { externalId: 'x-nope' }, grade: 1 }] },
      ],
      runs,
      createdAt: clock.now(),
    };
    await store.create(e);
    return e;
  }

  const job = (attempt: number, maxAttempts = 3): JobContext => ({
    documentId: 'eval_1',
    orgId: ORG,
    attempt,
    maxAttempts,
    signal: new AbortController().signal,
  });

  it('ranks score ties by document id descending, takes the rate limit per query and counts no usage', async () => {
    await evaluation();
    // d1, d2 and d3 tie below d4: trec_eval's order is d4, d3, d2, d1, so d2 (relevant) is third.
    search.hits = [hit('d1', 0.5), hit('d2', 0.5), hit('d3', 0.5), hit('d4', 0.9)];
    await runner.handle(job(1));
    const done = await store.get(ORG, 'eval_1');
    expect(done?.status).toBe('done');
    const outcome = done?.report?.perRun[0]?.[0];
    expect(outcome?.ranks).toEqual([{ documentId: 'd2', externalId: 'x-d2', grade: 1, rank: 3 }]);
    expect(outcome?.mrrAt10).toBeCloseTo(1 / 3, 12);
    expect(done?.report?.queries).toEqual([
      { unknown: [{ externalId: 'x-d9' }], evaluated: true },
      { unknown: [{ externalId: 'x-nope' }], evaluated: false },
    ]);
    expect(done?.report?.perRun[0]?.[1]).toBeNull();
    // The query reached the org's index with its text; the rate limit was taken, usage untouched.
    expect(search.queries[0]).toMatchObject({ orgId: ORG, query: 'tied' });
    expect(limiter.keys).toEqual([`org:${ORG}`]);
    expect(usage.counts.size).toBe(0);
  });

  it('waits for the next window when the rate limit is spent, then runs', async () => {
    await evaluation();
    search.hits = [hit('d2', 1)];
    limiter.denials = 1;
    await runner.handle(job(1));
    expect(limiter.keys).toHaveLength(2);
    expect((await store.get(ORG, 'eval_1'))?.summary?.[0]?.metrics.ndcgAt10).toBe(1);
  });

  it('fails an evaluation claimed after its last attempt, without running it', async () => {
    await evaluation();
    await runner.handle(job(4, 3));
    expect(await store.get(ORG, 'eval_1')).toMatchObject({
      status: 'failed',
      error: { code: 'interrupted' },
    });
    expect(search.queries).toEqual([]);
  });

  it('fails at once on a query the service refuses', async () => {
    // A semantic run on a service without embeddings (the provider removed after it was made).
    await evaluation([{ mode: 'semantic', rerank: false, semanticWeight: null }]);
    await runner.handle(job(1));
    expect(await store.get(ORG, 'eval_1')).toMatchObject({
      status: 'failed',
      error: { code: 'semantic_search_unavailable' },
    });
  });

  it('retries a transient failure, and fails the evaluation with it on the last attempt', async () => {
    await evaluation();
    search.fail = new Error('database unreachable');
    await expect(runner.handle(job(1))).rejects.toThrow('database unreachable');
    expect((await store.get(ORG, 'eval_1'))?.status).toBe('running');
    await runner.handle(job(3, 3));
    expect(await store.get(ORG, 'eval_1')).toMatchObject({ status: 'failed', error: { code: 'internal' } });
  });
});
