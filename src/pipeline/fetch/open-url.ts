// Opens a URL for download under the SSRF and resource rules: http(s) only, every
// redirect hop re-checked, connections only to allowed addresses (see guarded-connect.ts), a
// byte cap on the decoded body, a connect timeout and a total timeout that also covers the body.
import type { LookupFunction } from 'node:net';
import { Readable } from 'node:stream';
import { Agent, request } from 'undici';
import type { AddressPolicy } from './address-policy.js';
import { ACCEPT_ENCODING, decodeBody, limitBytes, parseContentEncoding } from './decoded-body.js';
import { FetchError } from './errors.js';
import { createGuardedConnect } from './guarded-connect.js';
import { httpStatusError, transportError } from './transport-errors.js';
import { redactUrl, urlRefusal } from './url-check.js';

export interface FetchOptions {
  policy: AddressPolicy;
  /** Counted on the decoded body while streaming. */
  maxBytes: number;
  connectTimeoutMs: number;
  /** The whole download, body included. */
  totalTimeoutMs: number;
  maxRedirects: number;
  /** node:dns `lookup` signature, called with `{ all: true }`; tests stub DNS answers with it. */
  lookup?: LookupFunction;
  /** Aborting rejects (or errors the stream) with the signal's reason, not a FetchError. */
  signal?: AbortSignal;
  userAgent?: string;
  /** More request headers, sent on every hop (e.g. If-None-Match for a conditional request). */
  headers?: Record<string, string>;
  /**
   * Final statuses besides 2xx answered as a FetchedBody rather than an error (e.g. 304, 404):
   * their body is dropped and `stream` is empty.
   */
  passStatuses?: readonly number[];
}

export interface FetchedBody {
  /** The final response's status. */
  status: number;
  /** The final response's headers. */
  headers: Record<string, string | string[] | undefined>;
  /** Decoded bytes; errors with a FetchError ('too_large', 'timeout', 'url_unreachable'). */
  stream: Readable;
  finalUrl: URL;
  contentType: string | null;
  /** Content-Length of an unencoded response; null when absent or when the body is compressed. */
  declaredLength: number | null;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const DEFAULT_USER_AGENT = 'docindex-fetch/0.1';

function firstHeader(value: string | string[] | undefined): string | null {
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined ? null : first;
}

function parseContentLength(value: string | string[] | undefined): number | null {
  const text = firstHeader(value);
  return text !== null && /^\d{1,16}$/.test(text.trim()) ? Number(text.trim()) : null;
}

/** Drops a response body we will not read; undici reports the abort as an error, expected here. */
function discard(body: Readable): void {
  body.on('error', () => {});
  body.destroy();
}

/** One download: owns the agent, the total-timeout timer and the abort wiring until it ends. */
class Download {
  // A fresh agent per download: no pooled connection can carry over from another policy, and
  // destroying it at the end leaves nothing behind.
  private readonly agent: Agent;
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private readonly headers: Record<string, string>;
  private timedOut = false;
  private disposed = false;
  private hop: URL;
  private responseBody: Readable | null = null;
  private output: Readable | null = null;

  constructor(
    start: URL,
    private readonly opts: FetchOptions,
  ) {
    this.hop = start;
    this.agent = new Agent({
      connect: createGuardedConnect({
        policy: opts.policy,
        connectTimeoutMs: opts.connectTimeoutMs,
        ...(opts.lookup ? { lookup: opts.lookup } : {}),
      }),
      // Backstops only: the total timer below is what enforces the limit.
      headersTimeout: opts.totalTimeoutMs,
      bodyTimeout: opts.totalTimeoutMs,
    });
    this.headers = {
      accept: '*/*',
      ...opts.headers,
      'user-agent': opts.userAgent ?? DEFAULT_USER_AGENT,
      'accept-encoding': ACCEPT_ENCODING,
    };
    this.timer = setTimeout(() => this.expire(), opts.totalTimeoutMs);
    opts.signal?.addEventListener('abort', this.abortFromCaller, { once: true });
  }

  private readonly abortFromCaller = (): void => {
    const reason: unknown = this.opts.signal?.reason;
    this.controller.abort(reason);
    this.responseBody?.destroy(reason instanceof Error ? reason : undefined);
    this.output?.destroy(reason instanceof Error ? reason : undefined);
  };

  private expire(): void {
    this.timedOut = true;
    const err = this.timeoutError();
    this.controller.abort(err);
    this.responseBody?.destroy(err);
    this.output?.destroy(err);
  }

  private timeoutError(): FetchError {
    return new FetchError(
      'timeout',
      `downloading ${redactUrl(this.hop)} took longer than ${this.opts.totalTimeoutMs} ms`,
      false,
    );
  }

  /** Whatever went wrong, as the error the caller should see. */
  readonly toError = (err: unknown): unknown => {
    if (err instanceof FetchError) return err;
    if (this.timedOut) return this.timeoutError();
    if (this.opts.signal?.aborted) return this.opts.signal.reason;
    return transportError(err, this.hop);
  };

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    clearTimeout(this.timer);
    this.opts.signal?.removeEventListener('abort', this.abortFromCaller);
    if (this.responseBody) discard(this.responseBody);
    this.agent.destroy().catch(() => {});
  }

  async open(): Promise<FetchedBody> {
    const start = this.hop;
    for (let redirects = 0; ; ) {
      const refusal = urlRefusal(this.hop, this.opts.policy);
      if (refusal !== null) {
        const what = redirects === 0 ? redactUrl(this.hop) : `the redirect to ${redactUrl(this.hop)}`;
        throw new FetchError('url_blocked', `refused to fetch ${what}: ${refusal}`, false);
      }
      const response = await request(this.hop, {
        dispatcher: this.agent,
        method: 'GET',
        headers: this.headers,
        signal: this.controller.signal,
      });
      this.responseBody = response.body;
      // The timer or the caller may destroy it with an error before anyone reads it; whoever
      // reads it later still gets that error from the stream's errored state.
      response.body.on('error', () => {});
      const status = response.statusCode;

      if (status >= 200 && status < 300) return this.accept(status, response.headers, response.body);
      if (this.opts.passStatuses?.includes(status)) {
        discard(response.body);
        this.responseBody = null;
        const empty = Readable.from([]);
        empty.once('close', () => this.dispose());
        return {
          status,
          headers: response.headers,
          stream: empty,
          finalUrl: this.hop,
          contentType: firstHeader(response.headers['content-type']),
          declaredLength: 0,
        };
      }
      if (!REDIRECT_STATUSES.has(status)) {
        discard(response.body);
        throw httpStatusError(status, this.hop);
      }
      // Read (a bounded amount of) the redirect body so the connection can be reused.
      await response.body.dump();
      if (redirects >= this.opts.maxRedirects) {
        throw new FetchError(
          'too_many_redirects',
          `${redactUrl(start)} redirected more than ${this.opts.maxRedirects} times`,
          false,
        );
      }
      this.hop = this.redirectTarget(status, firstHeader(response.headers.location));
      redirects += 1;
    }
  }

  private redirectTarget(status: number, location: string | null): URL {
    if (location === null) {
      throw new FetchError(
        'url_unreachable',
        `HTTP ${status} redirect from ${redactUrl(this.hop)} has no Location`,
        false,
      );
    }
    try {
      return new URL(location, this.hop);
    } catch {
      throw new FetchError(
        'url_unreachable',
        `HTTP ${status} redirect from ${redactUrl(this.hop)} has an invalid Location`,
        false,
      );
    }
  }

  private accept(
    status: number,
    headers: Record<string, string | string[] | undefined>,
    body: Readable,
  ): FetchedBody {
    const codings = parseContentEncoding(headers['content-encoding']);
    const declaredLength = codings.length === 0 ? parseContentLength(headers['content-length']) : null;
    if (declaredLength !== null && declaredLength > this.opts.maxBytes) {
      discard(body);
      throw new FetchError(
        'too_large',
        `${redactUrl(this.hop)} declares ${declaredLength} bytes, over the limit of ${this.opts.maxBytes}`,
        false,
      );
    }
    const stream = limitBytes(decodeBody(body, codings), this.opts.maxBytes, this.toError);
    this.output = stream;
    // Same reason: a timeout while the caller has not attached its reader yet must not become an
    // uncaught 'error' that kills the worker; reading the stream still surfaces it.
    stream.on('error', () => {});
    stream.once('close', () => this.dispose());
    return {
      status,
      headers,
      stream,
      finalUrl: this.hop,
      contentType: firstHeader(headers['content-type']),
      declaredLength,
    };
  }
}

/**
 * Follows redirects by hand, checking each hop (scheme, credentials, address). Resolves once the
 * headers of a 2xx final response arrived; the returned stream enforces `maxBytes` and the total
 * timeout. Rejects with a FetchError (or the abort reason of `opts.signal`).
 */
export async function openUrl(url: URL, opts: FetchOptions): Promise<FetchedBody> {
  opts.signal?.throwIfAborted();
  const download = new Download(url, opts);
  try {
    return await download.open();
  } catch (err) {
    download.dispose();
    throw download.toError(err);
  }
}
