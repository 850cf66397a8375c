// Embedding providers: the profile a vector is made with, the embedder and its failures.

/** Which model made a vector: vectors of different profiles are never compared. */
export interface EmbeddingProfile {
  /** `openai` or `onnx`. */
  provider: string;
  model: string;
  dimensions: number;
}

/** Why an embedding call failed; `transient` ones are worth trying again later. */
export type EmbeddingFailureCode =
  /** No connection to the provider (refused, reset, DNS). */
  | 'unreachable'
  /** The provider did not answer within the time cap. */
  | 'timeout'
  /** 429 after every retry; `retryAfterMs` says when the provider allows the next call. */
  | 'rate_limited'
  /** 5xx after every retry. */
  | 'server_error'
  /** The provider refused the request (4xx other than 429: a bad key, an unknown model …). */
  | 'rejected'
  /** The answer is not a list of one numeric vector per input. */
  | 'bad_response'
  /** The vectors' length differs from EMBEDDINGS_DIMENSIONS or from the profile's earlier answers. */
  | 'dimension_mismatch'
  /** The local model folder is missing or cannot be loaded. */
  | 'model_unavailable'
  /** The embedder was closed. */
  | 'closed'
  /** The provider failed repeatedly and is skipped until its cool-down ends (domain/circuit-breaker.ts). */
  | 'circuit_open';

const TRANSIENT_EMBEDDING_FAILURES: ReadonlySet<EmbeddingFailureCode> = new Set([
  'unreachable',
  'timeout',
  'rate_limited',
  'server_error',
  'bad_response',
  'circuit_open',
]);

export class EmbeddingError extends Error {
  constructor(
    readonly code: EmbeddingFailureCode,
    message: string,
    /** For rate_limited: how long the provider asked callers to wait. */
    readonly retryAfterMs: number | null = null,
  ) {
    super(message);
    this.name = 'EmbeddingError';
  }

  /** Whether the same call may succeed later (an outage) rather than never (a configuration fault). */
  get transient(): boolean {
    return TRANSIENT_EMBEDDING_FAILURES.has(this.code);
  }
}

/**
 * Turns texts into vectors (adapters/embeddings/<provider>). Vectors are L2-normalised, so a dot
 * product is their cosine similarity. Failures are EmbeddingError with a code.
 */
export interface Embedder {
  readonly provider: string;
  readonly model: string;
  /**
   * The vectors' length: the configured one, else learned from the first answer (null before).
   * Every later answer must have it (dimension_mismatch otherwise).
   */
  dimensions(): number | null;
  /** One vector per text, in order; batching, concurrency and retries are the adapter's. */
  embed(texts: readonly string[], opts?: { signal?: AbortSignal }): Promise<Float32Array[]>;
  close(): Promise<void>;
}
