// A client sending a body over a route's limit reads the 413 problem+json, even on a busy machine:
// the server reads (and drops) the rest of the body before it answers and closes, so the client is
// never cut off mid-send with a connection reset (or a broken pipe) instead of the answer. The
// server runs as its own process, as users run it, and two spinning processes keep both cores busy
// for the whole file, which is when an early close shows.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type ServerProcess, startServer, stopServer } from '../helpers/process.js';

const BODY_BYTES = 64 * 1024 * 1024;
const UPLOAD_LIMIT = 4 * 1024 * 1024;
const READ_413 = '413 application/problem+json payload_too_large';

describe('a body over the limit, on a loaded machine', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'docindex-over-limit-'));
  const env = { DATA_DIR: dataDir, MAX_UPLOAD_BYTES: String(UPLOAD_LIMIT) };
  const spinners: ChildProcess[] = [];
  let server: ServerProcess;
  let apiKey: string;

  beforeAll(async () => {
    const created = await runCli(['orgs', 'create', '--name', 'Acme', '--json'], env);
    expect(created.status, created.stderr).toBe(0);
    apiKey = JSON.parse(created.stdout).api_key;
    server = await startServer(['serve', '--no-worker'], env);
    for (let i = 0; i < 2; i++) {
      spinners.push(spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
    }
  });
  afterAll(async () => {
    for (const spinner of spinners) spinner.kill('SIGKILL');
    if (server) await stopServer(server);
    rmSync(dataDir, { recursive: true, force: true });
  });

  /**
   * Ingests a text on a connection of its own, closed once answered: a pooled connection left idle
   * while the uploads run would be closed by the server's keep-alive timeout, and fetch could pick
   * it for the next upload just then (a race of its own, not what this file is about).
   */
  function ingestOne(text: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const body = JSON.stringify({ documents: [{ text }] });
      const request = http.request(
        new URL('/v1/ingest', server.baseUrl),
        {
          method: 'POST',
          agent: false,
          headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
        },
        (res) => {
          let answer = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            answer += chunk;
          });
          res.on('end', () => resolve((JSON.parse(answer) as { document_ids: string[] }).document_ids[0]!));
        },
      );
      request.on('error', reject);
      request.end(body);
    });
  }

  /** Sends `body` and returns what the client read: status, media type and problem code, or the error. */
  async function send(
    method: string,
    url: string,
    contentType: string,
    body: Uint8Array,
    streamed: boolean,
  ): Promise<string> {
    try {
      const res = await fetch(new URL(url, server.baseUrl), {
        method,
        headers: { 'content-type': contentType, authorization: `Bearer ${apiKey}` },
        // Streamed: no Content-Length, so the server finds the size only by reading.
        body: streamed ? new Blob([body]).stream() : body,
        duplex: 'half',
      } as RequestInit);
      const type = (res.headers.get('content-type') ?? '').split(';')[0];
      return `${res.status} ${type} ${((await res.json()) as { code?: string }).code}`;
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      return `failed: ${cause?.code ?? cause?.message ?? String(error)}`;
    }
  }

  it('a 64 MB JSON body: each of ten tries reads the 413', { timeout: 300_000 }, async () => {
    const body = Buffer.alloc(BODY_BYTES, 0x20);
    const answers: string[] = [];
    for (let i = 0; i < 10; i++) {
      answers.push(await send('POST', '/v1/ingest', 'application/json', body, i % 2 === 1));
    }
    expect(answers).toEqual(Array(10).fill(READ_413));
  });

  it('a 64 MB upload over MAX_UPLOAD_BYTES, as a new document and as new content: the 413 each time', {
    timeout: 300_000,
  }, async () => {
    const id = await ingestOne('a document to replace');
    const form = new FormData();
    form.append('file', new Blob([Buffer.alloc(BODY_BYTES, 0x61)]), 'big.txt');
    const request = new Request('http://localhost/', { method: 'POST', body: form });
    const payload = new Uint8Array(await request.arrayBuffer());
    const contentType = request.headers.get('content-type')!;
    const answers: string[] = [];
    for (let i = 0; i < 3; i++) {
      answers.push(await send('POST', '/v1/ingest/file', contentType, payload, i % 2 === 1));
      answers.push(await send('PUT', `/v1/documents/${id}/content`, contentType, payload, i % 2 === 1));
    }
    expect(answers).toEqual(Array(6).fill(READ_413));
  });
});
