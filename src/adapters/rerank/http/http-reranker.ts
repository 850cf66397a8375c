// The `http` reranker: the rerank protocol that Cohere, Jina, Voyage and Hugging Face TEI share.
// `POST {RERANK_URL}/rerank` with `{model, query, documents, top_n}`; the answer's list of
// `{index, relevance_score}` gives each document its score. What the providers really answer
// differs in the details, and each form is read: the list is `results` (Cohere, Jina), `data`
// (Voyage) or the body itself (TEI), the score `relevance_score` or `score` (TEI), in any order.
// TEI names the documents `texts` and refuses a body without them (422): the first such refusal
// switches this reranker to TEI's form for good. Documents go in batches (RERANK_BATCH_SIZE; TEI
// refuses more than 32 at once by default), sent at once. A query waits for one try: no retries,
// since a reranker that fails is skipped (the query keeps its first-stage order) and its circuit
// breaker keeps an outage from costing every query the timeout.
import { RerankError, type Reranker, type RerankFailureCode } from '../../../domain/ports.js';

export interface HttpRerankerOptions {
  /** Base URL such as `http://127.0.0.1:8080` or `https://api.cohere.com/v2`, or the full `…/rerank` URL. */
  url: string;
  /** Sent as `model`; '' leaves it out (TEI serves one model). */
  model: string;
  /** Sent as `Authorization: Bearer …` when set. */
  apiKey?: string | null;
  /** Time cap of one request, answer body included. */
  timeoutMs: number;
  /** Documents per request. */
  batchSize: number;
}

/** The largest answer body read: a list of scores for a batch is far smaller. */
const MAX_ANSWER_CHARS = 4 * 1024 * 1024;

export class HttpReranker implements Reranker {
  readonly provider = 'http';
  readonly model: string;
  private readonly endpoint: string;
  /** How documents are named in the body: `documents` until a server asks for TEI's `texts`. */
  private form: 'documents' | 'texts' = 'documents';
  private closed = false;
  private readonly closing = new AbortController();

  constructor(private readonly options: HttpRerankerOptions) {
    this.model = options.model;
    const base = options.url.replace(/\/+$/, '');
    this.endpoint = base.endsWith('/rerank') ? base : `${base}/rerank`;
  }

  async score(
    query: string,
    texts: readonly string[],
    opts: { signal?: AbortSignal } = {},
  ): Promise<number[]> {
    if (this.closed) throw new RerankError('closed', 'the reranker is closed');
    if (texts.length === 0) return [];
    const batches: string[][] = [];
    for (let i = 0; i < texts.length; i += this.options.batchSize) {
      batches.push(texts.slice(i, i + this.options.batchSize));
    }
    const scores = await Promise.all(batches.map((batch) => this.request(query, batch, opts.signal)));
    return scores.flat();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.closing.abort();
  }

  private async request(query: string, batch: string[], signal: AbortSignal | undefined): Promise<number[]> {
    const timeout = AbortSignal.timeout(this.options.timeoutMs);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json',
    };
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    const form = this.form;
    const body: Record<string, unknown> =
      form === 'texts'
        ? { query, texts: batch, raw_scores: false, truncate: true }
        : { query, documents: batch, top_n: batch.length };
    if (this.model !== '') body.model = this.model;
    let status: number;
    let text: string;
    try {
      const response = await fetch(this.endpoint, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
        signal: AbortSignal.any([timeout, this.closing.signal, ...(signal ? [signal] : [])]),
      });
      status = response.status;
      text = await response.text();
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (this.closed) throw new RerankError('closed', 'the reranker is closed');
      if (timeout.aborted) {
        throw new RerankError(
          'timeout',
          `the rerank server did not answer within ${this.options.timeoutMs} ms`,
        );
      }
      throw new RerankError('unreachable', `cannot reach the rerank server: ${causeOf(error)}`);
    }
    if ((status === 400 || status === 422) && form === 'documents' && /\btexts\b/.test(text)) {
      // Hugging Face TEI: the same request in its own form, from now on.
      this.form = 'texts';
      return this.request(query, batch, signal);
    }
    if (status < 200 || status > 299) throw failedStatus(status, text);
    if (text.length > MAX_ANSWER_CHARS) throw bad('the answer is too large');
    let payload: unknown;
    try {
      payload = JSON.parse(text);
    } catch {
      throw bad('the answer is not JSON');
    }
    return scoresOf(payload, batch.length);
  }
}

function bad(why: string): RerankError {
  return new RerankError('bad_response', `bad rerank answer: ${why}`);
}

/** One finite score per document, by the answer's `index`; anything else is bad_response. */
function scoresOf(payload: unknown, expected: number): number[] {
  const body = payload as { results?: unknown; data?: unknown } | null;
  const list = Array.isArray(payload) ? payload : (body?.results ?? body?.data);
  if (!Array.isArray(list)) throw bad('no `results` list');
  if (list.length !== expected) throw bad(`${list.length} scores for ${expected} documents`);
  const scores: Array<number | undefined> = new Array(expected);
  for (const item of list) {
    const entry = item as { index?: unknown; relevance_score?: unknown; score?: unknown } | null;
    const index = entry?.index;
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= expected) {
      throw bad(`result index ${JSON.stringify(index)} is out of range`);
    }
    if (scores[index] !== undefined) throw bad(`result index ${index} appears twice`);
    const score = entry?.relevance_score ?? entry?.score;
    if (typeof score !== 'number' || !Number.isFinite(score))
      throw bad(`result ${index} has no numeric score`);
    scores[index] = score;
  }
  return scores as number[];
}

function failedStatus(status: number, text: string): RerankError {
  const detail = providerMessage(text);
  const code: RerankFailureCode =
    status === 429 ? 'rate_limited' : status >= 500 ? 'server_error' : 'rejected';
  const what =
    code === 'rate_limited' ? 'is rate limiting' : code === 'server_error' ? 'failed' : 'refused the request';
  return new RerankError(code, `the rerank server ${what} (${status})${detail}`);
}

/** The provider's own error message, if its body has one, kept short. */
function providerMessage(text: string): string {
  try {
    const parsed = JSON.parse(text) as {
      error?: { message?: unknown } | string;
      message?: unknown;
      detail?: unknown;
    };
    const candidates = [
      typeof parsed.error === 'string' ? parsed.error : parsed.error?.message,
      parsed.message,
      parsed.detail,
    ];
    const message = candidates.find((m): m is string => typeof m === 'string');
    return message === undefined ? '' : `: ${message.slice(0, 200)}`;
  } catch {
    return '';
  }
}

function causeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } })?.cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string') return cause.message;
  return error instanceof Error ? error.message : String(error);
}
