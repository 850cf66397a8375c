// The `onnx` reranker: a local cross-encoder folder (config.json, tokenizer.json, onnx/model.onnx
// — e.g. ms-marco-MiniLM-L-6-v2 or bge-reranker-base exported for transformers.js) run by
// transformers.js as a sequence classifier. Remote models are off: nothing is downloaded. The model
// runs in the process's ONNX model thread (adapters/onnx/model-thread.ts, shared with the onnx
// embedder, as onnxruntime allows one thread per process), so scoring never blocks the event loop.
// A text's score is the sigmoid of the model's logit (0–1).
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { RerankError, type Reranker } from '../../../domain/ports.js';
import { askModelThread } from '../../onnx/model-thread.js';

export interface OnnxRerankerOptions {
  /** The model folder. */
  modelDir: string;
  /** (query, text) pairs per model run. */
  batchSize: number;
}

export class OnnxReranker implements Reranker {
  readonly provider = 'onnx';
  /** The folder's name (`ms-marco-MiniLM-L-6-v2`). */
  readonly model: string;
  private readonly modelDir: string;
  private readonly key = randomUUID();
  private loaded: Promise<void> | null = null;
  private closed = false;

  constructor(private readonly options: OnnxRerankerOptions) {
    this.modelDir = path.resolve(options.modelDir);
    this.model = path.basename(this.modelDir);
  }

  async score(
    query: string,
    texts: readonly string[],
    opts: { signal?: AbortSignal } = {},
  ): Promise<number[]> {
    if (this.closed) throw new RerankError('closed', 'the reranker is closed');
    if (texts.length === 0) return [];
    opts.signal?.throwIfAborted();
    await this.load();
    const reply = await ask({
      type: 'score',
      key: this.key,
      query,
      texts: [...texts],
      batchSize: this.options.batchSize,
    });
    if (this.closed) throw new RerankError('closed', 'the reranker is closed');
    if (reply.type !== 'scores') {
      throw new RerankError(
        'bad_response',
        `the model failed: ${reply.type === 'failed' ? reply.message : reply.type}`,
      );
    }
    if (reply.data.length !== texts.length) {
      throw new RerankError('bad_response', `the model scored ${reply.data.length} of ${texts.length} texts`);
    }
    return Array.from(reply.data);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.loaded) await ask({ type: 'unload', key: this.key }).catch(() => {});
  }

  /** Loads the model into the thread on first use; a failed load is tried again by the next call. */
  private load(): Promise<void> {
    this.loaded ??= (async () => {
      const reply = await ask({ type: 'load-cross-encoder', key: this.key, modelDir: this.modelDir });
      if (reply.type === 'failed') {
        throw new RerankError(
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
  return askModelThread(request, (message) => new RerankError('model_unavailable', message));
}
