// The `openai` embedding provider: any server that speaks OpenAI's POST /v1/embeddings (OpenAI,
// Azure, Ollama, vLLM, TEI, llama.cpp). Texts go in batches, a bounded number of requests at once;
// each request has a time cap; 429 and 5xx answers, timeouts and lost connections are retried with
// exponential backoff (a 429's Retry-After is honoured); what still fails is an EmbeddingError
// whose code says why, so the vector stage can wait out an outage instead of failing documents.
import { setTimeout as sleep } from 'node:timers/promises';
import { equalJitter, exponentialBackoffMs } from '../../../domain/backoff.js';
import { type Embedder, EmbeddingError, type EmbeddingFailureCode } from '../../../domain/ports.js';
import { ConcurrencyLimit, checkDimensions, normalise } from '../vectors.js';

export interface OpenAiEmbedderOptions {
  /** Base URL such as `http://127.0.0.1:11434/v1`, or the full `…/embeddings` URL. */
  url: string;
  model: string;
  /** Sent as `Authorization: Bearer …` when set. */
  apiKey?: string | null;
  /** Asked of the model (`dimensions` in the request) and required of its answers; null: the model's own. */
  dimensions?: number | null;
  /** Texts per request. */
  batchSize: number;
  /** Requests in flight at once, across every caller of this embedder. */
  concurrency: number;
  /** Time cap of one request, answer body included. */
  timeoutMs: number;
  /** Tries after the first one for a transient failure. */
  maxRetries: number;
  /** The first backoff; each retry doubles it (with jitter). */
  retryBaseMs?: number;
  /**
   * The longest wait between tries. A Retry-After beyond it ends the call at once with
   * rate_limited and its retryAfterMs, leaving the wait to the caller.
   */
  maxRetryDelayMs?: number;
}

interface Attempt {
  code: EmbeddingFailureCode;
  message: string;
  retryAfterMs: number | null;
}

export class OpenAiEmbedder implements Embedder {
  readonly provider = 'openai';
  readonly model: string;
  private readonly endpoint: string;
  private readonly limit: ConcurrencyLimit;
  private readonly retryBaseMs: number;
  private readonly maxRetryDelayMs: number;
  private learned: number | null;
  /**
   * How vectors are asked for: `base64` (each vector's float32 bytes, as OpenAI's own SDK asks)
   * until a server refuses that, then `float` (JSON numbers). Decoding base64 costs the event loop
   * far less than parsing hundreds of JSON numbers per chunk.
   */
  private encoding: 'base64' | 'float' = 'base64';
  /** A server that has answered base64 once knows it: a later 400 is about the request itself. */
  private base64Seen = false;
  private closed = false;
  private readonly closing = new AbortController();

  constructor(private readonly options: OpenAiEmbedderOptions) {
    this.model = options.model;
    const base = options.url.replace(/\/+$/, '');
    this.endpoint = base.endsWith('/embeddings') ? base : `${base}/embeddings`;
    this.limit = new ConcurrencyLimit(options.concurrency);
    this.retryBaseMs = options.retryBaseMs ?? 500;
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? 30_000;
    this.learned = options.dimensions ?? null;
  }

  dimensions(): number | null {
    return this.learned;
  }

  async embed(texts: readonly string[], opts: { signal?: AbortSignal } = {}): Promise<Float32Array[]> {
    if (this.closed) throw new EmbeddingError('closed', 'the embedder is closed');
    const batches: string[][] = [];
    for (let i = 0; i < texts.length; i += this.options.batchSize) {
      batches.push(texts.slice(i, i + this.options.batchSize));
    }
    const results = await Promise.all(
      batches.map((batch) => this.limit.run(() => this.embedBatch(batch, opts.signal))),
    );
    const vectors = results.flat();
    this.learned = checkDimensions(vectors, this.learned);
    return vectors;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.closing.abort();
  }

  private async embedBatch(batch: string[], signal: AbortSignal | undefined): Promise<Float32Array[]> {
    for (let attempt = 0; ; attempt++) {
      if (this.closed) throw new EmbeddingError('closed', 'the embedder is closed');
      signal?.throwIfAborted();
      const result = await this.request(batch, signal);
      if (Array.isArray(result)) return result;
      const last = attempt >= this.options.maxRetries;
      const retryable = result.code !== 'rejected' && result.code !== 'dimension_mismatch';
      // The jitter scales the base, so it comes before the cap: a wait at the cap is the cap.
      const backoff = exponentialBackoffMs(attempt, {
        baseMs: equalJitter(this.retryBaseMs),
        maxMs: this.maxRetryDelayMs,
      });
      const wait = result.retryAfterMs ?? backoff;
      if (!retryable || last || wait > this.maxRetryDelayMs) {
        throw new EmbeddingError(
          result.code,
          attempt > 0 ? `${result.message} (after ${attempt + 1} tries)` : result.message,
          result.retryAfterMs,
        );
      }
      await sleep(wait, undefined, {
        signal: signal ? AbortSignal.any([signal, this.closing.signal]) : this.closing.signal,
      }).catch((error: unknown) => {
        if (this.closed) throw new EmbeddingError('closed', 'the embedder is closed');
        throw error;
      });
    }
  }

  /** One POST: the vectors, or why it failed. Throws only when the caller's signal aborted. */
  private async request(batch: string[], signal: AbortSignal | undefined): Promise<Float32Array[] | Attempt> {
    const timeout = AbortSignal.timeout(this.options.timeoutMs);
    const signals = [timeout, this.closing.signal, ...(signal ? [signal] : [])];
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json',
    };
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    const encoding = this.encoding;
    const body: Record<string, unknown> = { model: this.model, input: batch, encoding_format: encoding };
    if (this.options.dimensions) body.dimensions = this.options.dimensions;
    let response: Response;
    let payload: unknown;
    try {
      response = await fetch(this.endpoint, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
        signal: AbortSignal.any(signals),
      });
      const text = await response.text();
      if ((response.status === 400 || response.status === 422) && encoding === 'base64' && !this.base64Seen) {
        // A server that knows only JSON numbers: ask it that way from now on, at once.
        this.encoding = 'float';
        return this.request(batch, signal);
      }
      if (!response.ok) return failedStatus(response, text);
      try {
        payload = JSON.parse(text);
      } catch {
        return { code: 'bad_response', message: 'the embeddings answer is not JSON', retryAfterMs: null };
      }
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (this.closed) return { code: 'closed', message: 'the embedder is closed', retryAfterMs: null };
      if (timeout.aborted) {
        return {
          code: 'timeout',
          message: `the embeddings server did not answer within ${this.options.timeoutMs} ms`,
          retryAfterMs: null,
        };
      }
      return {
        code: 'unreachable',
        message: `cannot reach the embeddings server: ${causeOf(error)}`,
        retryAfterMs: null,
      };
    }
    const vectors = parseVectors(payload, batch.length);
    if (Array.isArray(vectors) && encoding === 'base64' && typeof firstEmbedding(payload) === 'string') {
      this.base64Seen = true;
    }
    return vectors;
  }
}

function failedStatus(response: Response, text: string): Attempt {
  const detail = providerMessage(text);
  if (response.status === 429) {
    return {
      code: 'rate_limited',
      message: `the embeddings server is rate limiting (429)${detail}`,
      retryAfterMs: retryAfterMs(response.headers.get('retry-after')),
    };
  }
  if (response.status >= 500) {
    return {
      code: 'server_error',
      message: `the embeddings server failed (${response.status})${detail}`,
      retryAfterMs: null,
    };
  }
  return {
    code: 'rejected',
    message: `the embeddings server refused the request (${response.status})${detail}`,
    retryAfterMs: null,
  };
}

/** The provider's own error message, if its body has one (OpenAI: {error: {message}}), kept short. */
function providerMessage(text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } | string };
    const message = typeof parsed.error === 'string' ? parsed.error : parsed.error?.message;
    return typeof message === 'string' ? `: ${message.slice(0, 200)}` : '';
  } catch {
    return '';
  }
}

/** Retry-After in seconds or as an HTTP date; null when absent or unreadable. */
function retryAfterMs(header: string | null): number | null {
  if (header === null) return null;
  const trimmed = header.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? null : Math.max(0, date - Date.now());
}

function parseVectors(payload: unknown, expected: number): Float32Array[] | Attempt {
  const bad = (why: string): Attempt => ({
    code: 'bad_response',
    message: `bad embeddings answer: ${why}`,
    retryAfterMs: null,
  });
  const data = (payload as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) return bad('no `data` list');
  if (data.length !== expected) return bad(`${data.length} vectors for ${expected} inputs`);
  const vectors: Array<Float32Array | undefined> = new Array(expected);
  for (const [position, item] of data.entries()) {
    const entry = item as { index?: unknown; embedding?: unknown } | null;
    const index = typeof entry?.index === 'number' ? entry.index : position;
    const embedding = entry?.embedding;
    if (!Number.isInteger(index) || index < 0 || index >= expected || vectors[index] !== undefined) {
      return bad(`vector index ${String(entry?.index)} is out of place`);
    }
    // base64 when the server honoured encoding_format, numbers when it answers floats anyway.
    const values = typeof embedding === 'string' ? fromBase64(embedding) : numbersOf(embedding);
    if (values === null) return bad('an embedding is not a list of numbers');
    vectors[index] = normalise(values);
  }
  return vectors as Float32Array[];
}

function firstEmbedding(payload: unknown): unknown {
  const data = (payload as { data?: Array<{ embedding?: unknown } | null> } | null)?.data;
  return data?.[0]?.embedding;
}

/** A base64 embedding as OpenAI sends it: little-endian float32s; null when not that. */
function fromBase64(text: string): Float32Array | null {
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length === 0 || bytes.length % 4 !== 0) return null;
  const values = new Float32Array(bytes.length / 4);
  for (let i = 0; i < values.length; i++) {
    values[i] = bytes.readFloatLE(i * 4);
    if (!Number.isFinite(values[i])) return null;
  }
  return values;
}

function numbersOf(embedding: unknown): number[] | null {
  return Array.isArray(embedding) &&
    embedding.length > 0 &&
    embedding.every((v) => typeof v === 'number' && Number.isFinite(v))
    ? embedding
    : null;
}

function causeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } })?.cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string') return cause.message;
  return error instanceof Error ? error.message : String(error);
}
