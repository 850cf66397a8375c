// The providers a query may call (the embedding provider for the query's vector, the reranker),
// each behind its circuit breaker (circuit-breaker.ts): guardEmbedder and guardReranker wrap a
// provider so that an outage costs the first few queries their wait, and the queries after them
// none while the breaker is open (they fall back at once: a hybrid query to its keyword list, a
// reranked query to its first-stage order). Only an outage counts against a provider: timeouts,
// lost connections, 429 and 5xx answers, garbage, a local model that cannot run. A 4xx caused by
// the request means the provider answered.
import { type CircuitBreaker, CircuitOpenError, type CircuitState } from './circuit-breaker.js';
import {
  type Embedder,
  EmbeddingError,
  type EmbeddingFailureCode,
  RerankError,
  type Reranker,
  type RerankFailureCode,
} from './ports.js';

/** What /readyz and /metrics show of one provider. */
export interface ProviderStatus {
  /** `embeddings` or `rerank`. */
  name: string;
  /** The adapter: `openai`, `onnx`, `http`. */
  kind: string;
  model: string;
  state(): CircuitState;
}

const OUTAGES: ReadonlySet<EmbeddingFailureCode | RerankFailureCode> = new Set([
  'unreachable',
  'timeout',
  'rate_limited',
  'server_error',
  'bad_response',
  'model_unavailable',
]);

/**
 * Whether `error` says the provider is down. An abort of the caller's own deadline is a timeout:
 * the provider did not answer in the time a query may wait.
 */
export function isProviderOutage(error: unknown, signal?: AbortSignal): boolean {
  if (error instanceof EmbeddingError || error instanceof RerankError) return OUTAGES.has(error.code);
  return signal?.aborted === true;
}

/** The embedder, its calls through `breaker`: refused at once (EmbeddingError circuit_open) while open. */
export function guardEmbedder(embedder: Embedder, breaker: CircuitBreaker): Embedder {
  return {
    provider: embedder.provider,
    model: embedder.model,
    dimensions: () => embedder.dimensions(),
    close: () => embedder.close(),
    async embed(texts, opts = {}) {
      try {
        return await breaker.run(
          () => embedder.embed(texts, opts),
          (error) => isProviderOutage(error, opts.signal),
        );
      } catch (error) {
        if (error instanceof CircuitOpenError) {
          throw new EmbeddingError('circuit_open', error.message, error.retryAfterMs);
        }
        throw error;
      }
    },
  };
}

/** The reranker, its calls through `breaker`: refused at once (RerankError circuit_open) while open. */
export function guardReranker(reranker: Reranker, breaker: CircuitBreaker): Reranker {
  return {
    provider: reranker.provider,
    model: reranker.model,
    close: () => reranker.close(),
    async score(query, texts, opts = {}) {
      try {
        return await breaker.run(
          () => reranker.score(query, texts, opts),
          (error) => isProviderOutage(error, opts.signal),
        );
      } catch (error) {
        if (error instanceof CircuitOpenError) {
          throw new RerankError('circuit_open', error.message, error.retryAfterMs);
        }
        throw error;
      }
    },
  };
}
