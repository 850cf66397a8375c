// Picks the Embedder named by EMBEDDINGS: none (null: keyword search only), an OpenAI-compatible
// server, or a local ONNX model. transformers.js is loaded only when `onnx` is chosen.
import path from 'node:path';
import { OpenAiEmbedder } from '../adapters/embeddings/openai/openai-embedder.js';
import type { Config } from '../config/index.js';
import type { Embedder } from '../domain/ports.js';

export async function createEmbedder(config: Config): Promise<Embedder | null> {
  switch (config.embeddings) {
    case 'none':
      return null;
    case 'openai':
      // The configuration refuses EMBEDDINGS=openai without a URL; this guards hand-built configs.
      if (config.embeddingsUrl === null) throw new Error('EMBEDDINGS=openai needs EMBEDDINGS_URL');
      return new OpenAiEmbedder({
        url: config.embeddingsUrl,
        model: config.embeddingsModel,
        apiKey: config.embeddingsApiKey || null,
        dimensions: config.embeddingsDimensions || null,
        batchSize: config.embeddingsBatchSize,
        concurrency: config.embeddingsConcurrency,
        timeoutMs: config.embeddingsTimeoutMs,
        maxRetries: config.embeddingsMaxRetries,
      });
    case 'onnx': {
      const { OnnxEmbedder } = await import('../adapters/embeddings/onnx/onnx-embedder.js');
      return new OnnxEmbedder({
        modelDir: path.resolve(config.embeddingsModelDir),
        batchSize: config.embeddingsBatchSize,
      });
    }
  }
}
