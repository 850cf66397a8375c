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
  return refusalOf(url, policy)?.reason ?? null;
}

interface Refusal {
  reason: string;
  /** Refused for its address alone, which an allow-list entry (URL_FETCH_ALLOW) would admit. */
  notPublic: boolean;
}

function refusalOf(url: URL, policy: AddressPolicy): Refusal | null {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return {
      reason: `only http and https URLs can be fetched, not ${url.protocol.slice(0, -1)}`,
      notPublic: false,
    };
  }
  if (url.username !== '' || url.password !== '') {
    return {
      reason: 'URLs with credentials (user:pass@host) are not accepted; use a pre-signed URL instead',
      notPublic: false,
    };
  }
  const host = normaliseHostname(url.hostname);
  if (host === '') return { reason: 'the URL has no host', notPublic: false };
  if (isIP(host) !== 0 && !policy.isAllowed(host, effectivePort(url), host)) {
    return { reason: `${host} is not a public address`, notPublic: true };
  }
  if (isIP(host) === 0 && isLocalName(host) && !policy.allowsName(host, effectivePort(url))) {
    return {
      reason: `${host} names this machine or a metadata service, not a public address`,
      notPublic: true,
    };
  }
  return null;
}

/**
 * Submit-time check (→ HTTP 400). Hostnames pass here and are checked when connecting. A URL
 * refused for its address says how the server would accept it, for a receiver or file server
 * on the operator's own network (a webhook receiver on this machine, say).
 */
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
  const refusal = refusalOf(url, policy);
  if (refusal === null) return { ok: true, url };
  if (!refusal.notPublic) return { ok: false, reason: refusal.reason };
  // URL.hostname keeps an IPv6 address's brackets: [::1]:8080, as URL_FETCH_ALLOW takes it.
  const entry = `${url.hostname}:${effectivePort(url)}`;
  return {
    ok: false,
    reason: `${refusal.reason} (the server accepts it when started with URL_FETCH_ALLOW=${entry})`,
  };
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
