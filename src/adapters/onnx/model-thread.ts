// The one worker thread per process that runs ONNX models. One, because onnxruntime-node's native
// addon is not context-aware: a process can load it into a single thread only, ever (a second
// thread gets "Module did not self-register"). Every onnx adapter of the process (the embedder's
// sentence encoders, the reranker's cross-encoders) shares this thread; it is started on first use
// and stopped when the process has nothing else to do, and if it dies the models are unavailable
// until the process restarts (each adapter turns ModelThreadStopped into its own error).
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import {
  type OnnxWorkerData,
  type OnnxWorkerReply,
  type OnnxWorkerRequest,
  onnxWorkerMain,
} from './worker-main.js';

type Pending = { resolve: (reply: OnnxWorkerReply) => void; reject: (error: Error) => void };

/** Distributes the Omit over the union, so each request shape keeps its own fields. */
type WithoutId<T> = T extends unknown ? Omit<T, 'id'> : never;

class ModelThread {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private dead: Error | null = null;
  private readonly worker: Worker;

  constructor() {
    const data: OnnxWorkerData = {
      transformersPath: createRequire(import.meta.url).resolve('@huggingface/transformers'),
    };
    // The thread's code is one self-contained function, so the same source runs from the built
    // JavaScript and from the TypeScript sources under the test runner.
    this.worker = new Worker(`(${onnxWorkerMain.toString()})()`, { eval: true, workerData: data });
    // Left to Node's own teardown at exit, a thread that ran an ONNX session keeps the process
    // from ever exiting (onnxruntime's native threads); terminated while the process is still
    // alive, it stops at once. 'beforeExit' comes when nothing but this unref'd thread is left.
    process.once('beforeExit', () => void this.worker.terminate());
    this.worker.on('message', (reply: OnnxWorkerReply) => {
      const pending = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (this.pending.size === 0) this.worker.unref();
      pending?.resolve(reply);
    });
    const stop = (error: Error) => {
      this.dead ??= error;
      for (const pending of this.pending.values()) pending.reject(this.unavailable());
      this.pending.clear();
    };
    this.worker.on('error', stop);
    this.worker.on('exit', (code) => stop(new Error(`the model thread exited (${code})`)));
    // Held (ref'd) only while a request waits for its answer; after the listeners, as adding a
    // 'message' listener refs the thread's port again.
    this.worker.unref();
  }

  /** Sends a request; resolves with the thread's reply (a `failed` reply included). */
  request(request: WithoutId<OnnxWorkerRequest>): Promise<OnnxWorkerReply> {
    if (this.dead) return Promise.reject(this.unavailable());
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.ref();
      this.worker.postMessage({ ...request, id });
    });
  }

  private unavailable(): ModelThreadStopped {
    return new ModelThreadStopped(`the model thread stopped: ${this.dead?.message ?? 'unknown'}`);
  }
}

/** The model thread died: no model of this process can run until it restarts. */
export class ModelThreadStopped extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ModelThreadStopped';
  }
}

let shared: ModelThread | null = null;

export function modelThread(): ModelThread {
  shared ??= new ModelThread();
  return shared;
}

/**
 * A request to the shared model thread, for an adapter whose port has its own error type: the
 * thread's death becomes `unavailable(message)` (each adapter's `model_unavailable`).
 */
export function askModelThread(
  request: Parameters<ModelThread['request']>[0],
  unavailable: (message: string) => Error,
): ReturnType<ModelThread['request']> {
  return modelThread()
    .request(request)
    .catch((error: unknown) => {
      throw error instanceof ModelThreadStopped ? unavailable(error.message) : error;
    });
}
