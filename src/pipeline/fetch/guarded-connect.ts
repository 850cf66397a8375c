// The socket-level half of the SSRF defence. undici calls this connector for every new
// connection, so each redirect hop and each reconnect is checked at the moment it happens: the
// host is resolved once, every answer is checked, and the socket is opened to those checked
// addresses only — there is no second resolution for a rebinding DNS server to answer differently.
import { type LookupAddress, lookup as systemLookup } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { buildConnector } from 'undici';
import type { AddressPolicy } from './address-policy.js';
import { FetchError } from './errors.js';

export interface GuardedConnectOptions {
  policy: AddressPolicy;
  connectTimeoutMs: number;
  /** node:dns `lookup`-compatible; called with `{ all: true }`. */
  lookup?: LookupFunction;
}

function lookupError(hostname: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`no usable address for ${hostname}`), { code: 'ENOTFOUND' });
}

function resolveAll(hostname: string, lookup: LookupFunction, deadline: number): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) => {
    // getaddrinfo cannot be cancelled; the timer only stops us waiting for it.
    const timer = setTimeout(
      () => reject(new FetchError('timeout', `resolving ${hostname} took too long`, true)),
      Math.max(0, deadline - Date.now()),
    );
    try {
      lookup(hostname, { all: true }, (err, answer, family) => {
        clearTimeout(timer);
        if (err) reject(err);
        else if (typeof answer === 'string') resolve([{ address: answer, family: family ?? isIP(answer) }]);
        else resolve(answer);
      });
    } catch (err) {
      clearTimeout(timer);
      reject(err);
    }
  });
}

/**
 * Every address `hostname` may be connected to on `port`: a literal address is judged as it is; a
 * name is resolved once and refused unless every answer passes the policy.
 */
export async function allowedAddresses(
  hostname: string,
  port: number,
  opts: { policy: AddressPolicy; lookup?: LookupFunction },
  deadline: number,
): Promise<LookupAddress[]> {
  const family = isIP(hostname);
  if (family !== 0) {
    if (!opts.policy.isAllowed(hostname, port, hostname)) {
      throw new FetchError('url_blocked', `${hostname} is not a public address`, false);
    }
    return [{ address: hostname, family }];
  }
  const answers = await resolveAll(hostname, opts.lookup ?? (systemLookup as LookupFunction), deadline);
  if (answers.length === 0) throw lookupError(hostname);
  // One bad answer refuses the host: with a mixed public/private answer, which address the
  // socket ends up using is the attacker's choice, not ours.
  if (answers.some((answer) => !opts.policy.isAllowed(answer.address, port, hostname))) {
    // The resolved address stays out of the message: it would tell a tenant about internal DNS.
    throw new FetchError('url_blocked', `${hostname} resolves to an address that is not public`, false);
  }
  return answers;
}

/**
 * A node:net `lookup` for sockets opened by other clients (an http.Agent): each resolution goes
 * through allowedAddresses, so a refused host fails the connection before it is opened.
 */
export function guardedLookup(opts: {
  policy: AddressPolicy;
  /** The port the connection is for (a lookup is not told it). */
  port: number;
  timeoutMs: number;
  lookup?: LookupFunction;
}): LookupFunction {
  return ((hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    const host = hostname.replace(/^\[|\]$/g, '');
    allowedAddresses(host, opts.port, opts, Date.now() + opts.timeoutMs).then(
      (answers) => {
        const first = answers[0] as LookupAddress;
        if (options.all === true) callback(null, answers);
        else callback(null, first.address, first.family);
      },
      (error: unknown) =>
        callback(Object.assign(error as Error, { code: (error as { code?: string }).code ?? 'EACCES' })),
    );
  }) as unknown as LookupFunction;
}

/** A lookup that can only answer with the addresses already checked for `hostname`. */
function pinnedLookup(hostname: string, addresses: LookupAddress[]): LookupFunction {
  return (name, options, callback) => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
    const usable =
      name === hostname
        ? addresses.filter((a) => family === undefined || family === 0 || a.family === family)
        : [];
    const first = usable[0];
    if (first === undefined) callback(lookupError(name), '');
    else if (options.all) callback(null, usable);
    else callback(null, first.address, first.family);
  };
}

/** An undici `connect` function that refuses any destination the policy does not allow. */
export function createGuardedConnect(opts: GuardedConnectOptions): buildConnector.connector {
  return (target, callback) => {
    const deadline = Date.now() + opts.connectTimeoutMs;
    const port = Number(target.port) || (target.protocol === 'https:' ? 443 : 80);
    allowedAddresses(target.hostname, port, opts, deadline).then(
      (addresses) => {
        const remaining = deadline - Date.now();
        if (remaining <= 0) {
          callback(new FetchError('timeout', `connecting to ${target.hostname} took too long`, true), null);
          return;
        }
        // Built per connection because the pinned lookup belongs to this one resolution. The
        // hostname stays as given so TLS still sends it as SNI and verifies it.
        const connect = buildConnector({
          timeout: remaining,
          maxCachedSessions: 0,
          lookup: pinnedLookup(target.hostname, addresses),
        });
        connect(target, callback);
      },
      (err: Error) => callback(err, null),
    );
  };
}
