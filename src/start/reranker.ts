// Picks the Reranker named by RERANK: none (null: queries keep their first-stage order), an HTTP
// rerank server, or a local cross-encoder. transformers.js is loaded only when `onnx` is chosen.
import path from 'node:path';
import { HttpReranker } from '../adapters/rerank/http/http-reranker.js';
import type { Config } from '../config/index.js';
import type { Reranker } from '../domain/ports.js';

export async function createReranker(config: Config): Promise<Reranker | null> {
  switch (config.rerank) {
    case 'none':
      return null;
    case 'http':
      // The configuration refuses RERANK=http without a URL; this guards hand-built configs.
      if (config.rerankUrl === null) throw new Error('RERANK=http needs RERANK_URL');
      return new HttpReranker({
        url: config.rerankUrl,
        model: config.rerankModel,
        apiKey: config.rerankApiKey || null,
        timeoutMs: config.rerankTimeoutMs,
        batchSize: config.rerankBatchSize,
      });
    case 'onnx': {
      const { OnnxReranker } = await import('../adapters/rerank/onnx/onnx-reranker.js');
      return new OnnxReranker({
        modelDir: path.resolve(config.rerankModelDir),
        batchSize: config.rerankBatchSize,
      });
    }
  }
}
