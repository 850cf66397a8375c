// Workers that share a process with the API give way to bursts of ingests. Chunking runs in
// threads, but every index write runs on the event loop that also answers requests, so under a
// burst of ingests in-process workers would take a share of the loop the API needs to keep
// accepting. While ingest requests arrive at or above a threshold rate, documents are processed
// one at a time with a pause between starts: a floor, so the queue still drains. Accepted
// documents are durable, so deferring them costs nothing but time, and the burst is filling the
// queue anyway; once it ends, the workers run at full concurrency again. Only ingests count: a
// crowd of clients polling or querying must never hold documents back. Separate `docindex worker`
// processes never yield.
import type { JobContext, JobHandler } from '../domain/ports.js';

/** Requests per second over roughly the last window, from two fixed windows (sliding estimate). */
export class RequestRate {
  private windowStart = 0;
  private current = 0;
  private previous = 0;

  constructor(private readonly windowMs = 250) {}

  record(now: number): void {
    this.roll(now);
    this.current++;
  }

  perSecond(now: number): number {
    this.roll(now);
    const elapsed = (now - this.windowStart) / this.windowMs;
    const estimate = this.previous * Math.max(0, 1 - elapsed) + this.current;
    return (estimate * 1000) / this.windowMs;
  }

  private roll(now: number): void {
    const windows = Math.floor((now - this.windowStart) / this.windowMs);
    if (windows <= 0) return;
    this.previous = windows === 1 ? this.current : 0;
    this.current = 0;
    this.windowStart += windows * this.windowMs;
  }
}

export interface YieldOptions {
  /** The API counts as busy at this many (ingest) requests per second or more. */
  busyRequestsPerSecond: number;
  /** While it is busy: at most one document at a time, started at least this far apart. */
  floorSpacingMs: number;
  now?: () => number;
  /** Waits `ms` or until the signal aborts (tests replace it). */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/** How often a waiting document looks again whether the API is still busy. */
const RECHECK_MS = 25;

/** Wraps a job handler so that it gives way to API traffic measured by `rate`. */
export function yieldToApi(handler: JobHandler, rate: RequestRate, options: YieldOptions): JobHandler {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? abortableSleep;
  let running = 0;
  let lastStart = Number.NEGATIVE_INFINITY;

  const mayStart = (at: number): number => {
    if (rate.perSecond(at) < options.busyRequestsPerSecond) return 0;
    if (running > 0) return RECHECK_MS;
    const wait = lastStart + options.floorSpacingMs - at;
    return wait > 0 ? Math.min(wait, RECHECK_MS) : 0;
  };

  return async (job: JobContext) => {
    for (let wait = mayStart(now()); wait > 0; wait = mayStart(now())) {
      job.signal.throwIfAborted();
      await sleep(wait, job.signal);
    }
    job.signal.throwIfAborted();
    running++;
    lastStart = now();
    try {
      await handler(job);
    } finally {
      running--;
    }
  };
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
