// A promise with a deadline: for calls to services that may never answer (a Redis or database
// that went away), so the caller fails in bounded time instead of hanging.

/** `promise`, or a rejection with `${what} within ${ms} ms` once `ms` pass first. */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms);
    // The deadline alone never keeps a process alive.
    timer.unref();
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
