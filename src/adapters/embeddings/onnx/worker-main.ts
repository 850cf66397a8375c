// The code of the onnx embedders' worker thread. It is one self-contained function (no imports,
// no outside names): model-thread.ts starts the thread from its source text, which is the same
// whether it was compiled by tsc or by the test runner, so no separate worker file has to be
// found on disk. It holds every loaded model of the process and runs one request at a time.

export interface OnnxWorkerData {
  /** Resolved by the parent: an eval'd thread has no package resolution of its own. */
  transformersPath: string;
}

export type OnnxWorkerRequest =
  // `key` names one embedder's copy of a model, so closing one embedder never unloads another's.
  | { type: 'load'; id: number; key: string; modelDir: string; pooling: 'mean' | 'cls' }
  | { type: 'embed'; id: number; key: string; texts: string[]; batchSize: number }
  | { type: 'unload'; id: number; key: string };

export type OnnxWorkerReply =
  | { type: 'done'; id: number }
  | { type: 'vectors'; id: number; data: Float32Array; count: number; dimensions: number }
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
  };
  // Local files only: never ask the Hugging Face Hub for anything.
  transformers.env.allowRemoteModels = false;
  transformers.env.allowLocalModels = true;
  transformers.env.useFSCache = false;
  const models = new Map<string, { extractor: Extractor; pooling: string }>();

  async function handle(request: OnnxWorkerRequest): Promise<OnnxWorkerReply> {
    if (request.type === 'load') {
      if (!models.has(request.key)) {
        // transformers.js finds a local model as <localModelPath>/<name>.
        transformers.env.localModelPath = nodePath.dirname(request.modelDir);
        const extractor = await transformers.pipeline(
          'feature-extraction',
          nodePath.basename(request.modelDir),
          {
            dtype: 'fp32',
            local_files_only: true,
          },
        );
        models.set(request.key, { extractor, pooling: request.pooling });
      }
      return { type: 'done', id: request.id };
    }
    const model = models.get(request.key);
    if (request.type === 'unload') {
      models.delete(request.key);
      await model?.extractor.dispose();
      return { type: 'done', id: request.id };
    }
    if (!model) throw new Error('the model is not loaded');
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
        port.postMessage(reply, reply.type === 'vectors' ? [reply.data.buffer as ArrayBuffer] : []);
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
