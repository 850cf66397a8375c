// URL-level rules for fetching: what a submitted URL (and every redirect target) must look like
// before any connection is attempted, and how a URL is printed so that pre-signed query strings
// never reach an error message or a log line.
import { isIP } from 'node:net';
import type { AddressPolicy } from './address-policy.js';
import { isLocalName, normaliseHostname } from './address-policy.js';

const REDACTED_URL_MAX_LENGTH = 300;

/** The port a connection for `url` will use. */
export function effectivePort(url: URL): number {
  if (url.port !== '') return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}

/**
 * The reason `url` must not be fetched, or null. Decides everything that does not need DNS: an
 * IP-literal host is judged here (the WHATWG parser has already turned 127.1, 0x7f.1, 2130706433
 * and friends into dotted decimal), and so is a name that always means this machine or a metadata
 * service (localhost., *.localhost, metadata.google.internal…) unless allow-listed by name; other
 * hostnames are judged at connect time against every address they resolve to.
 */
export function urlRefusal(url: URL, policy: AddressPolicy): string | null {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return `only http and https URLs can be fetched, not ${url.protocol.slice(0, -1)}`;
  }
  if (url.username !== '' || url.password !== '') {
    return 'URLs with credentials (user:pass@host) are not accepted; use a pre-signed URL instead';
  }
  const host = normaliseHostname(url.hostname);
  if (host === '') return 'the URL has no host';
  if (isIP(host) !== 0 && !policy.isAllowed(host, effectivePort(url), host)) {
    return `${host} is not a public address`;
  }
  if (isIP(host) === 0 && isLocalName(host) && !policy.allowsName(host, effectivePort(url))) {
    return `${host} names this machine or a metadata service, not a public address`;
  }
  return null;
}

/** Submit-time check (→ HTTP 400). Hostnames pass here and are checked when connecting. */
export function checkSubmittedUrl(
  raw: string,
  policy: AddressPolicy,
): { ok: true; url: URL } | { ok: false; reason: string } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'not a valid absolute URL' };
  }
  const reason = urlRefusal(url, policy);
  return reason === null ? { ok: true, url } : { ok: false, reason };
}

/** scheme://host[:port]/path: no credentials, no query (signatures live there), no fragment. */
export function redactUrl(url: string | URL): string {
  let parsed: URL;
  try {
    parsed = typeof url === 'string' ? new URL(url) : url;
  } catch {
    return '[invalid URL]';
  }
  // Opaque URLs (data:, javascript:) carry their whole payload in the path.
  if (parsed.host === '' && !parsed.pathname.startsWith('/')) return `${parsed.protocol}…`;
  const printed = `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  return printed.length > REDACTED_URL_MAX_LENGTH ? `${printed.slice(0, REDACTED_URL_MAX_LENGTH)}…` : printed;
}
