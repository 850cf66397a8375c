// Why `docindex models pull` or `models list` could not finish, as one class whose `reason` the
// command line's exit.ts turns into an exit code: the user's setup to fix (a token the Hub wants,
// a MODELS_DIR that cannot be written) exits 2, anything else the Hub, the network or the disk
// said exits 1. The message is the one line the user reads.

export type ModelFailure =
  /** The Hub wants a (better) HF_TOKEN: a gated or private model, or a refused token. */
  | 'unauthorized'
  /** MODELS_DIR (or a folder in it) may not be written. */
  | 'not_writable'
  /** No such model, revision or file on the Hub. */
  | 'not_found'
  /** The model has no files transformers.js can run (no onnx/model.onnx, no tokenizer.json…). */
  | 'not_a_model'
  /** The Hub or its CDN could not be reached, or the connection broke off. */
  | 'network'
  /** The Hub answered with an error status (429, 5xx) or something unreadable. */
  | 'hub'
  /** A downloaded file's size or hash is not the one the Hub lists. */
  | 'integrity'
  /** The disk refused a write for another reason than permissions (full, I/O error). */
  | 'disk'
  /** Another pull of the same model is running. */
  | 'busy';

export class ModelPullError extends Error {
  override readonly name = 'ModelPullError';
  constructor(
    readonly reason: ModelFailure,
    message: string,
  ) {
    super(message);
  }

  /** The user's setup must change before the command can work (exit 2). */
  get setup(): boolean {
    return this.reason === 'unauthorized' || this.reason === 'not_writable';
  }
}

const NOT_WRITABLE = new Set(['EACCES', 'EPERM', 'EROFS']);

/** A file-system error (it has a `syscall`) as a ModelPullError about `target`; anything else unchanged. */
export function diskFailure(error: unknown, target: string): unknown {
  if (!(error instanceof Error) || !('syscall' in error)) return error;
  const code = 'code' in error && typeof error.code === 'string' ? error.code : 'EIO';
  if (NOT_WRITABLE.has(code)) {
    return new ModelPullError(
      'not_writable',
      `cannot write ${target} (${code}): choose another MODELS_DIR or fix its permissions`,
    );
  }
  if (code === 'ENOSPC' || code === 'EDQUOT') {
    return new ModelPullError(
      'disk',
      `no space left for ${target} (${code}): free some and run the same command again; it resumes where it stopped`,
    );
  }
  if (code === 'ENOTDIR' || code === 'EEXIST') {
    return new ModelPullError(
      'disk',
      `${target} is in the way (${code}): a file stands where a folder should`,
    );
  }
  return new ModelPullError('disk', `cannot write ${target} (${code}: ${error.message})`);
}

/** Runs a file-system step, turning its failure into a ModelPullError about `target`. */
export async function onDisk<T>(target: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    throw diskFailure(error, target);
  }
}
