// Which webhook POST failures are permanent (the dispatcher gives the message up at once) and
// which are worth retrying, against real sockets on 127.0.0.1 and a resolver passed in (no query
// leaves the machine).
import http from 'node:http';
import type { AddressInfo, LookupFunction } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAddressPolicy, postWebhook } from '../../src/pipeline/fetch/index.js';

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
