// The variables of the embedding provider (semantic and hybrid search) and the vector prefilter.
import { EMBEDDINGS_PROVIDERS } from '../config.js';
import type { VariableTable } from '../variable.js';

/** The embedding provider of semantic and hybrid search, and the memory of the vector prefilter. */
export const EMBEDDING_VARIABLES = {
  embeddings: {
    env: 'EMBEDDINGS',
    type: 'string',
    default: 'none',
    oneOf: EMBEDDINGS_PROVIDERS,
    description:
      'embedding provider for semantic and hybrid search: `none` (keyword search only), `openai` (any OpenAI-compatible `/v1/embeddings` server: OpenAI, Azure, Ollama, vLLM, TEI, llama.cpp) or `onnx` (a local sentence-transformer folder, run in a worker thread)',
  },
  embeddingsUrl: {
    env: 'EMBEDDINGS_URL',
    type: 'url',
    scheme: /^https?:\/\//i,
    invalid: 'EMBEDDINGS_URL must be an http:// or https:// URL (e.g. http://127.0.0.1:11434/v1)',
    description:
      '`openai`: base URL of the embeddings API, e.g. `http://127.0.0.1:11434/v1` (`/embeddings` is appended)',
  },
  embeddingsModel: {
    env: 'EMBEDDINGS_MODEL',
    type: 'string',
    default: '',
    defaultText: '—',
    description:
      '`openai`: the model name sent with each request (e.g. `text-embedding-3-small`, `nomic-embed-text`)',
  },
  embeddingsApiKey: {
    env: 'EMBEDDINGS_API_KEY',
    type: 'string',
    default: '',
    defaultText: '— (no `Authorization` header)',
    description: '`openai`: sent as `Authorization: Bearer …`',
  },
  embeddingsDimensions: {
    env: 'EMBEDDINGS_DIMENSIONS',
    type: 'int',
    default: 0,
    min: 0,
    max: 16_000,
    defaultText: '0 (the model’s own)',
    description:
      '`openai`: vector length asked of the model (`dimensions`, for models that can shorten their vectors); answers of another length fail with `dimension_mismatch`',
  },
  embeddingsModelDir: {
    env: 'EMBEDDINGS_MODEL_DIR',
    type: 'string',
    default: '',
    defaultText: '—',
    description:
      '`onnx`: folder of a sentence-transformer exported for transformers.js (`config.json`, `tokenizer.json`, `onnx/model.onnx`, e.g. bge-small-en-v1.5); nothing is ever downloaded',
  },
  embeddingsBatchSize: {
    env: 'EMBEDDINGS_BATCH_SIZE',
    type: 'int',
    default: 64,
    min: 1,
    max: 2048,
    description: 'texts per embedding request (`openai`) or model run (`onnx`)',
  },
  embeddingsConcurrency: {
    env: 'EMBEDDINGS_CONCURRENCY',
    type: 'int',
    default: 4,
    min: 1,
    max: 64,
    description: '`openai`: embedding requests in flight at once per process',
  },
  embeddingsTimeoutMs: {
    env: 'EMBEDDINGS_TIMEOUT_MS',
    type: 'int',
    default: 30_000,
    min: 100,
    max: 600_000,
    description: '`openai`: time cap of one embedding request',
  },
  embeddingsMaxRetries: {
    env: 'EMBEDDINGS_MAX_RETRIES',
    type: 'int',
    default: 4,
    min: 0,
    max: 20,
    description:
      '`openai`: retries of a request that timed out, lost its connection or got 429 (its `Retry-After` honoured) or 5xx, with exponential backoff',
  },
  vectorPrefilterMaxMb: {
    env: 'VECTOR_PREFILTER_MAX_MB',
    type: 'int',
    default: 1024,
    min: 1,
    max: 1024 * 1024,
    description:
      "memory for the semantic prefilter's sign bits in each process that searches (~56–70 bytes a 384-d vector); past it, the orgs searched least recently are let go and read again at their next semantic search",
  },
} satisfies Partial<VariableTable>;
