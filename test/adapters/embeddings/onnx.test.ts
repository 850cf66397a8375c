// The onnx embedder beyond the contract: a missing or broken model folder is a clear
// `model_unavailable` (never a download attempt), and fixing the folder needs no restart.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { OnnxEmbedder } from '../../../src/adapters/embeddings/onnx/onnx-embedder.js';
import { EmbeddingError } from '../../../src/domain/ports.js';
import { writeTinyOnnxModel } from '../../helpers/tiny-onnx-model.js';

const root = await mkdtemp(path.join(tmpdir(), 'docindex-onnx-'));
afterAll(() => rm(root, { recursive: true, force: true }));

describe('onnx embedder', () => {
  it('a folder without a model is `model_unavailable`; once the model is there it loads', async () => {
    const dir = path.join(root, 'not-yet');
    await mkdir(dir);
    const embedder = new OnnxEmbedder({ modelDir: dir, batchSize: 8 });
    try {
      const error = await embedder.embed(['cat']).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(EmbeddingError);
      expect((error as EmbeddingError).code).toBe('model_unavailable');
      expect((error as EmbeddingError).transient).toBe(false);
      await writeTinyOnnxModel(dir, 6);
      const [vector] = await embedder.embed(['cat']);
      expect(vector).toHaveLength(6);
      expect(embedder.model).toBe('not-yet');
    } finally {
      await embedder.close();
    }
  });

  it('a corrupt model file is `model_unavailable`', async () => {
    const model = await writeTinyOnnxModel(path.join(root, 'corrupt'));
    await writeFile(path.join(model.dir, 'onnx', 'model.onnx'), 'not a model');
    const embedder = new OnnxEmbedder({ modelDir: model.dir, batchSize: 8 });
    try {
      const error = await embedder.embed(['cat']).catch((e: unknown) => e);
      expect((error as EmbeddingError).code).toBe('model_unavailable');
    } finally {
      await embedder.close();
    }
  });

  it('uses [CLS] pooling when the folder says so (1_Pooling/config.json), mean otherwise', async () => {
    const mean = await writeTinyOnnxModel(path.join(root, 'mean'));
    const cls = await writeTinyOnnxModel(path.join(root, 'cls'));
    await mkdir(path.join(cls.dir, '1_Pooling'));
    await writeFile(
      path.join(cls.dir, '1_Pooling', 'config.json'),
      JSON.stringify({ pooling_mode_cls_token: true }),
    );
    const a = new OnnxEmbedder({ modelDir: mean.dir, batchSize: 8 });
    const b = new OnnxEmbedder({ modelDir: cls.dir, batchSize: 8 });
    try {
      const [first, second] = await b.embed(['cat sat', 'dog road']);
      // [CLS] pooling: every text's vector is the [CLS] row, whatever the words.
      expect([...first!]).toEqual([...second!]);
      const [m1, m2] = await a.embed(['cat sat', 'dog road']);
      expect([...m1!]).not.toEqual([...m2!]);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
