// A real HTTP server on 127.0.0.1 that speaks the rerank protocol (POST /rerank), for the http
// reranker's tests and the bench. It scores each document with the function it is given and
// answers in the form of the provider it plays: Cohere/Jina (`results` with `relevance_score`,
// best first, at most `top_n`), Voyage (`data`), or Hugging Face TEI (a bare list of
// `{index, score}`, and 422 to a body without `texts`). It can play an outage: 5xx answers, hang
// (read requests and never answer), garbage answers, stop (connection refused).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LoopbackHttpServer } from './loopback-http-server.js';

export type RerankDialect = 'cohere' | 'voyage' | 'tei';

/** Answers that are not a score per document, each a way a broken provider might answer. */
export type Garbage = 'not-json' | 'no-list' | 'short' | 'bad-index' | 'duplicate-index' | 'not-a-number';

export interface RerankServerOptions {
  dialect?: RerankDialect;
  /** When set, requests must carry `Authorization: Bearer <apiKey>` (401 otherwise). */
  apiKey?: string;
  /** Answer each request after this many ms. */
  delayMs?: number;
}

export interface RecordedRerank {
  model: unknown;
  query: unknown;
  documents: string[];
  topN: unknown;
  authorization: string | undefined;
}

export class RerankServer extends LoopbackHttpServer {
  readonly requests: RecordedRerank[] = [];
  private failures: number[] = [];
  private garbage: Garbage[] = [];
  private hanging = false;

  constructor(
    /** The relevance of `document` to `query`. */
    private readonly scoreOf: (query: string, document: string) => number,
    private readonly options: RerankServerOptions = {},
  ) {
    super();
  }

  /** The base URL to give RERANK_URL. */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  failNext(count: number, status = 500): void {
    for (let i = 0; i < count; i++) this.failures.push(status);
  }

  garbageNext(...kinds: Garbage[]): void {
    this.garbage.push(...kinds);
  }

  /** While true, requests are read and never answered. */
  hang(on: boolean): void {
    this.hanging = on;
  }

  recover(): void {
    this.failures = [];
    this.garbage = [];
    this.hanging = false;
  }

  protected async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.method !== 'POST' || req.url !== '/rerank') return send(res, 404, { message: 'not found' });
    let body: { model?: unknown; query?: unknown; documents?: unknown; texts?: unknown; top_n?: unknown };
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return send(res, 400, { message: 'body is not JSON' });
    }
    const dialect = this.options.dialect ?? 'cohere';
    const documents = dialect === 'tei' ? body.texts : body.documents;
    if (dialect === 'tei' && body.texts === undefined) {
      // What TEI's JSON extractor answers.
      return sendText(
        res,
        422,
        'Failed to deserialize the JSON body into the target type: missing field `texts` at line 1 column 120',
      );
    }
    if (
      typeof body.query !== 'string' ||
      !Array.isArray(documents) ||
      !documents.every((d) => typeof d === 'string')
    ) {
      return send(res, 400, { message: 'query must be a string and documents a list of strings' });
    }
    this.requests.push({
      model: body.model,
      query: body.query,
      documents,
      topN: body.top_n,
      authorization: req.headers.authorization,
    });
    if (this.options.apiKey && req.headers.authorization !== `Bearer ${this.options.apiKey}`) {
      return send(res, 401, { message: 'invalid api token' });
    }
    if (this.hanging) return;
    const failure = this.failures.shift();
    if (failure !== undefined) return send(res, failure, { message: `simulated ${failure}` });
    if (this.options.delayMs) await new Promise((resolve) => setTimeout(resolve, this.options.delayMs));
    const query = body.query;
    const scored = documents.map((document, index) => ({ index, score: this.scoreOf(query, document) }));
    const garbage = this.garbage.shift();
    if (garbage) return sendGarbage(res, garbage, scored);
    scored.sort((a, b) => b.score - a.score);
    if (dialect === 'tei') return send(res, 200, scored);
    const topN = typeof body.top_n === 'number' ? body.top_n : scored.length;
    const results = scored.slice(0, topN).map((s) => ({ index: s.index, relevance_score: s.score }));
    if (dialect === 'voyage') return send(res, 200, { object: 'list', data: results, model: body.model });
    send(res, 200, { id: 'rerank-test', results, meta: { billed_units: { search_units: 1 } } });
  }
}

function sendGarbage(res: ServerResponse, kind: Garbage, scored: Array<{ index: number; score: number }>) {
  const results = scored.map((s) => ({ index: s.index, relevance_score: s.score }));
  switch (kind) {
    case 'not-json':
      return sendText(res, 200, '<html>upstream error</html>');
    case 'no-list':
      return send(res, 200, { ranking: results });
    case 'short':
      return send(res, 200, { results: results.slice(1) });
    case 'bad-index':
      return send(res, 200, {
        results: results.map((r, i) => (i === 0 ? { ...r, index: results.length } : r)),
      });
    case 'duplicate-index':
      return send(res, 200, { results: results.map((r) => ({ ...r, index: 0 })) });
    case 'not-a-number':
      return send(res, 200, { results: results.map((r) => ({ ...r, relevance_score: 'high' })) });
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function sendText(res: ServerResponse, status: number, text: string): void {
  if (res.destroyed) return;
  res.writeHead(status, { 'content-type': 'text/plain' });
  res.end(text);
}
