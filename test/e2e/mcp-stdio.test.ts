// `docindex mcp` as MCP clients run it: the built command spawned by the SDK's own stdio client,
// talking to a real docindex on loopback with DOCINDEX_URL and DOCINDEX_API_KEY. The tools
// answer through the TypeScript client, so the server's problems (not_found, insufficient_scope)
// come back as tool errors; the process ends when the client closes its stdin.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { type CallToolResult, CallToolResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { listen } from '../client/support.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { BIN, runCli } from '../helpers/process.js';

describe('docindex mcp (stdio)', () => {
  let h: Harness;
  let baseUrl: string;
  const open: { client: Client; transport: StdioClientTransport }[] = [];

  async function connect(
    apiKey: string,
    url = baseUrl,
  ): Promise<{ client: Client; transport: StdioClientTransport }> {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp'],
      env: { DOCINDEX_URL: url, DOCINDEX_API_KEY: apiKey, LOG_LEVEL: 'warn' },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'docindex-test', version: '1.0.0' });
    await client.connect(transport);
    const session = { client, transport };
    open.push(session);
    return session;
  }

  async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
    return (await client.callTool({ name, arguments: args })) as CallToolResult;
  }

  function textOf(result: CallToolResult): string {
    const first = result.content[0];
    return first?.type === 'text' ? first.text : '';
  }

  beforeAll(async () => {
    h = await startHarness();
    baseUrl = await listen(h.app);
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map(({ client }) => client.close()));
  });
  afterAll(() => h.close());

  it('serves the tools against the server: ingest_text, get_document until ready, search with a filter', async () => {
    const { client } = await connect(h.orgA.apiKey);
    // The service's version, as the OpenAPI document gives it (package.json's).
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    expect(client.getServerVersion()).toMatchObject({ name: 'docindex', version });
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      'get_document',
      'ingest_text',
      'ingest_url',
      'list_documents',
      'list_sources',
      'run_evaluation',
      'search',
      'sync_source',
    ]);

    const ack = await call(client, 'ingest_text', {
      text: 'The quokka is a small wallaby of Rottnest Island.',
      metadata: { region: 'au' },
      chunk_size: 128,
      chunk_overlap: 0,
    });
    expect(ack.isError ?? false, textOf(ack)).toBe(false);
    expect(ack.structuredContent).toMatchObject({ status: 'accepted', org_id: h.orgA.orgId, queued: 1 });
    const [id] = (ack.structuredContent as { document_ids: string[] }).document_ids;

    const deadline = Date.now() + 30_000;
    let doc: Record<string, unknown> = {};
    while (doc.status !== 'ready' && Date.now() < deadline) {
      const result = await call(client, 'get_document', { id });
      doc = result.structuredContent as Record<string, unknown>;
      if (doc.status !== 'ready') await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(doc).toMatchObject({
      id,
      status: 'ready',
      chunk_size: 128,
      chunk_overlap: 0,
      metadata: { region: 'au' },
    });

    const found = await call(client, 'search', {
      query: 'quokka wallaby',
      filter: { region: { $eq: 'au' } },
    });
    expect(JSON.parse(textOf(found))).toEqual(found.structuredContent);
    expect(found.structuredContent).toMatchObject({
      org_id: h.orgA.orgId,
      results: [
        { document_id: id, chunk_index: 0, text: 'The quokka is a small wallaby of Rottnest Island.' },
      ],
    });
    const none = await call(client, 'search', { query: 'quokka', filter: { region: 'eu' } });
    expect(none.structuredContent).toMatchObject({ results: [] });

    // run_evaluation over the API: started, waited for, and read back by its id.
    const evaluated = await call(client, 'run_evaluation', {
      queries: [{ query: 'quokka wallaby', relevant: [{ document_id: id }] }],
      runs: [{ mode: 'keyword' }],
    });
    expect(evaluated.isError ?? false, textOf(evaluated)).toBe(false);
    const { evaluation_id: evaluationId, evaluation } = evaluated.structuredContent as {
      evaluation_id: string;
      evaluation: { status: string; runs: { ndcg_at_10: number }[] };
    };
    expect(evaluation.status).toBe('done');
    expect(evaluation.runs[0]?.ndcg_at_10).toBe(1);
    const again = await call(client, 'run_evaluation', { evaluation_id: evaluationId });
    expect((again.structuredContent as { evaluation: unknown }).evaluation).toEqual(evaluation);

    const listed = await call(client, 'list_documents', { status: 'ready', limit: 10 });
    expect(
      (listed.structuredContent as { documents: { id: string }[] }).documents.map((d) => d.id),
    ).toContain(id);
  });

  it('turns the server’s problems into tool errors: another org’s document, a missing scope', async () => {
    const [id] = await h.ingest(h.orgA, ['Only org A may read this.']);
    const { client } = await connect(h.orgB.apiKey);
    const foreign = await call(client, 'get_document', { id });
    expect(foreign.isError).toBe(true);
    expect(textOf(foreign)).toBe(`not_found: No document with id ${id}.`);

    const readOnly = await h.runtime.admin.issueKey(h.orgA.orgId, { scopes: ['read'] });
    const { client: reader } = await connect(readOnly.api_key);
    const refused = await call(reader, 'ingest_text', { text: 'not allowed' });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/^insufficient_scope: This API key lacks the `ingest` scope/);
    expect((await call(reader, 'get_document', { id })).structuredContent).toMatchObject({ id });
  });

  it('answers tools/call arguments that are not an object with -32602 and one clear line', async () => {
    const { client } = await connect(h.orgA.apiKey);
    for (const args of [null, 'okapi', ['okapi']]) {
      const request = { method: 'tools/call', params: { name: 'search', arguments: args } };
      const error = await client.request(request as never, CallToolResultSchema).then(
        () => null,
        (e: unknown) => e as McpError,
      );
      expect(error).toBeInstanceOf(McpError);
      expect(error?.code).toBe(-32602);
      expect(error?.message).toMatch(/Invalid params: `arguments` must be an object/);
      expect(error?.message).not.toMatch(/\n|invalid_type/);
    }
    // The process goes on serving.
    expect(
      textOf(await call(client, 'get_document', { id: '00000000-0000-4000-8000-000000000000' })),
    ).toMatch(/^not_found: /);
  });

  it('an unreachable server is a tool error, not a crash', async () => {
    const { client } = await connect(h.orgA.apiKey, await closedPortUrl());
    const result = await call(client, 'list_documents', {});
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^network_error: Could not reach http:\/\/127\.0\.0\.1:\d+/);
    expect((await client.listTools()).tools).toHaveLength(8);
  });

  it('speaks newline-delimited JSON-RPC on stdout only, and exits 0 when stdin closes', async () => {
    const child = spawn(process.execPath, [BIN, 'mcp'], {
      env: { ...process.env, DOCINDEX_URL: baseUrl, DOCINDEX_API_KEY: h.orgA.apiKey, LOG_LEVEL: 'info' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    };
    child.stdin.write(`${JSON.stringify(initialize)}\n`);
    const deadline = Date.now() + 10_000;
    while (!stdout.includes('\n') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    child.stdin.end();
    expect(await exited).toBe(0);
    const lines = stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      jsonrpc: '2.0',
      id: 1,
      result: { serverInfo: { name: 'docindex' }, capabilities: { tools: {} } },
    });
    expect(stderr).toContain(`docindex mcp: serving MCP over stdio for ${baseUrl}`);
  });

  it('without an API key it says how to get one and exits 2', async () => {
    const result = await runCli(['mcp'], { DOCINDEX_URL: baseUrl, DOCINDEX_API_KEY: '' });
    expect(result.status).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/docindex mcp: no API key: set DOCINDEX_API_KEY/);
  });

  it('is in the help', async () => {
    const result = await runCli(['--help'], {});
    expect(result.stdout).toContain('docindex mcp [--url URL] [--api-key KEY]');
  });
});

/** A loopback URL nothing listens on. */
async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}
