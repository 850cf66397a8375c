// QueryService's modes on in-memory ports: a provider that never answers (hanging past every
// timeout of its own) still leaves a hybrid query its keyword answer and a semantic query a 503,
// because a query waits for its vector only up to its deadline.
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/domain/errors.js';
import { ALL_PARTITIONS } from '../../src/domain/partitions.js';
import type { Embedder, VectorSearch } from '../../src/domain/ports.js';
import { QueryService } from '../../src/domain/query.js';
import { QueryEmbeddings } from '../../src/domain/query-embeddings.js';
import type { KeywordHit } from '../../src/domain/types.js';
import { UsageService } from '../../src/domain/usage.js';
import { FakeKeywordIndex, FixedClock, MemoryUsage } from './fakes.js';

const ORG = 'org_test';

/** Answers only by failing when the caller's signal aborts, as the openai adapter does. */
const hanging: Embedder = {
  provider: 'openai',
  model: 'm',
  dimensions: () => 4,
  embed: (_texts, opts) =>
    new Promise((_resolve, reject) => {
      opts?.signal?.addEventListener('abort', () => reject(opts.signal?.reason));
    }),
  close: async () => {},
};

const noVectors: VectorSearch = {
  profileId: async () => 1,
  search: async () => [],
  heldMemory: () => ({ partitions: 0, bytes: 0 }),
};

function hit(documentId: string, bm25: number): KeywordHit {
  const bm25Max = 10;
  const chunk = { documentId, chunkIndex: 0, text: documentId, metadata: {}, pageStart: null, pageEnd: null };
  return { ...chunk, score: bm25 / bm25Max, bm25, bm25Max };
}

function service() {
  const search = new FakeKeywordIndex();
  search.hits = [hit('a', 3), hit('b', 2)];
  const usage = new MemoryUsage();
  const query = new QueryService(search, new UsageService(usage, new FixedClock(new Date())), {
    embedder: hanging,
    embeddings: new QueryEmbeddings(hanging),
    vectors: noVectors,
    embeddingDeadlineMs: 20,
  });
  return { query, usage };
}

describe('QueryService with a provider that never answers', () => {
  it('hybrid (the default) answers the keyword hits, degraded, semantic scores null', async () => {
    const { query, usage } = service();
    const answer = await query.query(ORG, ALL_PARTITIONS, {
      query: 'x',
      topK: 10,
      filter: undefined,
      documentIds: null,
    });
    expect(answer.mode).toBe('hybrid');
    expect(answer.degraded).toBe(true);
    expect(answer.degradedReasons).toEqual(['embeddings_unavailable']);
    expect(answer.hits.map((h) => [h.documentId, h.scores])).toEqual([
      ['a', { keyword: 0.3, semantic: null, rerank: null }],
      ['b', { keyword: 0.2, semantic: null, rerank: null }],
    ]);
    // Ranked as a fusion with an empty semantic list.
    expect(answer.hits[0]!.score).toBeCloseTo(0.5 / 61, 12);
    expect([...usage.counts.values()].reduce((a, b) => a + b, 0)).toBe(1);
  });

  it('semantic answers 503 embeddings_unavailable (a timeout) and is not counted', async () => {
    const { query, usage } = service();
    const error = await query
      .query(ORG, ALL_PARTITIONS, {
        query: 'x',
        topK: 10,
        filter: undefined,
        documentIds: null,
        mode: 'semantic',
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: 'embeddings_unavailable', status: 503 });
    expect((error as ApiError).message).toMatch(/timeout/);
    expect(usage.counts.size).toBe(0);
  });
});
