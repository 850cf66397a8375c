// The code of the process's ONNX model thread, which runs the onnx embedders' sentence encoders
// and the onnx reranker's cross-encoders. It is one self-contained function (no imports, no
// outside names): model-thread.ts starts the thread from its source text, which is the same
// whether it was compiled by tsc or by the test runner, so no separate worker file has to be found
// on disk. It holds every loaded model of the process and runs one request at a time.

export interface OnnxWorkerData {
  /** Resolved by the parent: an eval'd thread has no package resolution of its own. */
  transformersPath: string;
}

export type OnnxWorkerRequest =
  // `key` names one adapter's copy of a model, so closing one adapter never unloads another's.
  | { type: 'load'; id: number; key: string; modelDir: string; pooling: 'mean' | 'cls' }
  | { type: 'embed'; id: number; key: string; texts: string[]; batchSize: number }
  | { type: 'load-cross-encoder'; id: number; key: string; modelDir: string }
  | { type: 'score'; id: number; key: string; query: string; texts: string[]; batchSize: number }
  | { type: 'unload'; id: number; key: string };

export type OnnxWorkerReply =
  | { type: 'done'; id: number }
  | { type: 'vectors'; id: number; data: Float32Array; count: number; dimensions: number }
  | { type: 'scores'; id: number; data: Float32Array }
  | { type: 'failed'; id: number; message: string };

export async function onnxWorkerMain(): Promise<void> {
  interface Output {
    data: Float32Array;
    dims: number[];
  }
  interface Extractor {
    (texts: string[], opts: { pooling: string; normalize: boolean }): Promise<Output>;
    dispose(): Promise<void>;
  }
  type Tokenizer = (
    texts: string[],
    opts: { text_pair: string[]; padding: boolean; truncation: boolean },
  ) => Record<string, unknown>;
  interface Classifier {
    (inputs: Record<string, unknown>): Promise<{ logits: Output }>;
    dispose(): Promise<void>;
  }
  interface Loadable<T> {
    from_pretrained(name: string, opts: Record<string, unknown>): Promise<T>;
  }
  type Model =
    | { kind: 'encoder'; extractor: Extractor; pooling: string }
    | { kind: 'cross-encoder'; tokenizer: Tokenizer; classifier: Classifier };
  // No `require` or `import` of our own: an eval'd thread runs as CommonJS or as a module
  // depending on the process's flags (`--input-type`), so built-ins come from the process.
  const threads = process.getBuiltinModule('node:worker_threads');
  const nodePath = process.getBuiltinModule('node:path');
  const port = threads.parentPort!;
  const data = threads.workerData as OnnxWorkerData;
  const load = process.getBuiltinModule('node:module').createRequire(data.transformersPath);
  const transformers = load(data.transformersPath) as {
    env: Record<string, unknown>;
    pipeline: (task: string, model: string, opts: Record<string, unknown>) => Promise<Extractor>;
    AutoTokenizer: Loadable<Tokenizer>;
    AutoModelForSequenceClassification: Loadable<Classifier>;
  };
  // Local files only: never ask the Hugging Face Hub for anything.
  transformers.env.allowRemoteModels = false;
  transformers.env.allowLocalModels = true;
  transformers.env.useFSCache = false;
  const models = new Map<string, Model>();
  const local = { dtype: 'fp32', local_files_only: true };

  /** transformers.js finds a local model as <localModelPath>/<name>: the folder's name. */
  function localName(modelDir: string): string {
    transformers.env.localModelPath = nodePath.dirname(modelDir);
    return nodePath.basename(modelDir);
  }

  /**
   * A cross-encoder's relevance of each (query, text) pair: the sigmoid of its one logit, or, for a
   * model with several labels, the softmax probability of the last one (the "relevant" label).
   */
  function relevance(logits: Output): Float32Array {
    const labels = logits.dims[logits.dims.length - 1] ?? 1;
    const rows = logits.data.length / labels;
    const out = new Float32Array(rows);
    for (let row = 0; row < rows; row++) {
      const values = logits.data.subarray(row * labels, (row + 1) * labels);
      if (labels === 1) {
        out[row] = 1 / (1 + Math.exp(-values[0]!));
      } else {
        const top = Math.max(...values);
        let sum = 0;
        for (const v of values) sum += Math.exp(v - top);
        out[row] = Math.exp(values[labels - 1]! - top) / sum;
      }
    }
    return out;
  }

  async function handle(request: OnnxWorkerRequest): Promise<OnnxWorkerReply> {
    if (request.type === 'load') {
      if (!models.has(request.key)) {
        const extractor = await transformers.pipeline(
          'feature-extraction',
          localName(request.modelDir),
          local,
        );
        models.set(request.key, { kind: 'encoder', extractor, pooling: request.pooling });
      }
      return { type: 'done', id: request.id };
    }
    if (request.type === 'load-cross-encoder') {
      if (!models.has(request.key)) {
        const name = localName(request.modelDir);
        const tokenizer = await transformers.AutoTokenizer.from_pretrained(name, local);
        const classifier = await transformers.AutoModelForSequenceClassification.from_pretrained(name, local);
        models.set(request.key, { kind: 'cross-encoder', tokenizer, classifier });
      }
      return { type: 'done', id: request.id };
    }
    const model = models.get(request.key);
    if (request.type === 'unload') {
      models.delete(request.key);
      if (model?.kind === 'encoder') await model.extractor.dispose();
      if (model?.kind === 'cross-encoder') await model.classifier.dispose();
      return { type: 'done', id: request.id };
    }
    if (!model) throw new Error('the model is not loaded');
    if (request.type === 'score') {
      if (model.kind !== 'cross-encoder') throw new Error('the model is not a cross-encoder');
      const scores = new Float32Array(request.texts.length);
      for (let i = 0; i < request.texts.length; i += request.batchSize) {
        const texts = request.texts.slice(i, i + request.batchSize);
        const inputs = model.tokenizer(
          texts.map(() => request.query),
          { text_pair: texts, padding: true, truncation: true },
        );
        const { logits } = await model.classifier(inputs);
        scores.set(relevance(logits), i);
      }
      return { type: 'scores', id: request.id, data: scores };
    }
    if (model.kind !== 'encoder') throw new Error('the model is not a sentence encoder');
    const parts: Float32Array[] = [];
    let dimensions = 0;
    for (let i = 0; i < request.texts.length; i += request.batchSize) {
      const output = await model.extractor(request.texts.slice(i, i + request.batchSize), {
        pooling: model.pooling,
        normalize: true,
      });
      dimensions = output.dims[output.dims.length - 1] ?? 0;
      parts.push(output.data);
    }
    const all = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
    let offset = 0;
    for (const part of parts) {
      all.set(part, offset);
      offset += part.length;
    }
    return { type: 'vectors', id: request.id, data: all, count: request.texts.length, dimensions };
  }

  let queue: Promise<void> = Promise.resolve();
  port.on('message', (request: OnnxWorkerRequest) => {
    queue = queue.then(async () => {
      try {
        const reply = await handle(request);
        const transfer =
          reply.type === 'vectors' || reply.type === 'scores' ? [reply.data.buffer as ArrayBuffer] : [];
        port.postMessage(reply, transfer);
      } catch (error) {
        port.postMessage({
          type: 'failed',
          id: request.id,
          message: error instanceof Error ? error.message : String(error),
        });
      }
    });
  });
}
