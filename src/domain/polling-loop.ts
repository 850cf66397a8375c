// A background loop that runs one pass at a time: again after the delay the pass asks for, at once
// when woken, never after stop(). The webhook dispatcher and the vector stage run on it; the lease
// engine's consumers hold one job each and wait in their own slots instead.

/**
 * One pass of the loop. It resolves with the milliseconds until the next pass, or null to wait
 * until woken. A pass that rejects is reported to `onError` and the loop looks again after
 * `retryMs`.
 */
export type LoopPass = () => Promise<number | null>;

export interface PollingLoopOptions {
  /** After a pass that rejected (default 1 s). */
  retryMs?: number;
  onError?: (error: unknown) => void;
}

export class PollingLoop {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = true;
  /** Woken while a pass ran: the next pass starts as soon as it ends. */
  private woken = false;
  private readonly retryMs: number;

  constructor(
    private readonly pass: LoopPass,
    private readonly options: PollingLoopOptions = {},
  ) {
    this.retryMs = options.retryMs ?? 1_000;
  }

  /** Starts the loop with a pass now; a loop already started is left as it is. */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(0);
  }

  /** A pass now, or right after the one running, instead of at its scheduled time. */
  wake(): void {
    if (this.stopped) return;
    if (this.running !== null) {
      this.woken = true;
      return;
    }
    this.schedule(0);
  }

  /** Whether a pass is running now. */
  busy(): boolean {
    return this.running !== null;
  }

  /** Whether the loop is started and not stopped: a long pass may check it to end early. */
  active(): boolean {
    return !this.stopped;
  }

  /** No pass starts after this; resolves once the running one (if any) has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    // The timer never keeps the process alive: stop() is how a loop ends.
    this.timer = setTimeout(() => {
      this.timer = null;
      this.run();
    }, delayMs);
    this.timer.unref();
  }

  private run(): void {
    if (this.stopped) return;
    this.woken = false;
    this.running = this.pass()
      .catch((error: unknown) => {
        this.options.onError?.(error);
        return this.retryMs;
      })
      .then((next) => {
        this.running = null;
        if (this.woken) this.schedule(0);
        else if (next !== null) this.schedule(next);
      });
  }
}
