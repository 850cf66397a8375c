// Delivers webhook POSTs under the URL-ingest SSRF rules: the URL checked as at submit, every DNS
// answer and every connect checked by the guarded connector, no redirect followed (a 3xx is a
// failed attempt), one total timeout, and at most a few kilobytes of the answer read. A failure no
// retry can fix (an invalid URL, an address the policy refuses, a host that does not resolve) is
// an UndeliverableError, so the dispatcher gives its message up at once instead of for a day.
// A WebhookPoster keeps its connections open between deliveries (each one checked when it was
// made), so a busy endpoint is not paid a TCP (and TLS) handshake per message; a connection whose
// answer was not read to its end, or that timed out, is closed rather than used again.
import type { LookupFunction } from 'node:net';
import { Agent, request } from 'undici';
import type { AddressPolicy } from './address-policy.js';
import { FetchError } from './errors.js';
import { createGuardedConnect } from './guarded-connect.js';
import { transportError } from './transport-errors.js';
import { redactUrl, urlRefusal } from './url-check.js';

/** Resolver answers that say the name does not exist (not that the resolver is unwell). */
const UNRESOLVABLE = new Set(['ENOTFOUND', 'ENODATA']);

/** A webhook POST that cannot succeed however often it is tried: `permanent` tells the dispatcher. */
export class UndeliverableError extends FetchError {
  readonly permanent = true;
  constructor(code: 'url_blocked' | 'url_unreachable', message: string) {
    super(code, message, false);
    this.name = 'UndeliverableError';
  }
}

export interface WebhookPostOptions {
  policy: AddressPolicy;
  /** Connect and answer together, body read included. */
  timeoutMs: number;
  /** Bytes of the answer read before the connection is dropped. */
  maxResponseBytes: number;
  lookup?: LookupFunction;
}

/**
 * Sends webhook POSTs over one pool of connections, kept between deliveries; close() ends them.
 */
export class WebhookPoster {
  private readonly agent: Agent;

  constructor(private readonly opts: WebhookPostOptions) {
    this.agent = new Agent({
      connect: createGuardedConnect({
        policy: opts.policy,
        connectTimeoutMs: opts.timeoutMs,
        ...(opts.lookup ? { lookup: opts.lookup } : {}),
      }),
      headersTimeout: opts.timeoutMs,
      bodyTimeout: opts.timeoutMs,
    });
  }

  /**
   * POSTs `body`; resolves with the answer's status (any status, 3xx included: nothing is
   * followed), rejects with a FetchError when there is no answer (refused address, unreachable,
   * timeout), an UndeliverableError when no answer can ever come.
   */
  post(
    rawUrl: string,
    headers: Record<string, string>,
    body: string,
    signal?: AbortSignal,
  ): Promise<{ statusCode: number }> {
    return postOver(this.agent, rawUrl, headers, body, this.opts, signal);
  }

  /** Ends its connections; deliveries still running fail. */
  async close(): Promise<void> {
    await this.agent.destroy();
  }
}

/** One POST on a connection of its own, closed after (WebhookPoster.post's contract). */
export async function postWebhook(
  rawUrl: string,
  headers: Record<string, string>,
  body: string,
  opts: WebhookPostOptions,
  signal?: AbortSignal,
): Promise<{ statusCode: number }> {
  const poster = new WebhookPoster(opts);
  try {
    return await poster.post(rawUrl, headers, body, signal);
  } finally {
    poster.close().catch(() => {});
  }
}

async function postOver(
  agent: Agent,
  rawUrl: string,
  headers: Record<string, string>,
  body: string,
  opts: WebhookPostOptions,
  signal?: AbortSignal,
): Promise<{ statusCode: number }> {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw new UndeliverableError('url_blocked', 'the webhook URL is not a valid absolute URL');
  }
  const refusal = urlRefusal(url, opts.policy);
  if (refusal !== null) {
    throw new UndeliverableError('url_blocked', `refused to deliver to ${redactUrl(url)}: ${refusal}`);
  }
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, opts.timeoutMs);
  const onAbort = () => controller.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const response = await request(url, {
      dispatcher: agent,
      method: 'POST',
      headers,
      body,
      signal: controller.signal,
    });
    // The answer's body means nothing to us; read a little so the exchange completes, then drop it.
    let read = 0;
    for await (const chunk of response.body) {
      read += (chunk as Buffer).length;
      if (read >= opts.maxResponseBytes) break;
    }
    response.body.destroy();
    return { statusCode: response.statusCode };
  } catch (error) {
    if (timedOut) {
      throw new FetchError('timeout', `${redactUrl(url)} did not answer within ${opts.timeoutMs} ms`, true);
    }
    const failure = transportError(error, url);
    if (failure.code === 'url_blocked' || UNRESOLVABLE.has(String((error as { code?: unknown }).code))) {
      throw new UndeliverableError(
        failure.code === 'url_blocked' ? 'url_blocked' : 'url_unreachable',
        failure.message,
      );
    }
    throw failure;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}
