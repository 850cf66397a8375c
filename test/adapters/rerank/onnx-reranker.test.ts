// The onnx reranker on a tiny cross-encoder the test writes (nothing is downloaded): the scores
// are the model's (the sigmoid of each pair's summed word weights), in the texts' order, across
// batches; a folder that is not a model is `model_unavailable`, and the next call tries again.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { OnnxEmbedder } from '../../../src/adapters/embeddings/onnx/onnx-embedder.js';
import { OnnxReranker } from '../../../src/adapters/rerank/onnx/onnx-reranker.js';
import { RerankError } from '../../../src/domain/ports.js';
import { tinyCrossEncoderScore, writeTinyCrossEncoder } from '../../helpers/tiny-cross-encoder.js';
import { writeTinyOnnxModel } from '../../helpers/tiny-onnx-model.js';

const root = await mkdtemp(path.join(tmpdir(), 'docindex-onnx-rerank-'));
afterAll(() => rm(root, { recursive: true, force: true }));

const WEIGHTS = { river: 1, water: 0.5, blue: 2, green: -1, apple: 0.25 };

describe('onnx reranker', () => {
  it('scores each text with the cross-encoder, in the texts’ order, across batches', async () => {
    const dir = await writeTinyCrossEncoder(path.join(root, 'tiny'), WEIGHTS);
    const reranker = new OnnxReranker({ modelDir: dir, batchSize: 2 });
    try {
      const texts = ['blue river', 'green apple', 'water water blue', 'nothing known here', 'river'];
      const scores = await reranker.score('river water', texts);
      expect(scores).toHaveLength(texts.length);
      texts.forEach((text, i) => {
        expect(scores[i]).toBeCloseTo(tinyCrossEncoderScore(WEIGHTS, 'river water', text), 5);
      });
      expect(reranker.provider).toBe('onnx');
      expect(reranker.model).toBe('tiny');
    } finally {
      await reranker.close();
    }
  });

  it('a folder without a model is model_unavailable, and a model put there later is loaded', async () => {
    const dir = path.join(root, 'later');
    const reranker = new OnnxReranker({ modelDir: dir, batchSize: 8 });
    try {
      const error = await reranker.score('river', ['blue']).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RerankError);
      expect((error as RerankError).code).toBe('model_unavailable');
      await writeTinyCrossEncoder(dir, WEIGHTS);
      const [score] = await reranker.score('river', ['blue']);
      expect(score).toBeCloseTo(tinyCrossEncoderScore(WEIGHTS, 'river', 'blue'), 5);
    } finally {
      await reranker.close();
    }
  });

  it('runs beside an onnx embedder of the same process (one model thread holds both)', async () => {
    const encoder = await writeTinyOnnxModel(path.join(root, 'encoder'));
    const embedder = new OnnxEmbedder({ modelDir: encoder.dir, batchSize: 4 });
    const reranker = new OnnxReranker({
      modelDir: await writeTinyCrossEncoder(path.join(root, 'beside'), WEIGHTS),
      batchSize: 4,
    });
    try {
      const [vectors, scores] = await Promise.all([
        embedder.embed(['the cat sat', 'a blue river']),
        reranker.score('river', ['green', 'blue']),
      ]);
      expect(vectors.map((v) => v.length)).toEqual([encoder.dimensions, encoder.dimensions]);
      expect(scores[1]).toBeGreaterThan(scores[0]!);
    } finally {
      await Promise.all([embedder.close(), reranker.close()]);
    }
  });
});
