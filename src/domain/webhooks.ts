// Webhooks: an org's endpoints, the events they subscribe to, and the port of the store that keeps
// endpoints, the outbox and the delivery log. The outbox rows themselves are written by the
// document stores inside their own transactions (adapters' webhook outbox helpers), so a status
// change and its event commit together or not at all; the dispatcher (webhook-dispatcher.ts)
// sends them.
import { ERRORS } from './errors.js';
import { randomToken } from './ids-and-hashes.js';
import type { Clock } from './ports.js';
import type { DocumentRecord } from './types.js';

/** Document and source events an endpoint can subscribe to (docs/API.md lists them for users). */
export const WEBHOOK_EVENTS = [
  'document.ready',
  'document.failed',
  'document.deleted',
  'document.vectors_ready',
  'source.sync.completed',
  'source.sync.failed',
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENTS)[number];

/** The type of the message POST /v1/webhooks/{id}/test sends; never an outbox event of a document. */
export const TEST_EVENT = 'webhook.test';

/** Events of a source's run: their payload is the run, not a document's status record. */
export function isSourceEvent(type: string): boolean {
  return type.startsWith('source.');
}

export function isWebhookEvent(value: unknown): value is WebhookEventType {
  return typeof value === 'string' && (WEBHOOK_EVENTS as readonly string[]).includes(value);
}

export interface WebhookEndpoint {
  id: string;
  orgId: string;
  url: string;
  events: WebhookEventType[];
  description: string | null;
  /** `whsec_<base64 key>`: shown once at creation, then only the dispatcher reads it. */
  secret: string;
  createdAt: Date;
  /** null while deliveries are attempted. */
  disabledAt: Date | null;
  disabledReason: 'gone' | 'failing' | null;
  /** When the current run of failed attempts began; null after any success. */
  failingSince: Date | null;
  /** Events dropped, oldest first, because the endpoint had `maxPending` messages waiting. */
  droppedMessages: number;
}

/** Messages one endpoint may have waiting (WEBHOOK_MAX_PENDING's default). */
export const DEFAULT_MAX_PENDING = 10_000;

/** Seconds a test refused for a full backlog is told to wait: a receiver catching up takes a while. */
const BACKLOG_RETRY_AFTER_SECONDS = 60;

/** What putting a test message in the outbox did. */
export type EnqueueResult = { messageId: string } | 'backlog_full' | 'no_endpoint';

/** One outbox message claimed for delivery: a message is one event for one endpoint. */
export interface ClaimedMessage {
  /** `msg_…`: the `webhook-id`, the same on every attempt. */
  id: string;
  endpointId: string;
  orgId: string;
  url: string;
  secret: string;
  type: string;
  /** The status record as it was when the event happened; null for the test message and source events. */
  record: DocumentRecord | null;
  /** A source event's payload (the run as GET /v1/sources/{id}/runs shows it). */
  data?: unknown;
  createdAt: Date;
  /** This attempt's number, 1 for the first. */
  attempt: number;
  leaseOwner: string;
}

export type DeliveryOutcome = 'delivered' | 'retrying' | 'gave_up' | 'endpoint_disabled';

/** One attempt in the delivery log. */
export interface DeliveryAttempt {
  id: number;
  messageId: string;
  endpointId: string;
  eventType: string;
  attempt: number;
  /** HTTP status of the answer; null when none came (refused, timeout, unreachable). */
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  outcome: DeliveryOutcome;
  at: Date;
}

/** How one attempt ended, as the dispatcher decided. */
export interface AttemptResult {
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  /** 'delivered': a 2xx; 'gone': 410 (disable the endpoint); 'failed': anything else. */
  kind: 'delivered' | 'gone' | 'failed';
}

/** What the store should do after an attempt that did not deliver. */
export interface RetryPlan {
  /** Next attempt; null = give up on this message. */
  nextAttemptAt: Date | null;
  /** The endpoint has failed for longer than the disable threshold. */
  disableIfFailingSince: Date;
}

/** What a settled attempt does to its message and endpoint. */
export interface Settlement {
  outcome: DeliveryOutcome;
  /** Set when the endpoint is to be disabled (with all its waiting messages). */
  disable: 'gone' | 'failing' | null;
}

/**
 * The one rule both webhook stores apply when an attempt is settled: a 2xx delivers; a 410, or a
 * failure of an endpoint failing since before the plan's threshold, disables the endpoint; else the
 * message is retried at the planned time, or given up when the plan has none. `failingSince` is the
 * endpoint's, this failure included (null after a delivery).
 */
export function settlementOf(result: AttemptResult, failingSince: Date | null, retry: RetryPlan): Settlement {
  if (result.kind === 'delivered') return { outcome: 'delivered', disable: null };
  if (result.kind === 'gone') return { outcome: 'endpoint_disabled', disable: 'gone' };
  if (failingSince !== null && failingSince <= retry.disableIfFailingSince) {
    return { outcome: 'endpoint_disabled', disable: 'failing' };
  }
  return { outcome: retry.nextAttemptAt === null ? 'gave_up' : 'retrying', disable: null };
}

export interface OutboxStats {
  /** Messages not yet delivered or given up, across every org. */
  depth: number;
  /** Creation time of the oldest of them; null when there is none. */
  oldest: Date | null;
}

/** How much one claim may take: in all, and in flight at once per org and per endpoint. */
export interface ClaimLimits {
  messages: number;
  perOrg: number;
  perEndpoint: number;
}

export interface WebhookStore {
  /**
   * Adds the endpoint unless its org already has `maxPerOrg`: the count and the insert are one
   * atomic step, so concurrent creates never pass the limit. false when at the limit.
   */
  createEndpoint(endpoint: WebhookEndpoint, maxPerOrg: number): Promise<boolean>;
  countEndpoints(orgId: string): Promise<number>;
  /** Oldest first. */
  listEndpoints(orgId: string): Promise<WebhookEndpoint[]>;
  /** null when missing or another org's. */
  getEndpoint(orgId: string, id: string): Promise<WebhookEndpoint | null>;
  /** Removes the endpoint, its outbox messages and its log; false when there was none for this org. */
  deleteEndpoint(orgId: string, id: string): Promise<boolean>;
  /**
   * Optional: calls `listener` when this process wrote new outbox messages (after they
   * committed), so its dispatcher need not wait for the next poll. Returns an unsubscribe.
   */
  onEnqueued?(listener: () => void): () => void;
  /**
   * Puts a test message for the endpoint in the outbox, unless it has `maxPending` messages waiting
   * already; 'no_endpoint' when there is no such enabled endpoint of the org.
   */
  enqueueTest(orgId: string, endpointId: string, at: Date, maxPending: number): Promise<EnqueueResult>;
  /**
   * Leases up to `limits.messages` messages due at `now` of enabled endpoints, each to `owner`
   * until `leaseUntil`, counting the attempt. Fair between orgs: an org never has more than
   * `limits.perOrg` messages leased at once (by every owner together), an endpoint never more
   * than `limits.perEndpoint`, and the orgs with due messages take turns (each org's oldest due
   * first, spread over its endpoints), so one org's backlog never queues another's message
   * behind it. A message leased by a live owner is never handed to another; one whose lease ran
   * out (its owner died) is.
   */
  claimDue(owner: string, now: Date, leaseUntil: Date, limits: ClaimLimits): Promise<ClaimedMessage[]>;
  /**
   * Records an attempt in the log (kept to the newest `logLimit` per endpoint) and settles the
   * message, if `owner` still holds it: delivered → removed and the endpoint's failure run ends;
   * gone → the endpoint is disabled and its messages removed; failed → retried at
   * `retry.nextAttemptAt`, or removed when that is null, and the endpoint is disabled (its
   * messages removed) when its failure run began at or before `retry.disableIfFailingSince`.
   * Returns the outcome written, or null when the lease was lost (nothing written).
   */
  settle(
    message: ClaimedMessage,
    result: AttemptResult,
    retry: RetryPlan,
    at: Date,
    logLimit: number,
  ): Promise<DeliveryOutcome | null>;
  /** The endpoint's newest attempts first; null when there is no such endpoint for this org. */
  listAttempts(orgId: string, endpointId: string, limit: number): Promise<DeliveryAttempt[] | null>;
  /** Outbox messages of the endpoint waiting for a (next) attempt. */
  countPending(endpointId: string): Promise<number>;
  stats(): Promise<OutboxStats>;
  /** Removes every endpoint of the org with its messages and log; how many endpoints there were. */
  purgeOrg(orgId: string): Promise<number>;
}

/** Endpoint ids: `wh_` + 128 random bits, so a log line says what it is. */
export function newEndpointId(): string {
  return `wh_${randomToken(16, 'hex')}`;
}

/** A Standard Webhooks secret: `whsec_` + base64 of 32 random bytes (the HMAC key). */
export function generateWebhookSecret(): string {
  return `whsec_${randomToken(32, 'base64')}`;
}

export interface WebhookServiceOptions {
  /** Most endpoints one org may have. */
  maxEndpointsPerOrg: number;
  /** The URL-ingest SSRF check at submit: null when acceptable, else why not. */
  screenUrl(url: string): string | null;
  /** Attempts kept per endpoint in the delivery log. */
  logLimit: number;
  /** Messages one endpoint may have waiting; a test beyond it is refused (429). */
  maxPending: number;
}

export interface NewEndpointInput {
  url: string;
  events?: string[];
  description?: string;
}

const MAX_URL_LENGTH = 2048;

/** What the webhook routes call: everything scoped by org; another org's endpoint is a 404. */
export class WebhookService {
  constructor(
    private readonly store: WebhookStore,
    private readonly clock: Clock,
    private readonly options: WebhookServiceOptions,
  ) {}

  async create(orgId: string, input: NewEndpointInput): Promise<WebhookEndpoint> {
    if (input.url.length > MAX_URL_LENGTH) {
      throw ERRORS.invalid('The webhook URL is too long.', [
        { pointer: '/url', message: `at most ${MAX_URL_LENGTH} characters` },
      ]);
    }
    const refusal = this.options.screenUrl(input.url);
    if (refusal !== null) {
      throw ERRORS.invalid(`The webhook URL cannot be used: ${refusal}.`, [
        { pointer: '/url', message: refusal },
      ]);
    }
    const events =
      input.events === undefined || input.events.length === 0 ? [...WEBHOOK_EVENTS] : input.events;
    for (const [i, event] of events.entries()) {
      if (!isWebhookEvent(event)) {
        throw ERRORS.invalid(`Unknown event type ${JSON.stringify(event)}.`, [
          { pointer: `/events/${i}`, message: `one of ${WEBHOOK_EVENTS.join(', ')}` },
        ]);
      }
    }
    const endpoint: WebhookEndpoint = {
      id: newEndpointId(),
      orgId,
      url: input.url,
      events: WEBHOOK_EVENTS.filter((e) => events.includes(e)),
      description: input.description ?? null,
      secret: generateWebhookSecret(),
      createdAt: this.clock.now(),
      disabledAt: null,
      disabledReason: null,
      failingSince: null,
      droppedMessages: 0,
    };
    if (!(await this.store.createEndpoint(endpoint, this.options.maxEndpointsPerOrg))) {
      throw ERRORS.invalid(
        `An organisation may have at most ${this.options.maxEndpointsPerOrg} webhook endpoints; delete one first.`,
      );
    }
    return endpoint;
  }

  list(orgId: string): Promise<WebhookEndpoint[]> {
    return this.store.listEndpoints(orgId);
  }

  async get(orgId: string, id: string): Promise<WebhookEndpoint> {
    const endpoint = await this.store.getEndpoint(orgId, id);
    if (!endpoint) throw ERRORS.webhookNotFound(id);
    return endpoint;
  }

  async delete(orgId: string, id: string): Promise<void> {
    if (!(await this.store.deleteEndpoint(orgId, id))) throw ERRORS.webhookNotFound(id);
  }

  /** Queues a signed `webhook.test` message; its id (the `webhook-id` the receiver will see). */
  async test(orgId: string, id: string): Promise<string> {
    const endpoint = await this.get(orgId, id);
    if (endpoint.disabledAt !== null) {
      throw ERRORS.invalid('This webhook endpoint is disabled; create a new one to receive events again.');
    }
    const queued = await this.store.enqueueTest(orgId, id, this.clock.now(), this.options.maxPending);
    if (queued === 'no_endpoint') throw ERRORS.webhookNotFound(id);
    if (queued === 'backlog_full') {
      throw ERRORS.webhookBacklogFull(id, this.options.maxPending, BACKLOG_RETRY_AFTER_SECONDS);
    }
    return queued.messageId;
  }

  async deliveries(
    orgId: string,
    id: string,
    limit: number,
  ): Promise<{ attempts: DeliveryAttempt[]; pending: number }> {
    const attempts = await this.store.listAttempts(orgId, id, Math.min(limit, this.options.logLimit));
    if (attempts === null) throw ERRORS.webhookNotFound(id);
    return { attempts, pending: await this.store.countPending(id) };
  }
}
