// The `onnx` embedding provider: a local sentence-transformer folder (config.json, tokenizer.json,
// onnx/model.onnx — e.g. bge-small-en-v1.5 exported for transformers.js) run by transformers.js on
// onnxruntime-node's CPU build. Remote models are off: the folder is the only place a model may
// come from, nothing is downloaded. The model runs in the process's ONNX model thread
// (adapters/onnx/model-thread.ts), so a batch of embeddings never holds up the event loop that
// answers the API.
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { type Embedder, EmbeddingError } from '../../../domain/ports.js';
import { askModelThread, modelThread } from '../../onnx/model-thread.js';
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
  private readonly modelDir: string;
  private readonly key = randomUUID();
  private learned: number | null = null;
  private loaded: Promise<void> | null = null;
  private closed = false;

  constructor(private readonly options: OnnxEmbedderOptions) {
    this.modelDir = path.resolve(options.modelDir);
    this.model = path.basename(this.modelDir);
  }

  dimensions(): number | null {
    return this.learned;
  }

  async embed(texts: readonly string[], opts: { signal?: AbortSignal } = {}): Promise<Float32Array[]> {
    if (this.closed) throw new EmbeddingError('closed', 'the embedder is closed');
    if (texts.length === 0) return [];
    opts.signal?.throwIfAborted();
    await this.load();
    const reply = await ask({
      type: 'embed',
      key: this.key,
      texts: [...texts],
      batchSize: this.options.batchSize,
    });
    if (this.closed) throw new EmbeddingError('closed', 'the embedder is closed');
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

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.loaded)
      await modelThread()
        .request({ type: 'unload', key: this.key })
        .catch(() => {});
  }

  /** Loads the model into the thread on first use; a failed load is tried again by the next call. */
  private load(): Promise<void> {
    this.loaded ??= (async () => {
      const reply = await ask({
        type: 'load',
        key: this.key,
        modelDir: this.modelDir,
        pooling: await poolingOf(this.modelDir),
      });
      if (reply.type === 'failed') {
        throw new EmbeddingError(
          'model_unavailable',
          `cannot load the model in ${this.modelDir}: ${reply.message}`,
        );
      }
    })().catch((error: unknown) => {
      // The folder may be fixed on disk; the next call tries again.
      this.loaded = null;
      throw error;
    });
    return this.loaded;
  }
}

/** A request to the model thread; its death is the model being unavailable. */
function ask(request: Parameters<typeof askModelThread>[0]) {
  return askModelThread(request, (message) => new EmbeddingError('model_unavailable', message));
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
