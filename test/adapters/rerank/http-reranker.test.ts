// The http reranker against a rerank server on 127.0.0.1 playing each provider's dialect: the
// scores come back in the documents' order whatever order the answer lists them in; TEI's `texts`
// form is found from its refusal; documents go in batches; the key is sent as Bearer; and every
// failure is a RerankError whose code says what happened (a refused connection, a timeout, 5xx,
// 429, a 4xx refusal, and each kind of garbage).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { HttpReranker } from '../../../src/adapters/rerank/http/http-reranker.js';
import { RerankError } from '../../../src/domain/ports.js';
import { type Garbage, type RerankDialect, RerankServer } from '../../helpers/rerank-server.js';

/** The relevance the test servers give: how many times the document says the query's first word. */
const mentions = (query: string, document: string) => {
  const word = query.split(' ')[0]!.toLowerCase();
  return (
    document
      .toLowerCase()
      .split(/\W+/)
      .filter((w) => w === word).length / 10
  );
};

const DOCUMENTS = ['river', 'no match', 'river river river', 'a river and a river', 'nothing'];
const EXPECTED = DOCUMENTS.map((d) => mentions('river', d));

async function failure(promise: Promise<unknown>): Promise<RerankError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RerankError);
  return error as RerankError;
}

describe.each<RerankDialect>(['cohere', 'voyage', 'tei'])('http reranker, %s dialect', (dialect) => {
  let server: RerankServer;
  beforeAll(async () => {
    server = await new RerankServer(mentions, { dialect, apiKey: 'rk-secret' }).start();
  });
  afterAll(() => server.stop());

  it('answers one score per document, in the documents’ order, in batches', async () => {
    const reranker = new HttpReranker({
      url: `${server.url}/`,
      model: 'rerank-test-1',
      apiKey: 'rk-secret',
      timeoutMs: 5_000,
      batchSize: 2,
    });
    const before = server.requests.length;
    expect(await reranker.score('river', DOCUMENTS)).toEqual(EXPECTED);
    const sent = server.requests.slice(before);
    // The batches go at once, so they may arrive in any order.
    expect(sent.map((r) => r.documents)).toHaveLength(3);
    expect(sent.map((r) => r.documents)).toEqual(
      expect.arrayContaining([DOCUMENTS.slice(0, 2), DOCUMENTS.slice(2, 4), DOCUMENTS.slice(4)]),
    );
    for (const request of sent) {
      expect(request).toMatchObject({
        model: 'rerank-test-1',
        query: 'river',
        authorization: 'Bearer rk-secret',
      });
      if (dialect !== 'tei') expect(request.topN).toBe(request.documents.length);
    }
    // Once TEI's form is known, no request is refused for it again.
    expect(await reranker.score('river', DOCUMENTS.slice(0, 2))).toEqual(EXPECTED.slice(0, 2));
    expect(server.requests.length - before).toBe(4);
  });
});

describe('http reranker failures', () => {
  let server: RerankServer;
  let reranker: HttpReranker;
  beforeAll(async () => {
    server = await new RerankServer(mentions).start();
    reranker = new HttpReranker({ url: server.url, model: '', timeoutMs: 300, batchSize: 32 });
  });
  afterEach(() => server.recover());
  afterAll(() => server.stop());

  it('sends no model when none is configured, and accepts a URL ending in /rerank', async () => {
    const full = new HttpReranker({
      url: `${server.url}/rerank`,
      model: '',
      timeoutMs: 5_000,
      batchSize: 32,
    });
    expect(await full.score('river', ['river'])).toEqual([0.1]);
    expect(server.requests.at(-1)?.model).toBeUndefined();
  });

  it.each([
    [500, 'server_error'],
    [503, 'server_error'],
    [429, 'rate_limited'],
    [400, 'rejected'],
    [401, 'rejected'],
  ] as const)('an answer %i is %s', async (status, code) => {
    server.failNext(1, status);
    const error = await failure(reranker.score('river', DOCUMENTS));
    expect(error.code).toBe(code);
    expect(error.message).toContain(String(status));
  });

  it('a server that never answers is a timeout within RERANK_TIMEOUT_MS', async () => {
    server.hang(true);
    expect((await failure(reranker.score('river', DOCUMENTS))).code).toBe('timeout');
  });

  it.each<Garbage>(['not-json', 'no-list', 'short', 'bad-index', 'duplicate-index', 'not-a-number'])(
    'a garbage answer (%s) is bad_response',
    async (kind) => {
      server.garbageNext(kind);
      expect((await failure(reranker.score('river', DOCUMENTS))).code).toBe('bad_response');
    },
  );

  it('a port that refuses connections is unreachable', async () => {
    const gone = await new RerankServer(mentions).start();
    const url = gone.url;
    await gone.stop();
    const error = await failure(
      new HttpReranker({ url, model: '', timeoutMs: 2_000, batchSize: 8 }).score('q', ['a']),
    );
    expect(error.code).toBe('unreachable');
  });

  it('the caller’s abort ends the wait with the caller’s reason', async () => {
    server.hang(true);
    const slow = new HttpReranker({ url: server.url, model: '', timeoutMs: 60_000, batchSize: 8 });
    const controller = new AbortController();
    const pending = slow.score('river', ['river'], { signal: controller.signal });
    controller.abort(new Error('deadline'));
    await expect(pending).rejects.toThrow('deadline');
  });
});
