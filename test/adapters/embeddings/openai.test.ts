// The openai embedder against a real OpenAI-protocol server on 127.0.0.1 playing outages: what
// the vector stage sees when the provider fails (a code it can act on) and what it sees when the
// provider recovers within the retries (nothing but the vectors).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  OpenAiEmbedder,
  type OpenAiEmbedderOptions,
} from '../../../src/adapters/embeddings/openai/openai-embedder.js';
import { EmbeddingError } from '../../../src/domain/ports.js';
import { QueryEmbeddings } from '../../../src/domain/query-embeddings.js';
import { bagOfWordsVector, EmbeddingsServer } from '../../helpers/embeddings-server.js';

const servers: EmbeddingsServer[] = [];
const embedders: OpenAiEmbedder[] = [];

async function setup(server: EmbeddingsServer, options: Partial<OpenAiEmbedderOptions> = {}) {
  servers.push(await server.start());
  const embedder = new OpenAiEmbedder({
    url: server.url,
    model: 'test-embedding',
    batchSize: 8,
    concurrency: 2,
    timeoutMs: 2_000,
    maxRetries: 3,
    retryBaseMs: 5,
    ...options,
  });
  embedders.push(embedder);
  return embedder;
}

async function failure(promise: Promise<unknown>): Promise<EmbeddingError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(EmbeddingError);
  return error as EmbeddingError;
}

afterEach(async () => {
  await Promise.all(embedders.splice(0).map((e) => e.close()));
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

describe('openai embedder', () => {
  it('sends the model, the configured dimensions and the API key; splits texts into batches', async () => {
    const server = new EmbeddingsServer({ apiKey: 'sk-test' });
    const embedder = await setup(server, { apiKey: 'sk-test', dimensions: 24, batchSize: 3 });
    const vectors = await embedder.embed(['a', 'b', 'c', 'd', 'e', 'f', 'g']);
    expect(vectors.map((v) => v.length)).toEqual(new Array(7).fill(24));
    expect(server.requests.map((r) => r.input.length)).toEqual([3, 3, 1]);
    expect(server.requests.every((r) => r.model === 'test-embedding' && r.dimensions === 24)).toBe(true);
    expect(server.requests.every((r) => r.authorization === 'Bearer sk-test')).toBe(true);
  });

  it('asks for base64 vectors and reads them; falls back to JSON numbers for a server without base64', async () => {
    const texts = ['otters float on kelp', 'the kelp forest', 'a cat'];
    const expected = texts.map((t) => {
      const v = bagOfWordsVector(t, 16);
      const norm = Math.hypot(...v);
      return v.map((x) => x / norm);
    });
    for (const encodings of ['as-asked', 'base64-ignored', 'base64-refused'] as const) {
      const server = new EmbeddingsServer({ encodings });
      const embedder = await setup(server);
      for (let round = 0; round < 2; round++) {
        const vectors = await embedder.embed(texts);
        for (const [i, v] of vectors.entries()) {
          for (const [d, x] of v.entries()) expect(x).toBeCloseTo(expected[i]![d]!, 6);
        }
      }
      const formats = server.requests.map((r) => r.encodingFormat);
      // A refusing server is asked in base64 once, then only ever in floats.
      expect(formats).toEqual(
        encodings === 'base64-refused' ? ['base64', 'float', 'float'] : ['base64', 'base64'],
      );
    }
  });

  it('a base64 vector that is not whole float32s is `bad_response`', async () => {
    const garbled = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ data: [{ index: 0, embedding: Buffer.from([1, 2, 3]).toString('base64') }] }));
    });
    await new Promise<void>((resolve) => garbled.listen(0, '127.0.0.1', () => resolve()));
    try {
      const embedder = new OpenAiEmbedder({
        url: `http://127.0.0.1:${(garbled.address() as AddressInfo).port}/v1`,
        model: 'test-embedding',
        batchSize: 8,
        concurrency: 1,
        timeoutMs: 2_000,
        maxRetries: 0,
      });
      embedders.push(embedder);
      const error = await failure(embedder.embed(['cat']));
      expect(error.code).toBe('bad_response');
      expect(error.message).toContain('not a list of numbers');
    } finally {
      await new Promise((resolve) => garbled.close(resolve));
    }
  });

  it('a wrong key is `rejected` at once, without retries', async () => {
    const server = new EmbeddingsServer({ apiKey: 'sk-right' });
    const embedder = await setup(server, { apiKey: 'sk-wrong' });
    const error = await failure(embedder.embed(['cat']));
    expect(error.code).toBe('rejected');
    expect(error.transient).toBe(false);
    expect(error.message).toContain('Incorrect API key');
    expect(server.requests).toHaveLength(1);
  });

  it('rides out 500s within its retries', async () => {
    const server = new EmbeddingsServer();
    const embedder = await setup(server);
    server.failNext(2, 500);
    expect(await embedder.embed(['cat', 'dog'])).toHaveLength(2);
    expect(server.requests).toHaveLength(3);
  });

  it('5xx past its retries is `server_error`, transient', async () => {
    const server = new EmbeddingsServer();
    const embedder = await setup(server, { maxRetries: 2 });
    server.failNext(10, 503);
    const error = await failure(embedder.embed(['cat']));
    expect(error.code).toBe('server_error');
    expect(error.transient).toBe(true);
    expect(server.requests).toHaveLength(3);
  });

  it('waits the Retry-After of a 429 before trying again', async () => {
    const server = new EmbeddingsServer();
    const embedder = await setup(server, { retryBaseMs: 1 });
    server.failNext(1, 429, '1');
    const started = Date.now();
    expect(await embedder.embed(['cat'])).toHaveLength(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(server.requests).toHaveLength(2);
  });

  it('a Retry-After beyond its longest wait ends the call as `rate_limited`, with the wait for the caller', async () => {
    const server = new EmbeddingsServer();
    const embedder = await setup(server, { maxRetryDelayMs: 1_000 });
    server.failNext(1, 429, '120');
    const error = await failure(embedder.embed(['cat']));
    expect(error.code).toBe('rate_limited');
    expect(error.retryAfterMs).toBe(120_000);
    expect(error.transient).toBe(true);
    expect(server.requests).toHaveLength(1);
  });

  it('a server that never answers is a `timeout` after each try', async () => {
    const server = new EmbeddingsServer();
    const embedder = await setup(server, { timeoutMs: 200, maxRetries: 1 });
    server.hang(true);
    const error = await failure(embedder.embed(['cat']));
    expect(error.code).toBe('timeout');
    expect(server.requests).toHaveLength(2);
  });

  it('a stopped server is `unreachable`; once it is back the same embedder works', async () => {
    const server = new EmbeddingsServer();
    const embedder = await setup(server, { maxRetries: 1 });
    await server.stop();
    const error = await failure(embedder.embed(['cat']));
    expect(error.code).toBe('unreachable');
    expect(error.transient).toBe(true);
    await server.start();
    expect(await embedder.embed(['cat'])).toHaveLength(1);
  });

  it('answers that are not one vector per text are `bad_response` (retried: a proxy may have garbled one)', async () => {
    const server = new EmbeddingsServer();
    const embedder = await setup(server, { maxRetries: 1 });
    server.malformedNext(2);
    const error = await failure(embedder.embed(['cat']));
    expect(error.code).toBe('bad_response');
    expect(error.message).toContain('0 vectors for 1 inputs');
    expect(server.requests).toHaveLength(2);
  });

  it('a wrong URL (404) is `rejected`, not retried', async () => {
    const server = await new EmbeddingsServer().start();
    servers.push(server);
    const embedder = new OpenAiEmbedder({
      url: `${server.url}/nothing-here`,
      model: 'm',
      batchSize: 8,
      concurrency: 1,
      timeoutMs: 2_000,
      maxRetries: 3,
    });
    embedders.push(embedder);
    expect((await failure(embedder.embed(['cat']))).code).toBe('rejected');
  });

  it('vectors whose length changes are `dimension_mismatch`', async () => {
    const server = new EmbeddingsServer({ dimensions: 16 });
    const embedder = await setup(server);
    await embedder.embed(['cat']);
    expect(embedder.dimensions()).toBe(16);
    server.dimensions = 12;
    const error = await failure(embedder.embed(['dog']));
    expect(error.code).toBe('dimension_mismatch');
    expect(error.transient).toBe(false);
  });

  it('keeps at most `concurrency` requests in flight', async () => {
    const server = new EmbeddingsServer({ delayMs: 50 });
    const embedder = await setup(server, { batchSize: 1, concurrency: 2 });
    let inFlight = 0;
    let most = 0;
    const original = server.requests.push.bind(server.requests);
    server.requests.push = (...items) => {
      inFlight++;
      most = Math.max(most, inFlight);
      setTimeout(() => inFlight--, 50);
      return original(...items);
    };
    await embedder.embed(['a', 'b', 'c', 'd', 'e', 'f']);
    expect(most).toBe(2);
  });
});

describe('query embedding cache', () => {
  it('a repeated query makes no provider call; a failed one is not cached', async () => {
    const server = new EmbeddingsServer();
    const embedder = await setup(server, { maxRetries: 0 });
    const cache = new QueryEmbeddings(embedder, 2);
    const first = await cache.vectorFor('blue river');
    expect(server.requests).toHaveLength(1);
    expect(await cache.vectorFor('blue river')).toEqual(first);
    await Promise.all([cache.vectorFor('red car'), cache.vectorFor('red car')]);
    expect(server.requests).toHaveLength(2);

    server.failNext(1, 500);
    await expect(cache.vectorFor('green apple')).rejects.toBeInstanceOf(EmbeddingError);
    await cache.vectorFor('green apple');
    expect(server.requests).toHaveLength(4);

    // Capacity 2: 'blue river' was least recently used and is asked of the provider again.
    await cache.vectorFor('blue river');
    expect(server.requests).toHaveLength(5);
  });
});
