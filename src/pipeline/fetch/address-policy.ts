// Which network addresses the URL fetcher may connect to: public unicast addresses, plus the
// destinations an operator allow-lists (URL_FETCH_ALLOW) for internal object storage or tests.
// Everything here is pure — no DNS, no sockets — so each SSRF case is testable without a network.
import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';
import ipaddr from 'ipaddr.js';

type IPAddress = ipaddr.IPv4 | ipaddr.IPv6;
type AddressRange = [IPAddress, number];

export interface AddressPolicy {
  /** true = the fetcher may connect to `address` on `port` for a URL whose host is `hostname`. */
  isAllowed(address: string, port: number, hostname: string): boolean;
  /** true = a URL_FETCH_ALLOW host entry names `hostname` (normalised) on `port`. */
  allowsName(hostname: string, port: number): boolean;
}

// Only 64:ff9b::/96 has a fixed place for the embedded IPv4 address; the local-use NAT64 prefix
// (64:ff9b:1::/48) does not, and ipaddr.js does not call it unicast, so it stays blocked.
const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96');
// ipaddr.js calls unassigned IPv6 space 'unicast' too; only 2000::/3 is routed on the internet,
// so nothing legitimate is lost by refusing the rest.
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');
// Cloud metadata services hand out credentials, the usual prize of an SSRF. Their ranges are
// blocked anyway; listing them stops a hostname allow-list entry from unlocking them by DNS.
const METADATA_ADDRESSES = new Set(
  ['169.254.169.254', '169.254.170.2', 'fd00:ec2::254', '100.100.100.200'].map((text) =>
    ipaddr.parse(text).toNormalizedString(),
  ),
);

/**
 * Parses an address as the URL parser or a resolver would print it. Loose forms such as "0x7f.1"
 * or "0177.0.0.1" are refused rather than interpreted: ipaddr.js would read "010.0.0.1" as octal,
 * and a caller holding such a string skipped the normalisation this policy relies on.
 */
function parseAddress(text: string): IPAddress | null {
  // A zone index is only meaningful for link-local addresses, which are never public.
  if (isIP(text) === 0 || text.includes('%')) return null;
  try {
    return ipaddr.parse(text);
  } catch {
    return null;
  }
}

function unwrapEmbeddedIPv4(address: IPAddress): IPAddress {
  if (!(address instanceof ipaddr.IPv6)) return address;
  if (address.isIPv4MappedAddress()) return address.toIPv4Address();
  if (address.match(NAT64_WELL_KNOWN)) {
    const high = address.parts[6] ?? 0;
    const low = address.parts[7] ?? 0;
    return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
  }
  return address;
}

function isMetadataAddress(address: IPAddress): boolean {
  return METADATA_ADDRESSES.has(unwrapEmbeddedIPv4(address).toNormalizedString());
}

/**
 * true only for a global unicast address. IPv4-mapped (::ffff:a.b.c.d) and NAT64 (64:ff9b::/96)
 * addresses are judged by the IPv4 address they carry; anything ipaddr.js does not classify as
 * plain 'unicast' (loopback, private, link-local, CGNAT, 6to4, Teredo, documentation, …) is not
 * public, and neither is text that is not a canonical address.
 */
export function isPublicAddress(ip: string): boolean {
  const parsed = parseAddress(ip);
  if (parsed === null) return false;
  const address = unwrapEmbeddedIPv4(parsed);
  if (address.range() !== 'unicast' || isMetadataAddress(address)) return false;
  return address instanceof ipaddr.IPv4 || address.match(GLOBAL_UNICAST_V6);
}

type AllowEntry =
  | { kind: 'range'; range: AddressRange; port: number | null }
  | { kind: 'host'; host: string; port: number | null };

/**
 * One spelling per name: ASCII (IDNA, as the URL parser writes it: "bücher.test" →
 * "xn--bcher-kva.test"), lower-case, without IPv6 brackets or the trailing dots of a fully
 * qualified name ("localhost." and "LOCALHOST.." are "localhost").
 */
export function normaliseHostname(hostname: string): string {
  let host = hostname.toLowerCase();
  if (host.startsWith('[') && host.endsWith(']')) return host.slice(1, -1);
  host = host.replace(/\.+$/, '');
  if (/[\u0080-\uffff]/.test(host)) host = domainToASCII(host) || host;
  return host;
}

/**
 * Names that mean this machine (RFC 6761: "localhost" and every name under it) or a cloud
 * metadata service, whatever DNS says: refused before any lookup, so such a URL fails at submit
 * instead of at its download (or after minutes of retries where DNS is unreachable).
 */
const METADATA_NAMES = new Set([
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'instance-data',
  'instance-data.ec2.internal',
]);

export function isLocalName(hostname: string): boolean {
  const host = normaliseHostname(hostname);
  return host === 'localhost' || host.endsWith('.localhost') || METADATA_NAMES.has(host);
}

function invalidEntry(entry: string, why: string): Error {
  return new Error(`invalid URL_FETCH_ALLOW entry "${entry}": ${why}`);
}

function parsePort(entry: string, text: string): number {
  const port = /^\d{1,5}$/.test(text) ? Number(text) : Number.NaN;
  if (!(port >= 1 && port <= 65535)) throw invalidEntry(entry, `"${text}" is not a port`);
  return port;
}

function exactRange(entry: string, text: string): AddressRange {
  const address = parseAddress(text);
  if (address === null) throw invalidEntry(entry, `"${text}" is not an IP address`);
  return [unwrapEmbeddedIPv4(address), address instanceof ipaddr.IPv4 ? 32 : 128];
}

function parseAllowEntry(entry: string): AllowEntry {
  if (entry.includes('/')) {
    const slash = entry.indexOf('/');
    if (parseAddress(entry.slice(0, slash)) === null || !ipaddr.isValidCIDR(entry)) {
      throw invalidEntry(entry, 'expected a CIDR such as 10.0.0.0/8 or fd00::/8');
    }
    return { kind: 'range', range: ipaddr.parseCIDR(entry), port: null };
  }
  const bracketed = /^\[([^\]]+)\](?::(.+))?$/.exec(entry);
  if (bracketed) {
    const [, address = '', port] = bracketed;
    if (isIP(address) !== 6) throw invalidEntry(entry, `"${address}" is not an IPv6 address`);
    return {
      kind: 'range',
      range: exactRange(entry, address),
      port: port === undefined ? null : parsePort(entry, port),
    };
  }
  if (isIP(entry) !== 0) return { kind: 'range', range: exactRange(entry, entry), port: null };

  const colon = entry.lastIndexOf(':');
  const host = colon === -1 ? entry : entry.slice(0, colon);
  const port = colon === -1 ? null : parsePort(entry, entry.slice(colon + 1));
  if (isIP(host) === 4) return { kind: 'range', range: exactRange(entry, host), port };
  if (!/^[a-z0-9-]+(\.[a-z0-9-]+)*\.?$/i.test(host))
    throw invalidEntry(entry, 'expected host, host:port or CIDR');
  // The URL parser turns "127.1" or "0x7f.1" into 127.0.0.1, so such an entry would silently
  // never match; make the operator write the address the policy will actually see.
  const lastLabel = normaliseHostname(host).split('.').pop() ?? '';
  if (/^(\d+|0x[0-9a-f]*)$/i.test(lastLabel)) {
    throw invalidEntry(entry, 'write IPv4 addresses in dotted-decimal form (a.b.c.d)');
  }
  return { kind: 'host', host: normaliseHostname(host), port };
}

function inRange(address: IPAddress, [network, bits]: AddressRange): boolean {
  return address.kind() === network.kind() && address.match(network, bits);
}

/**
 * `allow` holds URL_FETCH_ALLOW entries: `host`, `host:port`, `a.b.c.d[:port]`, `[v6][:port]` or
 * a CIDR (any port). A matching entry exempts the destination from the public-address rule.
 * Throws on an entry it cannot read, so a typo fails at boot instead of blocking silently.
 */
export function createAddressPolicy(opts: { allow: string[] }): AddressPolicy {
  const entries = opts.allow
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map(parseAllowEntry);

  return {
    isAllowed(address: string, port: number, hostname: string): boolean {
      const parsed = parseAddress(address);
      if (parsed === null) return false;
      // Resolvers may answer with the IPv4-mapped form of an allow-listed IPv4 address.
      const comparable =
        parsed instanceof ipaddr.IPv6 && parsed.isIPv4MappedAddress() ? parsed.toIPv4Address() : parsed;
      const host = normaliseHostname(hostname);
      for (const entry of entries) {
        if (entry.port !== null && entry.port !== port) continue;
        if (
          entry.kind === 'range'
            ? inRange(comparable, entry.range)
            : entry.host === host && !isMetadataAddress(parsed)
        ) {
          return true;
        }
      }
      return isPublicAddress(address);
    },
    allowsName(hostname: string, port: number): boolean {
      const host = normaliseHostname(hostname);
      return entries.some(
        (e) => e.kind === 'host' && e.host === host && (e.port === null || e.port === port),
      );
    },
  };
}
