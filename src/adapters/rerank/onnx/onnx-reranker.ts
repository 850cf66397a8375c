// The `onnx` reranker: a local cross-encoder folder (config.json, tokenizer.json, onnx/model.onnx
// — e.g. ms-marco-MiniLM-L-6-v2 or bge-reranker-base exported for transformers.js) run by
// transformers.js as a sequence classifier. Remote models are off: nothing is downloaded. The model
// runs in the process's ONNX model thread (adapters/onnx/model-thread.ts, shared with the onnx
// embedder, as onnxruntime allows one thread per process), so scoring never blocks the event loop.
// A text's score is the sigmoid of the model's logit (0–1).
import { RerankError, type Reranker } from '../../../domain/ports.js';
import { ThreadModel } from '../../onnx/thread-model.js';

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
  private readonly thread: ThreadModel;

  constructor(private readonly options: OnnxRerankerOptions) {
    this.thread = new ThreadModel(
      options.modelDir,
      async (key, modelDir) => ({ type: 'load-cross-encoder', key, modelDir }),
      (message) => new RerankError('model_unavailable', message),
    );
    this.model = this.thread.name;
  }

  async score(
    query: string,
    texts: readonly string[],
    opts: { signal?: AbortSignal } = {},
  ): Promise<number[]> {
    if (this.thread.closed) throw new RerankError('closed', 'the reranker is closed');
    if (texts.length === 0) return [];
    opts.signal?.throwIfAborted();
    const reply = await this.thread.ask({
      type: 'score',
      key: this.thread.key,
      query,
      texts: [...texts],
      batchSize: this.options.batchSize,
    });
    if (this.thread.closed) throw new RerankError('closed', 'the reranker is closed');
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

  close(): Promise<void> {
    return this.thread.close();
  }
}
