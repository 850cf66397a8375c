// Edges a careless or hostile client reaches: every one answers a clear problem+json 4xx, over
// inject and over a real socket, and nothing the client sent is silently rewritten.
import net from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../helpers/harness.js';

const BOUNDARY = 'XyZ';
const MULTIPART = { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` };
const filePart = (body: string, filename = 't.txt') =>
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\n\r\n${body}`;
const metadataPart = (body: string) =>
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="metadata"\r\n\r\n${body}`;

/** Sends raw bytes on a fresh connection and returns everything the server wrote back. */
function rawExchange(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (d) => {
      answer += d;
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(answer));
    socket.write(request);
  });
}

function expectProblem(res: { statusCode: number; headers: Record<string, unknown> }, status: number) {
  expect(res.statusCode).toBe(status);
  expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json/);
}

describe('edges', () => {
  let h: Harness;
  let port: number;
  beforeAll(async () => {
    h = await startHarness({ worker: false });
    await h.app.listen({ host: '127.0.0.1', port: 0 });
    port = (h.app.server.address() as net.AddressInfo).port;
  });
  afterAll(() => h.close());

  const documentCount = async () =>
    (await h.request('GET', '/v1/documents?limit=100')).json().documents.length as number;

  describe('a multipart body cut off before its closing boundary is a 400, and stores nothing', () => {
    const cases: [string, string][] = [
      ['inside the file part', filePart('some text without end')],
      ['inside a metadata part after the file', `${filePart('some text')}\r\n${metadataPart('{"a":')}`],
      ['inside the file part after the metadata', `${metadataPart('{"a":"b"}')}\r\n${filePart('some text')}`],
    ];
    for (const [name, payload] of cases) {
      it(`${name} (inject)`, async () => {
        const before = await documentCount();
        const res = await h.request('POST', '/v1/ingest/file', { payload, headers: MULTIPART });
        expectProblem(res, 400);
        expect(res.json().detail).toMatch(/multipart/i);
        expect(await documentCount()).toBe(before);
        expect(await h.blobFiles()).toEqual([]);
      });
      it(`${name} (socket, body ends with the connection)`, async () => {
        const answer = await rawExchange(
          port,
          `POST /v1/ingest/file HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${h.orgA.apiKey}\r\n` +
            `Content-Type: ${MULTIPART['content-type']}\r\nContent-Length: ${Buffer.byteLength(payload)}\r\n` +
            `Connection: close\r\n\r\n${payload}`,
        );
        expect(answer).toMatch(/^HTTP\/1\.1 400 /);
        expect(answer).toMatch(/application\/problem\+json/);
        expect(await h.blobFiles()).toEqual([]);
      });
    }
  });

  it('a `file` part without a filename says so', async () => {
    const payload = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"\r\n\r\ntext\r\n--${BOUNDARY}--\r\n`;
    const res = await h.request('POST', '/v1/ingest/file', { payload, headers: MULTIPART });
    expectProblem(res, 400);
    expect(res.json().detail).toMatch(/no filename/);
  });

  it('a metadata part over its size cap is a 413, not "invalid JSON"', async () => {
    const big = `{"a":"${'x'.repeat(1024 * 1024)}"}`;
    const payload = `${metadataPart(big)}\r\n${filePart('some text')}\r\n--${BOUNDARY}--\r\n`;
    const res = await h.request('POST', '/v1/ingest/file', { payload, headers: MULTIPART });
    expectProblem(res, 413);
    expect(res.json().detail).toMatch(/metadata/);
  });

  it('GET and DELETE with a JSON Content-Type and no body are answered as if no header were sent', async () => {
    const [id] = await h.ingest(h.orgA, ['to be deleted']);
    const json = { 'content-type': 'application/json' };
    expect((await h.request('GET', `/v1/documents/${id}`, { headers: json })).statusCode).toBe(200);
    expect((await h.request('GET', '/v1/documents', { headers: json })).statusCode).toBe(200);
    expect((await h.request('DELETE', `/v1/documents/${id}`, { headers: json })).statusCode).toBe(204);
    expect((await h.request('GET', `/v1/documents/${id}`)).statusCode).toBe(404);
    // A POST still needs its body.
    expectProblem(await h.request('POST', '/v1/query', { headers: json, payload: '' }), 400);
  });

  describe('nothing sent is silently rewritten', () => {
    it('a metadata key holding NUL is refused with a pointer to it (it would collapse into another key)', async () => {
      const before = await documentCount();
      const res = await h.request('POST', '/v1/ingest', {
        payload: '{"documents":[{"text":"x","metadata":{"k\\u0000":"1","k":"2"}}]}',
        headers: { 'content-type': 'application/json' },
      });
      expectProblem(res, 400);
      expect(res.json().errors[0].pointer).toBe('/documents/0/metadata/k\u0000');
      expect(await documentCount()).toBe(before);
    });

    it('a NUL in a file upload metadata key is refused too', async () => {
      const payload = `${metadataPart('{"k\\u0000":"1"}')}\r\n${filePart('some text')}\r\n--${BOUNDARY}--\r\n`;
      expectProblem(await h.request('POST', '/v1/ingest/file', { payload, headers: MULTIPART }), 400);
    });

    it('JSON declared in another charset is a 415, not decoded as UTF-8', async () => {
      const res = await h.request('POST', '/v1/ingest', {
        payload: Buffer.from('{"documents":[{"text":"café"}]}', 'latin1'),
        headers: { 'content-type': 'application/json; charset=iso-8859-1' },
      });
      expectProblem(res, 415);
      expect(res.json().detail).toMatch(/UTF-8/);
      const utf8 = await h.request('POST', '/v1/ingest', {
        payload: Buffer.from('{"documents":[{"text":"café"}]}', 'utf8'),
        headers: { 'content-type': 'application/json; charset=UTF-8' },
      });
      expect(utf8.statusCode).toBe(202);
    });

    it('a compressed body is a 415 that names the encoding', async () => {
      const res = await h.request('POST', '/v1/ingest', {
        payload: gzipSync('{"documents":[{"text":"x"}]}'),
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      });
      expectProblem(res, 415);
      expect(res.json().detail).toMatch(/gzip/);
      const identity = await h.request('POST', '/v1/ingest', {
        payload: '{"documents":[{"text":"x"}]}',
        headers: { 'content-type': 'application/json', 'content-encoding': 'identity' },
      });
      expect(identity.statusCode).toBe(202);
    });

    it('a __proto__ key is refused by name, not as "not valid JSON"', async () => {
      for (const payload of [
        '{"documents":[{"text":"x","metadata":{"__proto__":"1"}}]}',
        '{"documents":[{"text":"x","metadata":{"constructor":{"prototype":{}}}}]}',
      ]) {
        const res = await h.request('POST', '/v1/ingest', {
          payload,
          headers: { 'content-type': 'application/json' },
        });
        expectProblem(res, 400);
        expect(res.json().detail).not.toMatch(/not valid JSON/);
        expect(res.json().detail).toMatch(/__proto__|constructor/);
      }
    });

    it('query-string integers must be plain integers', async () => {
      for (const q of ['limit=1e2', 'limit=%20', 'limit=0x10', 'limit=10.0', 'limit=+5', 'limit=05']) {
        const res = await h.request('GET', `/v1/documents?${q}`);
        expectProblem(res, 400);
        expect(res.json().errors[0].pointer).toBe('/query/limit');
      }
      expect((await h.request('GET', '/v1/documents?limit=5')).statusCode).toBe(200);
    });
  });

  describe('faults found before any route runs are problem+json too', () => {
    it('a 5,000-character path parameter', async () => {
      const res = await h.request('GET', `/v1/documents/${'a'.repeat(5_000)}`);
      expectProblem(res, 414);
      expect(res.json().code).toBe('uri_too_long');
    });

    it('a malformed percent-encoding', async () => {
      expectProblem(await h.request('GET', '/v1/documents/%E0%A4%A'), 400);
    });

    it('Content-Length together with Transfer-Encoding (a smuggling shape)', async () => {
      const answer = await rawExchange(
        port,
        'POST /v1/query HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
          'Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      );
      expect(answer).toMatch(/^HTTP\/1\.1 400 /);
      expect(answer).toMatch(/application\/problem\+json/);
      expect(answer).toMatch(/"code":"invalid_request"/);
    });

    it('headers larger than the limit are a 431', async () => {
      const answer = await rawExchange(
        port,
        `GET /v1/usage HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
      );
      expect(answer).toMatch(/^HTTP\/1\.1 431 /);
      expect(answer).toMatch(/"code":"headers_too_large"/);
    });
  });

  it('a client sending an over-limit JSON body reads the 413 (with and without Content-Length)', async () => {
    const body = Buffer.alloc(64 * 1024 * 1024, 0x20);
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${h.orgA.apiKey}` };
    for (const streamed of [false, true]) {
      const res = await fetch(`http://127.0.0.1:${port}/v1/ingest`, {
        method: 'POST',
        headers,
        body: streamed ? new Blob([body]).stream() : body,
        duplex: 'half',
      } as RequestInit);
      expect(res.status).toBe(413);
      expect(((await res.json()) as { code: string }).code).toBe('payload_too_large');
    }
  });
});
