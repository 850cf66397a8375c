// Sends the webhook outbox: leases due messages from the WebhookStore (one instance per message at
// a time, whatever the number of processes; a bounded number per org and per endpoint, the orgs
// taking turns, so one org's slow endpoints cannot hold every delivery slot), signs each per the
// Standard Webhooks specification and POSTs it, then settles it: delivered, retried later with
// exponential backoff and jitter, or given up after the retry window (at once when the sender
// says no retry can succeed). Runs in every `serve` and `worker` process; a process killed
// mid-delivery leaves its lease to run out, and the message goes again with the same webhook-id.
import { equalJitter, exponentialBackoffMs } from './backoff.js';
import { hmacSha256Base64 } from './ids-and-hashes.js';
import { PollingLoop } from './polling-loop.js';
import type { Clock } from './ports.js';
import type { DocumentRecord } from './types.js';
import type { AttemptResult, ClaimedMessage, DeliveryOutcome, WebhookStore } from './webhooks.js';

/**
 * POSTs one signed message; rejects (with a message fit for the log) when no answer came. A
 * rejection whose `permanent` property is true is a failure no retry can fix (an invalid URL, an
 * address the SSRF policy refuses, a host that does not resolve): its message is given up at once.
 */
export type WebhookSender = (
  url: string,
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
) => Promise<{ statusCode: number }>;

export interface DispatcherOptions {
  /** Lease owner name of this process (host/pid/random). */
  owner: string;
  /** How often the outbox is looked at when it was found empty. */
  pollMs: number;
  /** Deliveries in flight at once in this process. */
  concurrency: number;
  /** Deliveries in flight at once for one org, across every process (fairness between orgs). */
  orgConcurrency: number;
  /** Deliveries in flight at once for one endpoint, across every process. */
  endpointConcurrency: number;
  /** How long a claimed message stays this process's: longer than one attempt can take. */
  leaseMs: number;
  retryBaseMs: number;
  retryMaxMs: number;
  /** Messages are retried until they are this old, then given up. */
  retryWindowMs: number;
  /** An endpoint failing for this long is disabled. */
  disableAfterMs: number;
  logLimit: number;
  /**
   * The status record's JSON as GET /v1/documents/{id} answers it, for an event of `type`: a
   * function of its arguments only, so every attempt of a message sends the same bytes.
   */
  render(record: DocumentRecord, type: string): unknown;
  onAttempt?(outcome: DeliveryOutcome, durationMs: number): void;
  onError?(error: unknown): void;
  random?: () => number;
}

/** The Standard Webhooks signature: base64 HMAC-SHA256 of `id.timestamp.body`, keyed by the secret. */
export function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
  const mac = hmacSha256Base64(key, `${id}.${timestampSeconds}.${body}`);
  return `v1,${mac}`;
}

/** Delay before attempt `attempt + 1`: exponential, capped, with "equal jitter" (half fixed, half random). */
export function backoffMs(attempt: number, baseMs: number, maxMs: number, random: () => number): number {
  // At most 30 doublings: the wait stays a finite number whatever the attempt count.
  const exp = exponentialBackoffMs(Math.min(30, attempt - 1), { baseMs, maxMs });
  return Math.round(equalJitter(exp, random));
}

export class WebhookDispatcher {
  private inFlight = 0;
  private readonly deliveries = new Set<Promise<void>>();
  private readonly stopping = new AbortController();
  private readonly random: () => number;
  private unsubscribe: (() => void) | null = null;
  /** Claims due messages, a pass at a time: woken by new messages and by each ended delivery. */
  private readonly loop: PollingLoop;

  constructor(
    private readonly store: WebhookStore,
    private readonly sender: WebhookSender,
    private readonly clock: Clock,
    private readonly options: DispatcherOptions,
  ) {
    this.random = options.random ?? Math.random;
    this.loop = new PollingLoop(() => this.claimPass(), {
      retryMs: options.pollMs,
      ...(options.onError ? { onError: options.onError } : {}),
    });
  }

  start(): void {
    if (this.unsubscribe === null) this.unsubscribe = this.store.onEnqueued?.(() => this.loop.wake()) ?? null;
    this.loop.start();
  }

  /** Stops claiming and waits for the deliveries in flight (each bounded by the send timeout). */
  async stop(): Promise<void> {
    this.unsubscribe?.();
    this.unsubscribe = null;
    await this.loop.stop();
    await Promise.allSettled([...this.deliveries]);
  }

  /**
   * Claims as many due messages as there are free slots and starts their deliveries. The next
   * pass: at once after a full batch (more may be due), after the poll interval otherwise, and
   * only when a delivery ends while every slot is taken.
   */
  private async claimPass(): Promise<number | null> {
    const free = this.options.concurrency - this.inFlight;
    if (free <= 0) return null;
    const now = this.clock.now();
    const claimed = await this.store.claimDue(
      this.options.owner,
      now,
      new Date(now.getTime() + this.options.leaseMs),
      {
        messages: free,
        perOrg: this.options.orgConcurrency,
        perEndpoint: this.options.endpointConcurrency,
      },
    );
    for (const message of claimed) this.launch(message);
    if (this.inFlight >= this.options.concurrency) return null;
    return claimed.length === free ? 0 : this.options.pollMs;
  }

  private launch(message: ClaimedMessage): void {
    this.inFlight += 1;
    const run = this.deliver(message)
      .catch((error: unknown) => this.options.onError?.(error))
      .finally(() => {
        this.inFlight -= 1;
        this.deliveries.delete(run);
        this.loop.wake();
      });
    this.deliveries.add(run);
  }

  /** The JSON body: the same bytes on every attempt of a message. */
  body(message: ClaimedMessage): string {
    const data =
      message.data !== undefined
        ? message.data
        : message.record === null
          ? { webhook_id: message.endpointId }
          : this.options.render(message.record, message.type);
    return JSON.stringify({ type: message.type, timestamp: message.createdAt.toISOString(), data });
  }

  private async deliver(message: ClaimedMessage): Promise<void> {
    const body = this.body(message);
    const started = this.clock.now();
    const timestamp = Math.floor(started.getTime() / 1000);
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'docindex-webhooks/0.1',
      'webhook-id': message.id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signWebhook(message.secret, message.id, timestamp, body),
    };
    const t0 = performance.now();
    let result: AttemptResult;
    let permanent = false;
    try {
      const { statusCode } = await this.sender(message.url, headers, body, this.stopping.signal);
      const durationMs = Math.round(performance.now() - t0);
      if (statusCode >= 200 && statusCode < 300)
        result = { statusCode, durationMs, error: null, kind: 'delivered' };
      else if (statusCode === 410) {
        result = { statusCode, durationMs, error: 'HTTP 410 Gone: endpoint disabled', kind: 'gone' };
      } else result = { statusCode, durationMs, error: `HTTP ${statusCode}`, kind: 'failed' };
    } catch (error) {
      const durationMs = Math.round(performance.now() - t0);
      permanent = (error as { permanent?: unknown } | null)?.permanent === true;
      const text = errorText(error);
      result = {
        statusCode: null,
        durationMs,
        error: permanent ? `${text} (not retried)` : text,
        kind: 'failed',
      };
    }
    const now = this.clock.now();
    const age = now.getTime() - message.createdAt.getTime();
    const nextAttemptAt =
      permanent || age >= this.options.retryWindowMs
        ? null
        : new Date(
            now.getTime() +
              backoffMs(message.attempt, this.options.retryBaseMs, this.options.retryMaxMs, this.random),
          );
    const outcome = await this.store.settle(
      message,
      result,
      { nextAttemptAt, disableIfFailingSince: new Date(now.getTime() - this.options.disableAfterMs) },
      now,
      this.options.logLimit,
    );
    if (outcome !== null) this.options.onAttempt?.(outcome, result.durationMs);
  }
}

function errorText(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}
