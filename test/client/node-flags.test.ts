// `docindex serve` run by a `node` given its own flags, as operators raise the heap: V8's flags
// cannot be handed to a worker thread, yet the server must start, chunk texts in its threads and
// read files in its processes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServerProcess, startServer, stopServer } from '../helpers/process.js';

const NODE_FLAGS = ['--max-old-space-size=1024', '--expose-gc', '--title=docindex-under-test'];

describe('a server under node flags that threads cannot take', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'docindex-node-flags-'));
  let server: ServerProcess;
  let apiKey = '';

  const api = async (method: string, route: string, body?: string | FormData, type?: string) => {
    const headers: Record<string, string> = { authorization: `Bearer ${apiKey}` };
    if (type) headers['content-type'] = type;
    const response = await fetch(`${server.baseUrl}${route}`, { method, headers, body });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  const statusOf = async (id: string): Promise<string> => {
    for (;;) {
      const { body } = await api('GET', `/v1/documents/${id}`);
      if (body.status !== 'queued' && body.status !== 'processing') return String(body.status);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  beforeAll(async () => {
    server = await startServer(['serve'], { DATA_DIR: path.join(root, 'data') }, undefined, NODE_FLAGS);
    apiKey = /api_key:\s+(dix_\S+)/.exec(server.stdout())?.[1] ?? '';
    if (!apiKey) throw new Error(`the server printed no first key:\n${server.stdout()}`);
  });
  afterAll(async () => {
    if (server) await stopServer(server);
    rmSync(root, { recursive: true, force: true });
  });

  it('indexes a text (a thread chunks it) and a file (a process reads it)', async () => {
    const text = await api(
      'POST',
      '/v1/ingest',
      JSON.stringify({ documents: [{ text: 'Otters crack shellfish open on stones they carry.' }] }),
      'application/json',
    );
    expect(text.status).toBe(202);
    const form = new FormData();
    form.append('file', new Blob(['Puffins nest in burrows on steep sea cliffs.\n']), 'puffins.txt');
    const file = await api('POST', '/v1/ingest/file', form);
    expect(file.status).toBe(202);
    const ids = [...(text.body.document_ids as string[]), ...(file.body.document_ids as string[])];
    expect(await Promise.all(ids.map(statusOf))).toEqual(['ready', 'ready']);

    const found = await api(
      'POST',
      '/v1/query',
      JSON.stringify({ query: 'otters puffins' }),
      'application/json',
    );
    expect(found.status).toBe(200);
    const hits = found.body.results as Array<{ document_id: string }>;
    expect(new Set(hits.map((hit) => hit.document_id))).toEqual(new Set(ids));
  });
});
