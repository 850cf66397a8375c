// A real HTTP server on 127.0.0.1 that speaks OpenAI's POST /v1/embeddings, for the openai
// embedder's tests and benchmarks. Its vectors are deterministic bags of words: each lower-cased
// word adds to the dimension its SHA-256 picks, so texts that share words are near and a text's
// vector never changes. It can play an outage: fail with 500s, rate limit with Retry-After, hang,
// stop (connection refused) and start again on the same port, or answer after a delay.
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LoopbackHttpServer } from './loopback-http-server.js';

export interface EmbeddingsServerOptions {
  dimensions?: number;
  /** Answer each request after this many ms. */
  delayMs?: number;
  /** When set, requests must carry `Authorization: Bearer <apiKey>` (401 otherwise). */
  apiKey?: string;
  /**
   * `base64-refused`: a server that answers 400 to `encoding_format: base64`; `base64-ignored`:
   * one that answers JSON numbers whatever is asked. Default: as OpenAI, either as asked.
   */
  encodings?: 'as-asked' | 'base64-refused' | 'base64-ignored';
  /**
   * `digest`: each text's vector drawn from one SHA-256 of the whole text, for benchmarks, where
   * the provider stands for a remote service and must not take this machine's CPU from the server
   * measured (the bag of words hashes every word: ~900,000 digests for section 15's 3,500 chunks).
   * Default `bag-of-words`: texts sharing words are near, what search tests need.
   */
  vectors?: 'bag-of-words' | 'digest';
}

export interface RecordedRequest {
  model: unknown;
  input: string[];
  dimensions: unknown;
  encodingFormat: unknown;
  authorization: string | undefined;
}

/** A vector of `dimensions` values in [-1, 1) from one digest of the text (xorshift from its bytes). */
export function digestVector(text: string, dimensions: number): number[] {
  const digest = createHash('sha256').update(text).digest();
  let state = digest.readUInt32LE(0) || 1;
  const vector = new Array<number>(dimensions);
  for (let i = 0; i < dimensions; i++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    vector[i] = (state >>> 0) / 2 ** 31 - 1;
  }
  return vector;
}

/** The vector the server gives `text` (before normalisation), for assertions. */
export function bagOfWordsVector(text: string, dimensions: number): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    const digest = createHash('sha256').update(word).digest();
    vector[digest.readUInt32BE(0) % dimensions]! += digest[4]! & 1 ? 1 : -1;
  }
  // A text without words still gets a vector, so no answer is all zeros.
  if (!vector.some((v) => v !== 0)) vector[0] = 1;
  return vector;
}

export class EmbeddingsServer extends LoopbackHttpServer {
  readonly requests: RecordedRequest[] = [];
  dimensions: number;
  delayMs: number;
  /** Answer the next N requests with this status (500, 503, 429 …). */
  private failures: Array<{ status: number; retryAfter?: string }> = [];
  /** Answer the next N requests 200 with a body that holds no vectors. */
  private malformed = 0;
  private hanging = false;

  constructor(private readonly options: EmbeddingsServerOptions = {}) {
    super();
    this.dimensions = options.dimensions ?? 16;
    this.delayMs = options.delayMs ?? 0;
  }

  /**
   * The settings of a docindex that embeds through this server: the openai provider, model
   * `test-embedding`, a 500 ms timeout and no retries; `overrides` replace or add entries.
   */
  env(overrides: Record<string, string> = {}): Record<string, string> {
    return {
      EMBEDDINGS: 'openai',
      EMBEDDINGS_URL: this.url,
      EMBEDDINGS_MODEL: 'test-embedding',
      EMBEDDINGS_TIMEOUT_MS: '500',
      EMBEDDINGS_MAX_RETRIES: '0',
      ...overrides,
    };
  }

  /** The base URL to give EMBEDDINGS_URL (…/v1). */
  get url(): string {
    return `http://127.0.0.1:${this.port}/v1`;
  }

  /** Texts embedded so far (every input of every request that was answered or not). */
  get textsSeen(): number {
    return this.requests.reduce((n, r) => n + r.input.length, 0);
  }

  failNext(count: number, status: number, retryAfter?: string): void {
    for (let i = 0; i < count; i++)
      this.failures.push({ status, ...(retryAfter === undefined ? {} : { retryAfter }) });
  }

  malformedNext(count: number): void {
    this.malformed += count;
  }

  /** Ends every simulated failure (queued 5xx/429, malformed answers, hanging). */
  recover(): void {
    this.failures = [];
    this.malformed = 0;
    this.hanging = false;
  }

  /** While true, requests are read and never answered. */
  hang(on: boolean): void {
    this.hanging = on;
  }

  protected async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.method !== 'POST' || req.url !== '/v1/embeddings') {
      return send(res, 404, { error: { message: 'not found' } });
    }
    let body: { model?: unknown; input?: unknown; dimensions?: unknown; encoding_format?: unknown };
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return send(res, 400, { error: { message: 'body is not JSON' } });
    }
    const input = typeof body.input === 'string' ? [body.input] : body.input;
    if (!Array.isArray(input) || !input.every((t) => typeof t === 'string')) {
      return send(res, 400, { error: { message: 'input must be a string or a list of strings' } });
    }
    this.requests.push({
      model: body.model,
      input,
      dimensions: body.dimensions,
      encodingFormat: body.encoding_format,
      authorization: req.headers.authorization,
    });
    const encodings = this.options.encodings ?? 'as-asked';
    if (body.encoding_format === 'base64' && encodings === 'base64-refused') {
      return send(res, 400, { error: { message: "encoding_format must be 'float'" } });
    }
    if (this.options.apiKey && req.headers.authorization !== `Bearer ${this.options.apiKey}`) {
      return send(res, 401, { error: { message: 'Incorrect API key provided' } });
    }
    if (this.hanging) return;
    const failure = this.failures.shift();
    if (failure) {
      if (failure.retryAfter !== undefined) res.setHeader('retry-after', failure.retryAfter);
      return send(res, failure.status, { error: { message: `simulated ${failure.status}` } });
    }
    if (this.malformed > 0) {
      this.malformed--;
      return send(res, 200, { object: 'list', data: [] });
    }
    if (this.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
    const dimensions = typeof body.dimensions === 'number' ? body.dimensions : this.dimensions;
    const vectorOf = this.options.vectors === 'digest' ? digestVector : bagOfWordsVector;
    const base64 = body.encoding_format === 'base64' && encodings === 'as-asked';
    send(res, 200, {
      object: 'list',
      model: body.model,
      data: input.map((text, index) => {
        const vector = vectorOf(text, dimensions);
        return {
          object: 'embedding',
          index,
          embedding: base64 ? Buffer.from(Float32Array.from(vector).buffer).toString('base64') : vector,
        };
      }),
      usage: { prompt_tokens: input.length, total_tokens: input.length },
    });
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
