// The variables of the reranker, and of the circuit breakers both query-path providers sit behind.
import { RERANK_PROVIDERS } from '../config.js';
import type { VariableTable } from '../variable.js';

/** The reranker, and the circuit breakers of both providers on the query path. */
export const RERANK_VARIABLES = {
  rerank: {
    env: 'RERANK',
    type: 'string',
    default: 'none',
    oneOf: RERANK_PROVIDERS,
    description:
      'reranker that orders each query’s best candidates ([Reranking](SEARCH.md#reranking)): `none`, `http` (the `/rerank` API of Cohere, Jina, Voyage and Hugging Face TEI) or `onnx` (a local cross-encoder folder, run in a worker thread)',
  },
  rerankUrl: {
    env: 'RERANK_URL',
    type: 'url',
    scheme: /^https?:\/\//i,
    invalid: 'RERANK_URL must be an http:// or https:// URL (e.g. http://127.0.0.1:8081)',
    description:
      '`http`: base URL of the rerank API, e.g. `http://127.0.0.1:8081` (TEI) or `https://api.cohere.com/v2` (`/rerank` is appended)',
  },
  rerankModel: {
    env: 'RERANK_MODEL',
    type: 'string',
    default: '',
    defaultText: '— (no `model` sent)',
    description:
      '`http`: the model name sent with each request (e.g. `rerank-v3.5`, `jina-reranker-v2-base-multilingual`)',
  },
  rerankApiKey: {
    env: 'RERANK_API_KEY',
    type: 'string',
    default: '',
    defaultText: '— (no `Authorization` header)',
    description: '`http`: sent as `Authorization: Bearer …`',
  },
  rerankModelDir: {
    env: 'RERANK_MODEL_DIR',
    type: 'string',
    default: '',
    defaultText: '—',
    description:
      '`onnx`: folder of a cross-encoder exported for transformers.js (`config.json`, `tokenizer.json`, `onnx/model.onnx`, e.g. ms-marco-MiniLM-L-6-v2 or bge-reranker-base); nothing is ever downloaded',
  },
  rerankTimeoutMs: {
    env: 'RERANK_TIMEOUT_MS',
    type: 'int',
    default: 10_000,
    min: 100,
    max: 600_000,
    description:
      'how long a query waits for the reranker’s scores (`http`: one try per request, no retries); past it the query answers its first-stage order, `degraded`',
  },
  rerankBatchSize: {
    env: 'RERANK_BATCH_SIZE',
    type: 'int',
    default: 32,
    min: 1,
    max: 1000,
    description:
      'documents per rerank request (`http`, sent at once; TEI accepts 32 by default) or (query, text) pairs per model run (`onnx`)',
  },
  providerBreakerFailures: {
    env: 'PROVIDER_BREAKER_FAILURES',
    type: 'int',
    default: 5,
    min: 1,
    max: 1000,
    description:
      'consecutive failures (timeouts, lost connections, 429, 5xx, garbage) of a query’s calls to the embedding provider or the reranker after which that provider is skipped for `PROVIDER_BREAKER_COOLDOWN_MS`: queries answer without it at once, `degraded`',
  },
  providerBreakerCooldownMs: {
    env: 'PROVIDER_BREAKER_COOLDOWN_MS',
    type: 'int',
    default: 30_000,
    min: 100,
    max: 3_600_000,
    description:
      'how long a failing provider is skipped before one query’s call probes it again (success: back in use; failure: another cool-down)',
  },
} satisfies Partial<VariableTable>;
