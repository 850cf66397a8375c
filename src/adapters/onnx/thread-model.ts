// One model folder loaded into the process's ONNX model thread: loaded on first use (a failed
// load is tried again by the next call, as the folder may be fixed on disk), asked under its own
// key, unloaded on close. The embedder and the reranker each hold one.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { askModelThread } from './model-thread.js';

type ModelRequest = Parameters<typeof askModelThread>[0];
type ModelReply = Awaited<ReturnType<typeof askModelThread>>;

export class ThreadModel {
  /** The folder, resolved. */
  readonly dir: string;
  /** The folder's name (`bge-small-en-v1.5`). */
  readonly name: string;
  readonly key = randomUUID();
  private loaded: Promise<void> | null = null;
  private closedFlag = false;

  /**
   * `load` builds the request that loads the folder under `key`; `unavailable` makes the error
   * its callers get when the model cannot be loaded or the thread has died.
   */
  constructor(
    modelDir: string,
    private readonly load: (key: string, dir: string) => Promise<ModelRequest>,
    private readonly unavailable: (message: string) => Error,
  ) {
    this.dir = path.resolve(modelDir);
    this.name = path.basename(this.dir);
  }

  get closed(): boolean {
    return this.closedFlag;
  }

  /** Asks the model thread, once the folder is loaded into it. */
  async ask(request: ModelRequest): Promise<ModelReply> {
    await this.loadOnce();
    return askModelThread(request, this.unavailable);
  }

  async close(): Promise<void> {
    if (this.closedFlag) return;
    this.closedFlag = true;
    if (this.loaded)
      await askModelThread({ type: 'unload', key: this.key }, this.unavailable).catch(() => {});
  }

  private loadOnce(): Promise<void> {
    this.loaded ??= (async () => {
      const reply = await askModelThread(await this.load(this.key, this.dir), this.unavailable);
      if (reply.type === 'failed') {
        throw this.unavailable(`cannot load the model in ${this.dir}: ${reply.message}`);
      }
    })().catch((error: unknown) => {
      this.loaded = null;
      throw error;
    });
    return this.loaded;
  }
}
