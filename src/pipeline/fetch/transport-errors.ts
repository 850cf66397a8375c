// Maps what undici, node:net, node:dns, TLS and zlib throw onto FetchError codes. Messages are
// written here rather than copied from the original error, whose text is not ours to vouch for.
import { STATUS_CODES } from 'node:http';
import { FetchError } from './errors.js';
import { redactUrl } from './url-check.js';

// Failures a retry a few seconds later can plausibly fix.
const TRANSIENT_NETWORK_CODES = new Set([
  'ECONNRESET',
  'EPIPE',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_RES_CONTENT_LENGTH_MISMATCH',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EAI_AGAIN',
]);

function errorCode(err: unknown): string | null {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Z0-9_]{1,64}$/.test(code) ? code : null;
}

export function httpStatusError(status: number, url: URL): FetchError {
  const phrase = STATUS_CODES[status];
  const transient = status >= 500 || status === 408 || status === 429;
  return new FetchError(
    'url_unreachable',
    `HTTP ${status}${phrase ? ` ${phrase}` : ''} from ${redactUrl(url)}`,
    transient,
  );
}

/** `url` is the hop that was being fetched when `err` happened. */
export function transportError(err: unknown, url: URL): FetchError {
  if (err instanceof FetchError) return err;
  const where = redactUrl(url);
  const code = errorCode(err);
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
    case 'ETIMEDOUT':
      return new FetchError('timeout', `connecting to ${where} took too long`, true);
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
      return new FetchError('timeout', `${where} stopped responding`, false);
    case 'ENOTFOUND':
    case 'ENODATA':
      return new FetchError('url_unreachable', `could not resolve the host of ${where}`, false);
    case 'ECONNREFUSED':
      return new FetchError('url_unreachable', `${where} refused the connection`, false);
  }
  if (code !== null && TRANSIENT_NETWORK_CODES.has(code)) {
    return new FetchError('url_unreachable', `connection to ${where} failed (${code})`, true);
  }
  // zlib codes start with Z_; brotli's decoder errors come through as ERR__<brotli error name>.
  if (code?.startsWith('Z_') || code?.startsWith('ERR__') || code?.startsWith('ERR_BROTLI')) {
    return new FetchError(
      'url_unreachable',
      `the compressed response from ${where} is corrupt (${code})`,
      false,
    );
  }
  if (code?.startsWith('ERR_TLS') || code?.includes('CERT') || code?.startsWith('ERR_SSL')) {
    return new FetchError('url_unreachable', `TLS with ${where} failed (${code})`, false);
  }
  return new FetchError('url_unreachable', `fetching ${where} failed${code ? ` (${code})` : ''}`, false);
}
