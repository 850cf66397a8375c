// Which webhook POST failures are permanent (the dispatcher gives the message up at once) and
// which are worth retrying, and which connections a poster keeps, against real sockets on
// 127.0.0.1 and a resolver passed in (no query leaves the machine).
import http from 'node:http';
import type { AddressInfo, LookupFunction } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAddressPolicy, postWebhook, WebhookPoster } from '../../src/pipeline/fetch/index.js';

const resolvesTo =
  (address: string): LookupFunction =>
  (_hostname, _options, callback) =>
    callback(null, [{ address, family: 4 }]);
const noSuchHost: LookupFunction = (hostname, _options, callback) =>
  callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '');
const resolverDown: LookupFunction = (hostname, _options, callback) =>
  callback(Object.assign(new Error(`getaddrinfo EAI_AGAIN ${hostname}`), { code: 'EAI_AGAIN' }), '');

describe('postWebhook failures', () => {
  let server: http.Server;
  let port = 0;
  let closedPort = 0;

  beforeAll(async () => {
    server = http.createServer((_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    const probe = http.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    closedPort = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const post = (url: string, allow: string[], lookup?: LookupFunction) =>
    postWebhook(url, { 'content-type': 'application/json' }, '{}', {
      policy: createAddressPolicy({ allow }),
      timeoutMs: 2_000,
      maxResponseBytes: 1024,
      ...(lookup ? { lookup } : {}),
    }).then(
      (answer) => ({ answer, permanent: null, message: null }),
      (error: { permanent?: boolean; message: string }) => ({
        answer: null,
        permanent: error.permanent === true,
        message: error.message,
      }),
    );

  it('delivers to an allow-listed receiver', async () => {
    expect((await post(`http://127.0.0.1:${port}/hook`, [`127.0.0.1:${port}`])).answer).toEqual({
      statusCode: 200,
    });
  });

  it('an invalid URL, a refused address and a name resolving to one are permanent', async () => {
    const invalid = await post('not a url', []);
    expect(invalid).toMatchObject({ permanent: true, message: /not a valid absolute URL/ });
    const literal = await post(`http://127.0.0.1:${port}/hook`, []);
    expect(literal).toMatchObject({ permanent: true, message: /not a public address/ });
    const named = await post(`http://receiver.example:${port}/hook`, [], resolvesTo('127.0.0.1'));
    expect(named).toMatchObject({ permanent: true, message: /not public/ });
  });

  it('a host that does not resolve is permanent; a resolver that is unwell is not', async () => {
    const missing = await post('http://missing.example/hook', [], noSuchHost);
    expect(missing).toMatchObject({ permanent: true, message: /could not resolve/ });
    const down = await post('http://missing.example/hook', [], resolverDown);
    expect(down.permanent).toBe(false);
  });

  it('a refused connection is worth retrying (the receiver may be restarting)', async () => {
    const refused = await post(`http://127.0.0.1:${closedPort}/hook`, [`127.0.0.1:${closedPort}`]);
    expect(refused).toMatchObject({ permanent: false, message: /refused the connection/ });
  });
});

describe('WebhookPoster connections', () => {
  /** A receiver that counts the connections made to it and answers as `answer` says. */
  async function receiver(answer: (res: http.ServerResponse) => void) {
    const seen = { connections: 0, open: 0, requests: 0, mostOnOneConnection: 0 };
    const perSocket = new WeakMap<object, number>();
    const server = http.createServer((req, res) => {
      seen.requests += 1;
      const count = (perSocket.get(req.socket) ?? 0) + 1;
      perSocket.set(req.socket, count);
      seen.mostOnOneConnection = Math.max(seen.mostOnOneConnection, count);
      answer(res);
    });
    server.on('connection', (socket) => {
      seen.connections += 1;
      seen.open += 1;
      socket.on('close', () => {
        seen.open -= 1;
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const poster = new WebhookPoster({
      policy: createAddressPolicy({ allow: [`127.0.0.1:${port}`] }),
      timeoutMs: 2_000,
      maxResponseBytes: 1024,
    });
    const post = () =>
      poster.post(`http://127.0.0.1:${port}/hook`, { 'content-type': 'application/json' }, '{}');
    const close = async () => {
      await poster.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    };
    return { seen, post, poster, close };
  }

  const until = async (done: () => boolean) => {
    const deadline = Date.now() + 5_000;
    while (!done() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  };

  it('sends one endpoint its deliveries over the connection it keeps, and ends it on close', async () => {
    const r = await receiver((res) => res.writeHead(204).end());
    try {
      for (let i = 0; i < 5; i++) expect(await r.post()).toEqual({ statusCode: 204 });
      // The next POST may be sent before the connection is back in the pool: a second one opens.
      expect(r.seen.requests).toBe(5);
      expect(r.seen.connections).toBeLessThanOrEqual(2);
      expect(r.seen.mostOnOneConnection).toBeGreaterThanOrEqual(3);
      await r.poster.close();
      await until(() => r.seen.open === 0);
      expect(r.seen.open).toBe(0);
    } finally {
      await r.close();
    }
  });

  it('does not use again a connection whose answer it left unread', async () => {
    const r = await receiver((res) => res.end('x'.repeat(64 * 1024)));
    try {
      for (let i = 0; i < 3; i++) expect(await r.post()).toEqual({ statusCode: 200 });
      expect(r.seen).toMatchObject({ requests: 3, mostOnOneConnection: 1 });
    } finally {
      await r.close();
    }
  });

  it('delivers to a receiver that closes every connection after its answer', async () => {
    const r = await receiver((res) => res.writeHead(200, { connection: 'close' }).end('ok'));
    try {
      for (let i = 0; i < 3; i++) expect(await r.post()).toEqual({ statusCode: 200 });
      expect(r.seen).toMatchObject({ requests: 3, mostOnOneConnection: 1 });
    } finally {
      await r.close();
    }
  });
});
