// The HTTP exchange both clients share (DocindexClient with an API key, AdminClient with the admin
// token): retries of 429 and 503 after the wait the server asks for (Retry-After, bounded), resends
// of safe requests after network errors, and problem+json answers turned into DocindexError. Only
// fetch, so it runs in Node and in browsers.
import { exponentialBackoffMs } from '../domain/backoff.js';
import { DocindexError } from './errors.js';

export interface TransportOptions {
  /** Where the API is, e.g. `http://127.0.0.1:8080` (without `/v1`). */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <token>`. */
  token: string;
  fetch?: typeof globalThis.fetch;
  maxRetries?: number;
  maxRetryDelayMs?: number;
}

export interface Transport {
  baseUrl: string;
  token: string;
  fetch: typeof globalThis.fetch;
  maxRetries: number;
  maxRetryDelayMs: number;
}

export interface CallOptions {
  query?: Record<string, string | number | undefined>;
  json?: unknown;
  /** Built again for each attempt, so a retried upload sends its whole body again. */
  form?: () => FormData;
  idempotencyKey?: string;
  signal?: AbortSignal | undefined;
  /** The Accept header, when the answer is not JSON. */
  accept?: string;
  /** Sent as `?principals=a,b`: the principals the request acts for (an empty list: none). */
  principals?: readonly string[] | undefined;
}

const DEFAULT_MAX_RETRIES = 3;
const DEFAULT_MAX_RETRY_DELAY_MS = 60_000;

export function transportOf(options: TransportOptions): Transport {
  return {
    baseUrl: new URL(options.baseUrl).toString().replace(/\/+$/, ''),
    token: options.token,
    fetch: options.fetch ?? globalThis.fetch.bind(globalThis),
    maxRetries: options.maxRetries ?? DEFAULT_MAX_RETRIES,
    maxRetryDelayMs: options.maxRetryDelayMs ?? DEFAULT_MAX_RETRY_DELAY_MS,
  };
}

export async function callApi<T>(
  transport: Transport,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<T> {
  const response = await exchange(transport, method, path, options);
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  try {
    return JSON.parse(text) as T;
  } catch (cause) {
    throw new DocindexError({
      status: response.status,
      code: 'invalid_response',
      title: 'Invalid response',
      detail: `The server answered ${response.status} with a body that is not JSON.`,
      cause,
    });
  }
}

/**
 * One request, retried as callApi's are, resolving to the successful response with its body
 * unread (for answers that are not JSON: text, files); a problem+json answer throws DocindexError.
 */
export async function exchange(
  transport: Transport,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<Response> {
  const url = new URL(transport.baseUrl + path);
  for (const [name, value] of Object.entries(options.query ?? {})) {
    if (value !== undefined) url.searchParams.set(name, String(value));
  }
  if (options.principals !== undefined) url.searchParams.set('principals', options.principals.join(','));
  const headers: Record<string, string> = {
    authorization: `Bearer ${transport.token}`,
    accept: options.accept ?? 'application/json, application/problem+json',
  };
  if (options.json !== undefined) headers['content-type'] = 'application/json';
  if (options.idempotencyKey !== undefined) headers['idempotency-key'] = options.idempotencyKey;
  // Safe to resend after a lost answer: reads, and writes the server can recognise by key.
  // A merge patch applied twice leaves what applying it once does.
  const resendable = method === 'GET' || method === 'PATCH' || options.idempotencyKey !== undefined;

  for (let attempt = 0; ; attempt++) {
    const body = options.json !== undefined ? JSON.stringify(options.json) : options.form?.();
    let response: Response;
    try {
      response = await transport.fetch(url, {
        method,
        headers,
        ...(body === undefined ? {} : { body }),
        ...(options.signal ? { signal: options.signal } : {}),
      });
    } catch (error) {
      if (options.signal?.aborted) throw error;
      if (resendable && attempt < transport.maxRetries) {
        await sleep(backoffMs(attempt), options.signal);
        continue;
      }
      throw DocindexError.network(error, `${url.origin}${url.pathname}`);
    }
    if (response.ok) return response;
    const retryAfter = parseRetryAfter(response.headers.get('retry-after'));
    if ((response.status === 429 || response.status === 503) && attempt < transport.maxRetries) {
      const waitMs = retryAfter === null ? backoffMs(attempt) : retryAfter * 1000 + jitterMs();
      if (waitMs <= transport.maxRetryDelayMs) {
        await response.body?.cancel().catch(() => {});
        await sleep(waitMs, options.signal);
        continue;
      }
    }
    throw await DocindexError.fromResponse(response, retryAfter);
  }
}

/** Retry-After as seconds: delta-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function parseRetryAfter(value: string | null): number | null {
  if (value === null || value.trim() === '') return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  if (Number.isNaN(at)) return null;
  return Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

/** Without Retry-After: 0.5 s, 1 s, 2 s… with jitter, so clients do not retry in step. */
function backoffMs(attempt: number): number {
  // The jitter is added (up to 250 ms), not equal jitter: the first waits stay near 0.5 s and 1 s.
  return exponentialBackoffMs(attempt, { baseMs: 500, maxMs: 8_000 }) + jitterMs();
}

function jitterMs(): number {
  return Math.floor(Math.random() * 250);
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
