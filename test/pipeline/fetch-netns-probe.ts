// Runs inside a network namespace whose only interface is `lo` (started by fetch.netns.test.ts).
// There, openUrl can be pointed at private, link-local and metadata addresses end to end: if the
// policy had a bug, the kernel could only answer ENETUNREACH — no packet can leave. Reads its
// cases from FETCH_NETNS_CASES, prints one JSON line of results.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo, type LookupFunction } from 'node:net';
import { createAddressPolicy, FetchError, openUrl } from '../../src/pipeline/fetch/index.js';

export interface NetnsCase {
  name: string;
  /** `{server}` is replaced by the origin of the loopback server, which can redirect anywhere. */
  url: string;
  dns?: Record<string, string[]>;
  allow?: string[];
}

export interface NetnsResult {
  name: string;
  outcome: string;
  /** Sockets the fetcher asked the kernel to connect, other than to the loopback server. */
  foreignConnects: number;
}

/** /proc/net/dev is per network namespace (unlike /sys), so it lists exactly what we can reach. */
function interfacesInThisNamespace(): string[] {
  return readFileSync('/proc/net/dev', 'utf8')
    .split('\n')
    .slice(2)
    .map((line) => line.split(':')[0]?.trim() ?? '')
    .filter((name) => name !== '');
}

async function main(): Promise<void> {
  const interfaces = interfacesInThisNamespace();
  if (interfaces.length !== 1 || interfaces[0] !== 'lo') {
    throw new Error(`refusing to run outside an lo-only namespace (interfaces: ${interfaces.join(', ')})`);
  }
  const cases = JSON.parse(process.env['FETCH_NETNS_CASES'] ?? '[]') as NetnsCase[];

  const server = http.createServer((req, res) => {
    const to = new URL(req.url ?? '/', 'http://x').searchParams.get('to');
    if (to) res.writeHead(302, { location: to }).end();
    else res.writeHead(200).end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;

  // Count every connect the process makes, whatever code path asks for it.
  let foreignConnects = 0;
  const connect = net.Socket.prototype.connect;
  net.Socket.prototype.connect = function (this: net.Socket, ...args: unknown[]) {
    // net.connect() hands its normalised [options, callback] pair over as one argument.
    const first = Array.isArray(args[0]) ? (args[0] as unknown[])[0] : args[0];
    const target = first as { host?: unknown; port?: unknown } | undefined;
    if (!(target?.host === '127.0.0.1' && Number(target.port) === port)) foreignConnects += 1;
    return Reflect.apply(connect, this, args) as net.Socket;
  } as typeof connect;

  const results: NetnsResult[] = [];
  for (const testCase of cases) {
    const dns = testCase.dns ?? {};
    const lookup: LookupFunction = (hostname, _options, callback) => {
      const answer = dns[hostname];
      if (answer === undefined) callback(Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' }), '');
      else
        callback(
          null,
          answer.map((address) => ({ address, family: net.isIP(address) })),
        );
    };
    const before = foreignConnects;
    let outcome: string;
    try {
      const body = await openUrl(new URL(testCase.url.replace('{server}', origin)), {
        policy: createAddressPolicy({ allow: [`127.0.0.1:${port}`, ...(testCase.allow ?? [])] }),
        maxBytes: 1_000_000,
        connectTimeoutMs: 1_000,
        totalTimeoutMs: 3_000,
        maxRedirects: 5,
        lookup,
      });
      body.stream.destroy();
      outcome = 'ok';
    } catch (err) {
      outcome = err instanceof FetchError ? err.code : `unexpected: ${String(err)}`;
    }
    results.push({ name: testCase.name, outcome, foreignConnects: foreignConnects - before });
  }
  server.close();
  process.stdout.write(`${JSON.stringify(results)}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${String(err)}\n`);
  process.exit(1);
});
