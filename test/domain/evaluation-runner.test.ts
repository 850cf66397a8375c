// The evaluation job's own rules, on the SQLite store and stand-ins for search, documents, orgs
// and the rate limiter (and, for what it reads, on the real document and org stores): a job claimed after its last attempt fails the evaluation, a query the
// service refuses fails it at once, a transient failure is retried and fails it on the last
// attempt, a spent rate limit is waited for, usage is left alone, and score ties follow trec_eval.
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Database, openSqlite } from '../../src/adapters/sqlite/database.js';
import { SqliteDocumentStore } from '../../src/adapters/sqlite/document-store.js';
import { SqliteEvaluationStore } from '../../src/adapters/sqlite/evaluation-store.js';
import { SqliteKeywordIndex } from '../../src/adapters/sqlite/keyword/index.js';
import { SqliteOrgStore } from '../../src/adapters/sqlite/org-store.js';
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
import { FakeKeywordIndex, FixedClock, MemoryUsage } from './fakes.js';

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
    const ids = q.ids ?? (q.externalIds ?? []).map((externalId) => externalId.replace(/^x-/, ''));
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
  let search: FakeKeywordIndex;
  let usage: MemoryUsage;
  let limiter: ScriptedLimiter;
  let runner: EvaluationRunner;
  const clock = new FixedClock(new Date('2026-03-15T12:00:00.000Z'));

  beforeEach(() => {
    db = openSqlite(':memory:');
    store = new SqliteEvaluationStore(db, clock);
    search = new FakeKeywordIndex();
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

  it('reads the org once per run and resolves judged documents a page of ids per read, on real stores', async () => {
    // The SQLite document and org stores, each read counted on its way through.
    const orgStore = new SqliteOrgStore(db);
    await orgStore.createOrg({ id: 'org_real', name: 'o', rateLimitRpm: 600, createdAt: clock.now() });
    const documentStore = new SqliteDocumentStore(db, { keyword: new SqliteKeywordIndex(db), clock });
    const ids = Array.from({ length: 150 }, (_, i) => `doc-${i}`);
    await documentStore.createDocuments(
      ids.map((id, i) => ({
        id: randomUUID(),
        orgId: 'org_real',
        externalId: id,
        source: { type: 'text', filename: null, url: null, content_type: 'text/plain', bytes: null },
        metadata: {},
        chunkSize: 512,
        chunkOverlap: 64,
        tokenizer: 'o200k_base',
        createdAt: new Date(clock.now().getTime() + i),
        text: 'text',
        blobKey: null,
        fetchUrl: null,
      })),
    );
    const reads = { listDocuments: 0, getOrg: 0 };
    const counted = <T extends object>(target: T, method: keyof typeof reads): T =>
      new Proxy(target, {
        get(object, property, receiver) {
          const value = Reflect.get(object, property, receiver);
          if (property !== method || typeof value !== 'function') return value;
          return (...args: unknown[]) => {
            reads[method] += 1;
            return value.apply(object, args);
          };
        },
      });
    const real = new EvaluationRunner({
      store,
      documents: counted(documentStore as DocumentStore, 'listDocuments'),
      orgs: counted(orgStore as OrgStore, 'getOrg'),
      query: new QueryService(search, new UsageService(usage, clock)),
      rateLimiter: limiter,
      clock,
    });
    // 30 queries of 5 judged documents each: 150 external_ids, and one that no document has.
    await store.create({
      id: 'eval_real',
      orgId: 'org_real',
      name: null,
      topK: 10,
      queries: Array.from({ length: 30 }, (_, q) => ({
        query: `query ${q}`,
        relevant: [
          ...ids.slice(q * 5, q * 5 + 5).map((externalId) => ({ ref: { externalId }, grade: 1 })),
          ...(q === 0 ? [{ ref: { externalId: 'no-such-document' }, grade: 1 }] : []),
        ],
      })),
      runs: [KEYWORD, KEYWORD],
      createdAt: clock.now(),
    });
    await real.handle({ ...job(1), documentId: 'eval_real', orgId: 'org_real' });
    const done = await store.get('org_real', 'eval_real');
    expect(done?.status).toBe('done');
    expect(done?.report?.queries[0]).toEqual({
      unknown: [{ externalId: 'no-such-document' }],
      evaluated: true,
    });
    expect(done?.report?.queries.slice(1).every((q) => q.unknown.length === 0)).toBe(true);
    // 151 external_ids in pages of 100; the org read once for 60 rate-limited queries.
    expect(reads).toEqual({ listDocuments: 2, getOrg: 1 });
    expect(limiter.keys).toHaveLength(60);
  });
});
