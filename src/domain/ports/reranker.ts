// Reranking: a cross-encoder's scores for a query's candidates, and its failures.

/** Why a rerank call failed. */
export type RerankFailureCode =
  /** No connection to the provider (refused, reset, DNS). */
  | 'unreachable'
  /** The provider did not answer within RERANK_TIMEOUT_MS. */
  | 'timeout'
  /** 429: the provider is rate limiting. */
  | 'rate_limited'
  /** 5xx. */
  | 'server_error'
  /** The provider refused the request (4xx other than 429: a bad key, an unknown model …). */
  | 'rejected'
  /** The answer is not one finite score for each document. */
  | 'bad_response'
  /** The local model folder is missing or cannot be loaded. */
  | 'model_unavailable'
  /** The reranker was closed. */
  | 'closed'
  /** The provider failed repeatedly and is skipped until its cool-down ends. */
  | 'circuit_open';

export class RerankError extends Error {
  constructor(
    readonly code: RerankFailureCode,
    message: string,
    /** For circuit_open: how long until the provider is tried again. */
    readonly retryAfterMs: number | null = null,
  ) {
    super(message);
    this.name = 'RerankError';
  }
}

/**
 * Scores (query, text) pairs with a cross-encoder (adapters/rerank/<provider>): a model that reads
 * the query and each text together, which orders a first stage's candidates better than BM25 or
 * vector similarity can. Failures are RerankError with a code.
 */
export interface Reranker {
  /** `http` or `onnx`. */
  readonly provider: string;
  readonly model: string;
  /** One relevance score per text, in the texts' order; higher is more relevant. */
  score(query: string, texts: readonly string[], opts?: { signal?: AbortSignal }): Promise<number[]>;
  close(): Promise<void>;
}
