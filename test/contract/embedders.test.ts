// Runs the Embedder contract against both providers: openai against a real server on 127.0.0.1
// speaking the OpenAI embeddings protocol, onnx against a tiny model generated into a temp folder.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { OnnxEmbedder } from '../../src/adapters/embeddings/onnx/onnx-embedder.js';
import { OpenAiEmbedder } from '../../src/adapters/embeddings/openai/openai-embedder.js';
import { EmbeddingsServer } from '../helpers/embeddings-server.js';
import { writeTinyOnnxModel } from '../helpers/tiny-onnx-model.js';
import { embedderContract } from './embedder.contract.js';

embedderContract('openai (OpenAI-protocol server on 127.0.0.1)', async () => {
  const server = await new EmbeddingsServer({ dimensions: 32 }).start();
  return {
    make: async ({ batchSize }) =>
      new OpenAiEmbedder({
        url: server.url,
        model: 'test-embedding',
        batchSize,
        concurrency: 2,
        timeoutMs: 5_000,
        maxRetries: 2,
        retryBaseMs: 10,
      }),
    close: () => server.stop(),
  };
});

embedderContract('onnx (generated tiny model)', async () => {
  const root = await mkdtemp(path.join(tmpdir(), 'docindex-onnx-'));
  const model = await writeTinyOnnxModel(path.join(root, 'tiny-encoder'));
  return {
    make: async ({ batchSize }) => new OnnxEmbedder({ modelDir: model.dir, batchSize }),
    close: () => rm(root, { recursive: true, force: true }),
  };
});
