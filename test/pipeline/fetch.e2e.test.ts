// The URL downloader end to end, against real HTTP servers. Every socket in this file goes to
// 127.0.0.0/8 or ::1, so testing the fetcher never touches the network: the
// "public" server is 127.0.0.1:P and the policy allow-lists exactly that host:port; canaries on
// other loopback destinations count the connections a policy bug would make; DNS is always a
// stub, so not even a resolver query leaves the machine.
import { spawnSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net, { type AddressInfo, type LookupFunction } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGuardedConnect } from '../../src/pipeline/fetch/guarded-connect.js';
import {
  type AddressPolicy,
  createAddressPolicy,
  downloadToSink,
  FetchError,
  type FetchOptions,
  openUrl,
  redactUrl,
} from '../../src/pipeline/fetch/index.js';
import { runCommand } from '../helpers/process.js';

/** Counts connections to a destination nothing may reach; accepts and hangs up at once. */
class Canary {
  connections = 0;
  port = 0;
  private readonly server = net.createServer((socket) => {
    this.connections += 1;
    socket.destroy();
  });

  listen(host: string, port = 0): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.port = (this.server.address() as AddressInfo).port;
        resolve();
      });
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const PRESIGN_SECRET = 'test-presign-secret';
const sign = (path: string, expires: number) =>
  createHmac('sha256', PRESIGN_SECRET).update(`${path}:${expires}`).digest('hex');

// 8 MiB of zeros gzips to ~8 KiB; the bomb repeats that member (multi-member gzip is valid).
const BOMB_MEMBER = zlib.gzipSync(Buffer.alloc(8 * 1024 * 1024));
const BOMB_MEMBERS = 4096; // 32 GiB decoded from ~32 MiB on the wire

const hits = new Map<string, number>();
let publicConnections = 0;
let bombMembersSent = 0;
let P = 0; // the allow-listed "public" server, 127.0.0.1:P

/** Writes `chunk` up to `times` times, respecting backpressure, until the client goes away. */
function pump(res: http.ServerResponse, chunk: Buffer, times: number, onChunk: () => void = () => {}): void {
  let sent = 0;
  const writeMore = () => {
    while (sent < times && !res.destroyed) {
      sent += 1;
      onChunk();
      if (!res.write(chunk)) {
        res.once('drain', writeMore);
        return;
      }
    }
    if (!res.destroyed) res.end();
  };
  writeMore();
}

function handle(req: http.IncomingMessage, res: http.ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  const path = url.pathname;
  hits.set(path, (hits.get(path) ?? 0) + 1);
  const [, route = '', arg = ''] = path.split('/');
  const redirect = (status: number, location: string, headers: http.OutgoingHttpHeaders = {}) => {
    res.writeHead(status, { location, ...headers }).end('moved');
  };

  switch (route) {
    case 'ok':
      res
        .writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'content-length': '11' })
        .end('hello world');
      return;
    case 'chain': {
      const left = Number(arg);
      if (left > 0) redirect(302, `/chain/${left - 1}`);
      else res.writeHead(200, { 'content-type': 'text/plain' }).end('end of chain');
      return;
    }
    case 'relative':
      if (arg === 'start') redirect(301, 'target');
      else res.writeHead(200).end('relative target');
      return;
    case 'to':
      // Redirect targets, each a URL the fetcher must refuse without connecting.
      redirect(
        302,
        {
          canary: `http://127.0.0.1:${canaryQ.port}/stolen`,
          'canary-hex': `http://0x7f.1:${canaryQ.port}/stolen`,
          'canary-mapped': `http://[::ffff:127.0.0.1]:${canaryQ.port}/stolen`,
          'canary-v6': `http://[::1]:${canaryV6.port}/stolen`,
          file: 'file:///etc/passwd',
          gopher: `gopher://127.0.0.1:${canaryQ.port}/`,
          userinfo: `http://evil@127.0.0.1:${P}/ok`,
        }[arg] ?? '/ok',
      );
      return;
    case 'to-host':
      // Connection: close forces a new connection, hence a new DNS lookup, for the next hop.
      redirect(307, `http://${arg}:${P}/ok`, { connection: 'close' });
      return;
    case 'status':
      res.writeHead(Number(arg)).end(`status ${arg}`);
      return;
    case 'flaky':
      if (hits.get(path) === 1) res.writeHead(503, { 'retry-after': '0' }).end('try again');
      else res.writeHead(200, { 'content-type': 'text/plain' }).end('recovered');
      return;
    case 'reset':
      req.socket.destroy();
      return;
    case 'hang':
      return;
    case 'trickle': {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const timer = setInterval(() => res.write('x'), 50);
      res.on('close', () => clearInterval(timer));
      return;
    }
    case 'fixed':
      // Chunked (no Content-Length), so only the streaming count can enforce the cap.
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(Buffer.alloc(Number(arg), 0x61));
      return;
    case 'endless':
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      pump(res, Buffer.alloc(64 * 1024, 0x61), Number.POSITIVE_INFINITY);
      return;
    case 'declared-huge':
      res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': '10000000' });
      res.write('%PDF-1.7\n');
      return;
    case 'gzip-bomb':
      res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
      pump(res, BOMB_MEMBER, BOMB_MEMBERS, () => {
        bombMembersSent += 1;
      });
      return;
    case 'gzip-text':
      res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
      res.end(zlib.gzipSync('compressed hello'));
      return;
    case 'br-text':
      res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'br' });
      res.end(zlib.brotliCompressSync('brotli hello'));
      return;
    case 'corrupt-gzip':
      res.writeHead(200, { 'content-encoding': 'gzip' }).end('this is not gzip at all');
      return;
    case 'zstd':
      res.writeHead(200, { 'content-encoding': 'zstd' }).end('whatever');
      return;
    case 'presigned': {
      const expires = Number(url.searchParams.get('expires'));
      const valid = url.searchParams.get('sig') === sign(path, expires);
      if (!valid || Date.now() > expires) res.writeHead(403).end('AccessDenied: Request has expired');
      else res.writeHead(200, { 'content-type': 'text/csv' }).end('a,b\n1,2\n');
      return;
    }
    default:
      res.writeHead(404).end('not found');
  }
}

const server = http.createServer(handle);
server.on('connection', () => {
  publicConnections += 1;
});
const canaryQ = new Canary(); // 127.0.0.1:Q — loopback on a port that is not allow-listed
const canaryAlt = new Canary(); // 127.0.0.2:P — the "blocked address" in DNS answers, same port
const canaryV6 = new Canary(); // [::1]:R
const canaries = [canaryQ, canaryAlt, canaryV6];
const canaryConnections = () => canaries.reduce((sum, canary) => sum + canary.connections, 0);
let policy: AddressPolicy;

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  P = (server.address() as AddressInfo).port;
  await canaryQ.listen('127.0.0.1');
  await canaryAlt.listen('127.0.0.2', P);
  await canaryV6.listen('::1');
  policy = createAddressPolicy({ allow: [`127.0.0.1:${P}`] });
});

afterAll(async () => {
  // Whatever each test checked, no connection may ever have reached a canary.
  expect(canaryConnections()).toBe(0);
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await Promise.all(canaries.map((canary) => canary.close()));
});

const at = (path: string) => new URL(`http://127.0.0.1:${P}${path}`);

/** Fails the test if anything tries real DNS. */
const noDns: LookupFunction = (hostname, _options, callback) => {
  callback(Object.assign(new Error(`unexpected DNS lookup of ${hostname}`), { code: 'ENOTFOUND' }), '');
};

/** A resolver stub: `answer` gets the hostname and the 1-based call number. */
function stubDns(answer: (hostname: string, call: number) => string[] | null) {
  const calls: string[] = [];
  const lookup: LookupFunction = (hostname, _options, callback) => {
    calls.push(hostname);
    const addresses = answer(hostname, calls.length);
    setImmediate(() => {
      if (addresses === null) {
        callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '');
      } else {
        callback(
          null,
          addresses.map((address) => ({ address, family: net.isIP(address) })),
        );
      }
    });
  };
  return { lookup, calls };
}

function options(overrides: Partial<FetchOptions> = {}): FetchOptions {
  return {
    policy,
    maxBytes: 1_000_000,
    connectTimeoutMs: 2_000,
    totalTimeoutMs: 5_000,
    maxRedirects: 5,
    lookup: noDns,
    ...overrides,
  };
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function failure(work: Promise<unknown>): Promise<FetchError> {
  try {
    await work;
  } catch (err) {
    if (err instanceof FetchError) return err;
    throw err;
  }
  throw new Error('expected a FetchError, but the fetch succeeded');
}

const storeInMemory = async (body: { stream: Readable }) => (await readAll(body.stream)).length;

describe('openUrl against the allow-listed server', () => {
  it('downloads a 200 response with its type and length', async () => {
    const body = await openUrl(at('/ok'), options());
    expect((await readAll(body.stream)).toString()).toBe('hello world');
    expect(body.contentType).toBe('text/plain; charset=utf-8');
    expect(body.declaredLength).toBe(11);
    expect(body.finalUrl.href).toBe(at('/ok').href);
  });

  it('decodes gzip and brotli bodies itself', async () => {
    const gzip = await openUrl(at('/gzip-text'), options());
    expect((await readAll(gzip.stream)).toString()).toBe('compressed hello');
    expect(gzip.declaredLength).toBeNull();
    const br = await openUrl(at('/br-text'), options());
    expect((await readAll(br.stream)).toString()).toBe('brotli hello');
  });

  it('follows a 5-hop redirect chain', async () => {
    const body = await openUrl(at('/chain/5'), options());
    expect((await readAll(body.stream)).toString()).toBe('end of chain');
    expect(body.finalUrl.pathname).toBe('/chain/0');
  });

  it('refuses the 6th redirect with too_many_redirects, without requesting its target', async () => {
    const before = hits.get('/chain/0') ?? 0;
    const err = await failure(openUrl(at('/chain/6'), options()));
    expect(err.code).toBe('too_many_redirects');
    expect(hits.get('/chain/0') ?? 0).toBe(before);
  });

  it('resolves a relative Location against the current URL', async () => {
    const body = await openUrl(at('/relative/start'), options());
    expect(body.finalUrl.pathname).toBe('/relative/target');
    expect((await readAll(body.stream)).toString()).toBe('relative target');
  });

  it('reaches an allow-listed hostname entry through the stub resolver', async () => {
    const dns = stubDns((hostname) => (hostname === 'files.internal' ? ['127.0.0.1'] : null));
    const byName = createAddressPolicy({ allow: [`files.internal:${P}`] });
    const body = await openUrl(
      new URL(`http://files.internal:${P}/ok`),
      options({ policy: byName, lookup: dns.lookup }),
    );
    expect((await readAll(body.stream)).toString()).toBe('hello world');
    // The name entry does not cover the same address written as an IP literal.
    const err = await failure(openUrl(at('/ok'), options({ policy: byName })));
    expect(err.code).toBe('url_blocked');
  });
});

describe('SSRF: destinations are refused before any connection', () => {
  it.each([
    '127.0.0.1',
    '127.1',
    '0177.0.0.1',
    '0x7f.1',
    '0x7f000001',
    '2130706433',
    '[::ffff:127.0.0.1]',
    '[::ffff:7f00:1]',
  ])('http://%s:Q/ (loopback, not allow-listed) → url_blocked, canary untouched', async (host) => {
    const err = await failure(openUrl(new URL(`http://${host}:${canaryQ.port}/`), options()));
    expect(err.code).toBe('url_blocked');
    expect(canaryQ.connections).toBe(0);
  });

  it('http://[::1]:R/ → url_blocked, canary untouched', async () => {
    const err = await failure(openUrl(new URL(`http://[::1]:${canaryV6.port}/`), options()));
    expect(err.code).toBe('url_blocked');
    expect(canaryV6.connections).toBe(0);
  });

  it('http://localhost.:Q/ is refused before any DNS lookup, canary untouched', async () => {
    const dns = stubDns((hostname) => (hostname === 'localhost.' ? ['127.0.0.1', '::1'] : null));
    const err = await failure(
      openUrl(new URL(`http://localhost.:${canaryQ.port}/`), options({ lookup: dns.lookup })),
    );
    expect(err.code).toBe('url_blocked');
    expect(dns.calls).toEqual([]);
    expect(canaryQ.connections).toBe(0);
  });

  it('a name that resolves to loopback is still blocked at connect time', async () => {
    const dns = stubDns((hostname) => (hostname === 'sneaky.example.' ? ['127.0.0.1', '::1'] : null));
    const err = await failure(
      openUrl(new URL(`http://sneaky.example.:${canaryQ.port}/`), options({ lookup: dns.lookup })),
    );
    expect(err.code).toBe('url_blocked');
    expect(dns.calls).toEqual(['sneaky.example.']);
    expect(canaryQ.connections).toBe(0);
  });

  it.each([
    ['canary', 'http://127.0.0.1:Q'],
    ['canary-hex', 'http://0x7f.1:Q'],
    ['canary-mapped', 'http://[::ffff:127.0.0.1]:Q'],
    ['canary-v6', 'http://[::1]:R'],
    ['file', 'file:///etc/passwd'],
    ['gopher', 'gopher://127.0.0.1:Q'],
    ['userinfo', 'http://evil@127.0.0.1:P (credentials)'],
  ])('a redirect to %s (%s) → url_blocked, canaries untouched', async (target) => {
    const err = await failure(openUrl(at(`/to/${target}`), options()));
    expect(err.code).toBe('url_blocked');
    expect(err.message).toContain('redirect');
    expect(canaryConnections()).toBe(0);
  });

  it.each([[['127.0.0.1', '127.0.0.2']], [['127.0.0.2', '127.0.0.1']]])(
    'a DNS answer mixing an allowed and a blocked address %j → url_blocked, no connection at all',
    async (answer) => {
      const dns = stubDns(() => answer);
      const connectionsBefore = publicConnections;
      const err = await failure(
        openUrl(new URL(`http://mixed.test:${P}/ok`), options({ lookup: dns.lookup })),
      );
      expect(err.code).toBe('url_blocked');
      expect(err.message).not.toContain('127.0.0.2');
      expect(canaryAlt.connections).toBe(0);
      expect(publicConnections).toBe(connectionsBefore);
    },
  );

  it('DNS rebinding: the socket goes to the address that was checked, with no second lookup', async () => {
    // First answer passes the policy; any later lookup would point at the canary.
    const dns = stubDns((_hostname, call) => (call === 1 ? ['127.0.0.1'] : ['127.0.0.2']));
    const body = await openUrl(new URL(`http://rebind.test:${P}/ok`), options({ lookup: dns.lookup }));
    expect((await readAll(body.stream)).toString()).toBe('hello world');
    expect(dns.calls).toEqual(['rebind.test']);
    expect(canaryAlt.connections).toBe(0);
  });

  it('DNS rebinding between redirect hops: the new connection is checked again', async () => {
    const dns = stubDns((_hostname, call) => (call === 1 ? ['127.0.0.1'] : ['127.0.0.2']));
    const start = new URL(`http://rebind.test:${P}/to-host/rebind.test`);
    const err = await failure(openUrl(start, options({ lookup: dns.lookup })));
    expect(err.code).toBe('url_blocked');
    expect(dns.calls).toEqual(['rebind.test', 'rebind.test']);
    expect(canaryAlt.connections).toBe(0);
  });

  it('the connector alone refuses a blocked IP literal and pins resolved addresses', async () => {
    // Defence in depth: this is the check that holds even if a URL-level check were skipped.
    const dns = stubDns(() => ['127.0.0.1']);
    const connect = createGuardedConnect({ policy, connectTimeoutMs: 1_000, lookup: dns.lookup });
    const attempt = (hostname: string, port: number) =>
      new Promise<{ err: Error | null; remote: string | undefined }>((resolve) => {
        connect(
          { hostname, host: `${hostname}:${port}`, protocol: 'http:', port: String(port) },
          (err, socket) => {
            const remote = socket?.remoteAddress;
            socket?.destroy();
            resolve({ err, remote });
          },
        );
      });

    const blocked = await attempt('127.0.0.1', canaryQ.port);
    expect(blocked.err).toBeInstanceOf(FetchError);
    expect((blocked.err as FetchError).code).toBe('url_blocked');
    expect(canaryQ.connections).toBe(0);

    const pinned = await attempt('storage.test', P);
    expect(pinned.err).toBeNull();
    expect(pinned.remote).toBe('127.0.0.1');
    expect(dns.calls).toEqual(['storage.test']);
  });
});

describe('caps and timeouts', () => {
  it('a server that never sends headers → timeout at the total timeout', async () => {
    const started = Date.now();
    const err = await failure(openUrl(at('/hang'), options({ totalTimeoutMs: 300 })));
    expect(err.code).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('a body that trickles past the total timeout → the stream errors with timeout', async () => {
    const started = Date.now();
    const body = await openUrl(at('/trickle'), options({ totalTimeoutMs: 400 }));
    const err = await failure(readAll(body.stream));
    expect(err.code).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('a resolver that never answers → timeout within the connect timeout, marked transient', async () => {
    const silent: LookupFunction = () => {};
    const started = Date.now();
    const err = await failure(
      openUrl(new URL(`http://slow-dns.test:${P}/ok`), options({ lookup: silent, connectTimeoutMs: 200 })),
    );
    expect(err.code).toBe('timeout');
    expect(err.transient).toBe(true);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('accepts a body of exactly maxBytes and refuses one byte more', async () => {
    const exact = await openUrl(at('/fixed/5000'), options({ maxBytes: 5_000 }));
    expect((await readAll(exact.stream)).length).toBe(5_000);
    const over = await openUrl(at('/fixed/5001'), options({ maxBytes: 5_000 }));
    expect((await failure(readAll(over.stream))).code).toBe('too_large');
  });

  it('an endless body → too_large once maxBytes have streamed', async () => {
    const body = await openUrl(at('/endless'), options({ maxBytes: 1_000_000 }));
    let received = 0;
    const err = await failure(
      (async () => {
        for await (const chunk of body.stream) received += (chunk as Buffer).length;
      })(),
    );
    expect(err.code).toBe('too_large');
    expect(received).toBeLessThanOrEqual(1_000_000);
  });

  it('a declared Content-Length over the cap fails before the body is read', async () => {
    const err = await failure(openUrl(at('/declared-huge'), options({ maxBytes: 1_000_000 })));
    expect(err.code).toBe('too_large');
  });

  it('a gzip bomb stops at maxBytes of decoded data without inflating the rest', async () => {
    const rssBefore = process.memoryUsage().rss;
    const body = await openUrl(at('/gzip-bomb'), options({ maxBytes: 4 * 1024 * 1024 }));
    let received = 0;
    const err = await failure(
      (async () => {
        for await (const chunk of body.stream) received += (chunk as Buffer).length;
      })(),
    );
    expect(err.code).toBe('too_large');
    expect(received).toBeLessThanOrEqual(4 * 1024 * 1024);
    // The client hung up: the server got nowhere near sending the 32 GiB it had queued.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(bombMembersSent).toBeLessThan(BOMB_MEMBERS / 4);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(200 * 1024 * 1024);
  });

  it('a Content-Encoding we did not ask for → unsupported_format; corrupt gzip → url_unreachable', async () => {
    expect((await failure(openUrl(at('/zstd'), options()))).code).toBe('unsupported_format');
    const corrupt = await openUrl(at('/corrupt-gzip'), options());
    const err = await failure(readAll(corrupt.stream));
    expect(err.code).toBe('url_unreachable');
    expect(err.message).toContain('corrupt');
  });

  it('the caller aborting rejects with the abort reason, not a FetchError', async () => {
    const controller = new AbortController();
    const reason = new Error('document deleted');
    setTimeout(() => controller.abort(reason), 100);
    await expect(openUrl(at('/hang'), options({ signal: controller.signal }))).rejects.toBe(reason);
  });
});

describe('failure mapping', () => {
  it('404 → url_unreachable naming the status, not transient', async () => {
    const err = await failure(openUrl(at('/status/404'), options()));
    expect(err.code).toBe('url_unreachable');
    expect(err.message).toContain('HTTP 404 Not Found');
    expect(err.transient).toBe(false);
  });

  it('503 → url_unreachable, transient', async () => {
    const err = await failure(openUrl(at('/status/503'), options()));
    expect(err.code).toBe('url_unreachable');
    expect(err.message).toContain('503');
    expect(err.transient).toBe(true);
  });

  it('a connection reset → url_unreachable, transient', async () => {
    const err = await failure(openUrl(at('/reset'), options()));
    expect(err.code).toBe('url_unreachable');
    expect(err.transient).toBe(true);
  });

  it('a refused connection → url_unreachable', async () => {
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const closedPort = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const allowClosed = createAddressPolicy({ allow: [`127.0.0.1:${closedPort}`] });
    const err = await failure(
      openUrl(new URL(`http://127.0.0.1:${closedPort}/`), options({ policy: allowClosed })),
    );
    expect(err.code).toBe('url_unreachable');
    expect(err.message).toContain('refused');
  });

  it('a host that does not resolve → url_unreachable', async () => {
    const dns = stubDns(() => null);
    const err = await failure(openUrl(new URL(`http://nowhere.test:${P}/`), options({ lookup: dns.lookup })));
    expect(err.code).toBe('url_unreachable');
    expect(err.transient).toBe(false);
  });
});

describe('downloadToSink', () => {
  it('retries a 503 and then stores the 200', async () => {
    const result = await downloadToSink(at('/flaky/one'), options(), storeInMemory);
    expect(result.bytes).toBe('recovered'.length);
    expect(result.contentType).toBe('text/plain');
    expect(hits.get('/flaky/one')).toBe(2);
  });

  it('does not retry a 404', async () => {
    const before = hits.get('/status/404') ?? 0;
    const err = await failure(downloadToSink(at('/status/404'), options(), storeInMemory));
    expect(err.code).toBe('url_unreachable');
    expect((hits.get('/status/404') ?? 0) - before).toBe(1);
  });

  it('gives up on a lasting 503 once the retry window is spent', async () => {
    const before = hits.get('/status/503') ?? 0;
    const started = Date.now();
    const err = await failure(
      downloadToSink(at('/status/503'), { ...options(), retryWithinMs: 1_200 }, storeInMemory),
    );
    expect(err.code).toBe('url_unreachable');
    expect(err.transient).toBe(true);
    expect((hits.get('/status/503') ?? 0) - before).toBeGreaterThanOrEqual(2);
    expect(Date.now() - started).toBeLessThan(2_500);
  });

  it('a stream failure inside the sink surfaces as the FetchError', async () => {
    const err = await failure(
      downloadToSink(at('/endless'), options({ maxBytes: 100_000 }), async (body) => {
        try {
          return await storeInMemory(body);
        } catch {
          throw new Error('blob store: write failed');
        }
      }),
    );
    expect(err.code).toBe('too_large');
  });

  it('fetches a pre-signed URL within its validity, and never leaks the signature', async () => {
    const expires = Date.now() + 400;
    const path = '/presigned/report.csv';
    const signature = sign(path, expires);
    const presigned = at(`${path}?expires=${expires}&sig=${signature}`);

    const result = await downloadToSink(presigned, options(), storeInMemory);
    expect(result.bytes).toBe(8);
    expect(result.contentType).toBe('text/csv');
    expect(redactUrl(result.finalUrl)).toBe(`http://127.0.0.1:${P}${path}`);

    await new Promise((resolve) => setTimeout(resolve, 500));
    const err = await failure(downloadToSink(presigned, options(), storeInMemory));
    expect(err.code).toBe('url_unreachable');
    expect(err.message).toContain('403');
    expect(err.message).not.toContain('sig=');
    expect(err.message).not.toContain(signature);
    expect(err.message).not.toContain('expires=');
  });
});

const hasOpenssl = spawnSync('openssl', ['version']).status === 0;

describe.skipIf(!hasOpenssl)('https through the pinned connector', () => {
  let dir = '';
  let tlsServer: https.Server;
  let tlsPort = 0;
  const serverNames: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fetch-tls-'));
    const made = await runCommand('openssl', [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=secure.test',
      '-addext',
      'subjectAltName=DNS:secure.test',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
    ]);
    if (made.status !== 0) throw new Error(`openssl failed: ${made.stderr}`);
    tlsServer = https.createServer(
      {
        key: readFileSync(join(dir, 'key.pem')),
        cert: readFileSync(join(dir, 'cert.pem')),
        SNICallback: (servername, done) => {
          serverNames.push(servername);
          done(null);
        },
      },
      (_req, res) => res.end('secure'),
    );
    await new Promise<void>((resolve) => tlsServer.listen(0, '127.0.0.1', resolve));
    tlsPort = (tlsServer.address() as AddressInfo).port;
  });

  afterAll(async () => {
    tlsServer.closeAllConnections();
    await new Promise((resolve) => tlsServer.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it('sends the hostname as SNI and still verifies the certificate (self-signed → url_unreachable)', async () => {
    const dns = stubDns((hostname) => (hostname === 'secure.test' ? ['127.0.0.1'] : null));
    const tlsPolicy = createAddressPolicy({ allow: [`127.0.0.1:${tlsPort}`] });
    const url = new URL(`https://secure.test:${tlsPort}/report.pdf?sig=SECRETSIG`);
    const err = await failure(openUrl(url, options({ policy: tlsPolicy, lookup: dns.lookup })));
    expect(err.code).toBe('url_unreachable');
    expect(err.message).toContain('TLS');
    expect(err.message).not.toContain('SECRETSIG');
    expect(serverNames).toEqual(['secure.test']);
    expect(dns.calls).toEqual(['secure.test']);
  });
});
