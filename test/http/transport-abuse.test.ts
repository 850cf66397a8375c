// Multipart and connection abuse over a real socket: no boundary, 1,001 parts, an upload aborted
// at 50 MB, and a slow-loris client that never finishes its headers — each cut off with a clear
// answer and nothing left behind, while other clients keep being served.
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../helpers/harness.js';

describe('transport abuse', () => {
  let h: Harness;
  let port: number;
  beforeAll(async () => {
    h = await startHarness({ worker: false, env: { HEADERS_TIMEOUT_MS: '1000' } });
    await h.app.listen({ host: '127.0.0.1', port: 0 });
    port = (h.app.server.address() as net.AddressInfo).port;
  });
  afterAll(() => h.close());

  const files = () => h.blobFiles();
  const documentCount = async () =>
    (await h.request('GET', '/v1/documents?limit=100')).json().documents.length as number;

  it('multipart without a boundary is a 4xx problem', async () => {
    const res = await h.request('POST', '/v1/ingest/file', {
      payload: 'just some bytes',
      headers: { 'content-type': 'multipart/form-data' },
    });
    expect([400, 415]).toContain(res.statusCode);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  });

  it('1,001 parts is a 400 and stores nothing', async () => {
    const boundary = 'x-docindex-boundary';
    const parts = Array.from(
      { length: 1_001 },
      (_, i) => `--${boundary}\r\nContent-Disposition: form-data; name="f${i}"\r\n\r\nv\r\n`,
    );
    const payload = `${parts.join('')}--${boundary}--\r\n`;
    const before = await documentCount();
    const res = await h.request('POST', '/v1/ingest/file', {
      payload,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
    });
    expect(res.statusCode).toBe(400);
    expect(await documentCount()).toBe(before);
    expect(await files()).toEqual([]);
  });

  it('an upload aborted at 50 MB leaves no row and a clean temp folder', async () => {
    const before = await documentCount();
    const boundary = 'abort-boundary';
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\n\r\n`;
    // What the blob store held just before the abort: the upload being streamed into it.
    let streaming: { name: string; bytes: number; complete: boolean }[] = [];
    await new Promise<void>((resolve) => {
      const req = http.request({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/v1/ingest/file',
        headers: {
          authorization: `Bearer ${h.orgA.apiKey}`,
          'content-type': `multipart/form-data; boundary=${boundary}`,
          'content-length': String(100 * 1024 * 1024),
        },
      });
      req.on('error', () => resolve());
      req.on('close', () => resolve());
      const block = Buffer.alloc(1024 * 1024, 'y');
      let sent = 0;
      req.write(head);
      const pump = () => {
        while (sent < 50 * 1024 * 1024) {
          sent += block.length;
          if (!req.write(block)) return void req.once('drain', pump);
        }
        const abortOnceStored = async () => {
          if (req.destroyed) return;
          streaming = await h.blobObjects();
          if (streaming.some((f) => f.bytes > 10 * 1024 * 1024)) req.destroy();
          else setTimeout(abortOnceStored, 20);
        };
        void abortOnceStored();
      };
      pump();
    });
    expect(streaming).toHaveLength(1);
    expect(streaming[0]!.complete).toBe(false);
    const deadline = Date.now() + 5_000;
    while ((await files()).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(await files()).toEqual([]);
    expect(await documentCount()).toBe(before);
  });

  it('a slow-loris client is cut off while others keep being served', async () => {
    const socket = net.connect(port, '127.0.0.1');
    const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(Date.now())));
    socket.on('error', () => {});
    const started = Date.now();
    socket.write('GET /v1/usage HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    const drip = setInterval(() => socket.write('X-Slow: 1\r\n'), 200);
    try {
      // Meanwhile a normal client on another connection to the same server is answered at once.
      const t = Date.now();
      const ok = await fetch(`http://127.0.0.1:${port}/v1/usage`, {
        headers: { authorization: `Bearer ${h.orgA.apiKey}` },
      });
      expect(ok.status).toBe(200);
      expect(Date.now() - t).toBeLessThan(1_000);
      const end = await closed;
      // headersTimeout is 1 s, checked every second: cut off within a few seconds, not left open.
      expect(end - started).toBeLessThan(5_000);
    } finally {
      clearInterval(drip);
      socket.destroy();
    }
  });
});
