// The `onnx` embedding provider: a local sentence-transformer folder (config.json, tokenizer.json,
// onnx/model.onnx — e.g. bge-small-en-v1.5 exported for transformers.js) run by transformers.js on
// onnxruntime-node's CPU build. Remote models are off: the folder is the only place a model may
// come from, nothing is downloaded. The model runs in the process's ONNX model thread
// (adapters/onnx/model-thread.ts), so a batch of embeddings never holds up the event loop that
// answers the API.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { type Embedder, EmbeddingError } from '../../../domain/ports.js';
import { ThreadModel } from '../../onnx/thread-model.js';
import { checkDimensions } from '../vectors.js';

export interface OnnxEmbedderOptions {
  /** The model folder. */
  modelDir: string;
  /** Texts per model run. */
  batchSize: number;
}

export class OnnxEmbedder implements Embedder {
  readonly provider = 'onnx';
  /** The folder's name (`bge-small-en-v1.5`): what a vector's profile records. */
  readonly model: string;
  private readonly thread: ThreadModel;
  private learned: number | null = null;

  constructor(private readonly options: OnnxEmbedderOptions) {
    this.thread = new ThreadModel(
      options.modelDir,
      async (key, modelDir) => ({ type: 'load', key, modelDir, pooling: await poolingOf(modelDir) }),
      (message) => new EmbeddingError('model_unavailable', message),
    );
    this.model = this.thread.name;
  }

  dimensions(): number | null {
    return this.learned;
  }

  async embed(texts: readonly string[], opts: { signal?: AbortSignal } = {}): Promise<Float32Array[]> {
    if (this.thread.closed) throw new EmbeddingError('closed', 'the embedder is closed');
    if (texts.length === 0) return [];
    opts.signal?.throwIfAborted();
    const reply = await this.thread.ask({
      type: 'embed',
      key: this.thread.key,
      texts: [...texts],
      batchSize: this.options.batchSize,
    });
    if (this.thread.closed) throw new EmbeddingError('closed', 'the embedder is closed');
    if (reply.type !== 'vectors') {
      throw new EmbeddingError(
        'bad_response',
        `the model failed: ${reply.type === 'failed' ? reply.message : reply.type}`,
      );
    }
    const vectors: Float32Array[] = [];
    for (let i = 0; i < reply.count; i++) {
      vectors.push(reply.data.slice(i * reply.dimensions, (i + 1) * reply.dimensions));
    }
    this.learned = checkDimensions(vectors, this.learned);
    return vectors;
  }

  close(): Promise<void> {
    return this.thread.close();
  }
}

/**
 * How token vectors become a text's vector, as sentence-transformers exports say in
 * 1_Pooling/config.json (bge uses the [CLS] token, MiniLM and e5 the mean); mean when not said.
 */
async function poolingOf(modelDir: string): Promise<'mean' | 'cls'> {
  try {
    const config = JSON.parse(await readFile(path.join(modelDir, '1_Pooling', 'config.json'), 'utf8')) as {
      pooling_mode_cls_token?: unknown;
    };
    return config.pooling_mode_cls_token === true ? 'cls' : 'mean';
  } catch {
    return 'mean';
  }
}
