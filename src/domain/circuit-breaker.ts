// A circuit breaker for one provider (the embedding provider, the reranker): after
// `failureThreshold` consecutive failures it opens, and calls are refused at once, without touching
// the provider, for `coolDownMs`; then the next call is let through as the one probe (half-open):
// its success closes the breaker, its failure opens it for another cool-down. Calls that arrive
// while the probe is out are refused too. What counts as a failure (an outage: timeouts, 5xx, lost
// connections) is the caller's to say; any other outcome means the provider answered, and closes
// the breaker. Pure: time comes from the injected clock.
import type { Clock } from './ports.js';

export type CircuitState = 'closed' | 'open' | 'half-open';

export const CIRCUIT_STATES: readonly CircuitState[] = ['closed', 'open', 'half-open'];

export interface CircuitBreakerOptions {
  /** Consecutive failures that open the breaker (≥ 1). */
  failureThreshold: number;
  /** How long an open breaker refuses calls before it lets one probe through. */
  coolDownMs: number;
  /** Told of every change of state. */
  onStateChange?: (to: CircuitState, from: CircuitState) => void;
}

/** Refused without a call: the breaker is open (or its probe is out). */
export class CircuitOpenError extends Error {
  constructor(
    readonly provider: string,
    /** Time until the next probe may go, 0 while a probe is out. */
    readonly retryAfterMs: number,
  ) {
    super(`the ${provider} provider failed repeatedly and is skipped for a cool-down`);
    this.name = 'CircuitOpenError';
  }
}

export class CircuitBreaker {
  private failures = 0;
  /** When the breaker last opened (ms since the epoch); null while closed. */
  private openedAt: number | null = null;
  private probing = false;
  private reported: CircuitState = 'closed';

  constructor(
    /** The provider's name in messages, logs and metrics: `embeddings`, `rerank`. */
    readonly provider: string,
    private readonly clock: Clock,
    private readonly options: CircuitBreakerOptions,
  ) {
    if (!(options.failureThreshold >= 1)) throw new RangeError('failureThreshold must be at least 1');
  }

  /** `half-open` once the cool-down is over (the next call is the probe) and while the probe is out. */
  state(): CircuitState {
    if (this.openedAt === null) return 'closed';
    if (this.probing || this.coolDownLeft() === 0) return 'half-open';
    return 'open';
  }

  /** Consecutive failures counted so far (reset by any answer). */
  consecutiveFailures(): number {
    return this.failures;
  }

  /**
   * Runs `call` unless the breaker refuses it (CircuitOpenError, and `call` is never invoked).
   * `isFailure(error)` says whether an error counts against the provider.
   */
  async run<T>(call: () => Promise<T>, isFailure: (error: unknown) => boolean): Promise<T> {
    const probe = this.admit();
    try {
      const value = await call();
      this.answered();
      return value;
    } catch (error) {
      if (isFailure(error)) this.failed(probe);
      else this.answered();
      throw error;
    }
  }

  /** Whether this call is the probe; throws CircuitOpenError when the call may not go. */
  private admit(): boolean {
    if (this.openedAt === null) return false;
    if (this.probing) throw new CircuitOpenError(this.provider, 0);
    const left = this.coolDownLeft();
    if (left > 0) throw new CircuitOpenError(this.provider, left);
    this.probing = true;
    this.report();
    return true;
  }

  private answered(): void {
    this.failures = 0;
    this.openedAt = null;
    this.probing = false;
    this.report();
  }

  private failed(probe: boolean): void {
    this.failures++;
    // A failed probe re-opens at once; a call let through before the breaker opened (one of a
    // burst) must not restart a cool-down already running.
    if (probe || (this.openedAt === null && this.failures >= this.options.failureThreshold)) {
      this.openedAt = this.clock.now().getTime();
    }
    if (probe) this.probing = false;
    this.report();
  }

  private coolDownLeft(): number {
    if (this.openedAt === null) return 0;
    return Math.max(0, this.openedAt + this.options.coolDownMs - this.clock.now().getTime());
  }

  private report(): void {
    const now = this.state();
    if (now === this.reported) return;
    const was = this.reported;
    this.reported = now;
    this.options.onStateChange?.(now, was);
  }
}
