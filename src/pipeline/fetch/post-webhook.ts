// Delivers one webhook POST under the URL-ingest SSRF rules: the URL checked as at submit, every DNS
// answer and every connect checked by the guarded connector, no redirect followed (a 3xx is a
// failed attempt), one total timeout, and at most a few kilobytes of the answer read.
import type { LookupFunction } from 'node:net';
import { Agent, request } from 'undici';
import type { AddressPolicy } from './address-policy.js';
import { FetchError } from './errors.js';
import { createGuardedConnect } from './guarded-connect.js';
import { transportError } from './transport-errors.js';
import { redactUrl, urlRefusal } from './url-check.js';

export interface WebhookPostOptions {
  policy: AddressPolicy;
  /** Connect and answer together, body read included. */
  timeoutMs: number;
  /** Bytes of the answer read before the connection is dropped. */
  maxResponseBytes: number;
  lookup?: LookupFunction;
}

/**
 * POSTs `body`; resolves with the answer's status (any status, 3xx included: nothing is followed),
 * rejects with a FetchError when there is no answer (refused address, unreachable, timeout).
 */
export async function postWebhook(
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
    throw new FetchError('url_blocked', 'the webhook URL is not a valid absolute URL', false);
  }
  const refusal = urlRefusal(url, opts.policy);
  if (refusal !== null) {
    throw new FetchError('url_blocked', `refused to deliver to ${redactUrl(url)}: ${refusal}`, false);
  }
  const agent = new Agent({
    connect: createGuardedConnect({
      policy: opts.policy,
      connectTimeoutMs: opts.timeoutMs,
      ...(opts.lookup ? { lookup: opts.lookup } : {}),
    }),
    headersTimeout: opts.timeoutMs,
    bodyTimeout: opts.timeoutMs,
  });
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
    if (error instanceof FetchError) throw error;
    throw transportError(error, url);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
    agent.destroy().catch(() => {});
  }
}
