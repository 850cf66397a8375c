// The MCP tools over streamable HTTP at /mcp, driven by the MCP SDK's own client against a real
// docindex listening on loopback: the tool list, ingest → ready → search (with filters), listing,
// URL ingest from a local server, and what a caller may not do: no key (401), another org's
// document (not_found), a key without a tool's scope (insufficient_scope), GET/DELETE (405), and
// the org's rate limit, which /mcp shares with /v1.

import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import Fastify from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { authenticatedScope, PER_TOOL } from '../../src/http/plugins/authenticated.js';
import { listen } from '../client/support.js';
import { type Harness, startHarness } from '../helpers/harness.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('MCP over streamable HTTP (/mcp)', () => {
  let h: Harness;
  let baseUrl: string;
  let pages: http.Server;
  let pagesOrigin: string;
  const clients: Client[] = [];

  async function connect(apiKey: string): Promise<Client> {
    const client = new Client({ name: 'docindex-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL('/mcp', baseUrl), {
      requestInit: { headers: { authorization: `Bearer ${apiKey}` } },
    });
    await client.connect(transport);
    clients.push(client);
    return client;
  }

  async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
    return (await client.callTool({ name, arguments: args })) as CallToolResult;
  }

  /** The structured content of a successful call, checked to equal its JSON text. */
  function resultOf(result: CallToolResult): Record<string, unknown> {
    const text = result.content[0]?.type === 'text' ? result.content[0].text : '';
    expect(result.isError ?? false, text).toBe(false);
    expect(JSON.parse(text)).toEqual(result.structuredContent);
    return result.structuredContent as Record<string, unknown>;
  }

  function errorText(result: CallToolResult): string {
    expect(result.isError).toBe(true);
    const first = result.content[0];
    return first?.type === 'text' ? first.text : '';
  }

  async function waitReady(client: Client, id: string): Promise<Record<string, unknown>> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const doc = resultOf(await call(client, 'get_document', { id }));
      if (doc.status === 'ready' || doc.status === 'failed') return doc;
      if (Date.now() > deadline) throw new Error(`document ${id} still ${String(doc.status)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  function rpc(apiKey: string | null, body: unknown, method = 'POST'): Promise<Response> {
    return fetch(new URL('/mcp', baseUrl), {
      method,
      headers: {
        ...(apiKey === null ? {} : { authorization: `Bearer ${apiKey}` }),
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      ...(method === 'POST' ? { body: JSON.stringify(body) } : {}),
    });
  }

  beforeAll(async () => {
    pages = http.createServer((req, res) => {
      if (req.url === '/tapir.txt') {
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
        res.end('The mountain tapir browses in the cloud forests of the Andes.\n');
        return;
      }
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
    });
    await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
    const { port } = pages.address() as AddressInfo;
    pagesOrigin = `http://127.0.0.1:${port}`;
    h = await startHarness({ env: { URL_FETCH_ALLOW: `127.0.0.1:${port}` } });
    baseUrl = await listen(h.app);
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
  });
  afterAll(async () => {
    await h.close();
    await new Promise((resolve) => pages.close(resolve));
  });

  it('lists the eight tools, each with a described input schema and an output schema', async () => {
    const client = await connect(h.orgA.apiKey);
    // The service's version, as the OpenAPI document gives it (package.json's).
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    expect(client.getServerVersion()).toMatchObject({ name: 'docindex', version });
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(
      [
        'get_document',
        'ingest_text',
        'ingest_url',
        'list_documents',
        'list_sources',
        'run_evaluation',
        'search',
        'sync_source',
      ].sort(),
    );
    for (const tool of tools) {
      expect(tool.description, tool.name).toMatch(/scope/);
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type, tool.name).toBe('object');
    }
    const search = tools.find((tool) => tool.name === 'search')!;
    expect(search.inputSchema.required).toEqual(['query']);
    const properties = search.inputSchema.properties as Record<string, { description?: string }>;
    expect(Object.keys(properties).sort()).toEqual([
      'document_ids',
      'filter',
      'mode',
      'partitions',
      'principals',
      'query',
      'rerank',
      'rerank_candidates',
      'top_k',
    ]);
    expect(properties.rerank?.description).toContain('reranker');
    expect(properties.filter?.description).toContain('$gte');
    expect(search.annotations).toMatchObject({ readOnlyHint: true });
  });

  it('ingest_text → get_document until ready → search finds it, narrowed by a filter', async () => {
    const client = await connect(h.orgA.apiKey);
    const ack = resultOf(
      await call(client, 'ingest_text', {
        text: 'The okapi is a forest giraffe of the Ituri rainforest.',
        metadata: { lang: 'en', year: '2024' },
        chunk_size: 256,
        chunk_overlap: 32,
      }),
    );
    expect(ack).toMatchObject({ status: 'accepted', org_id: h.orgA.orgId, queued: 1 });
    const [english] = ack.document_ids as string[];
    expect(english).toMatch(UUID);
    const german = (
      resultOf(
        await call(client, 'ingest_text', {
          text: 'Das Okapi ist eine Waldgiraffe. The okapi is shy.',
          metadata: { lang: 'de', year: '2021' },
        }),
      ).document_ids as string[]
    )[0]!;

    const doc = await waitReady(client, english!);
    expect(doc).toMatchObject({
      id: english,
      status: 'ready',
      metadata: { lang: 'en', year: '2024' },
      chunk_size: 256,
      chunk_overlap: 32,
    });
    expect(await waitReady(client, german)).toMatchObject({ status: 'ready', chunk_size: 512 });

    const all = resultOf(await call(client, 'search', { query: 'okapi', top_k: 5 }));
    const hits = all.results as { document_id: string; text: string; metadata: Record<string, string> }[];
    expect(new Set(hits.map((hit) => hit.document_id))).toEqual(new Set([english, german]));
    expect(hits.find((hit) => hit.document_id === english)).toMatchObject({
      text: 'The okapi is a forest giraffe of the Ituri rainforest.',
      metadata: { lang: 'en' },
      chunk_index: 0,
    });

    const filtered = resultOf(
      await call(client, 'search', { query: 'okapi', filter: { year: { $gte: '2023' } } }),
    );
    expect((filtered.results as { document_id: string }[]).map((hit) => hit.document_id)).toEqual([english]);
    const within = resultOf(await call(client, 'search', { query: 'okapi', document_ids: [german] }));
    expect((within.results as { document_id: string }[]).map((hit) => hit.document_id)).toEqual([german]);

    // A filter outside the language: the API's 400, as a tool error naming the bad part.
    const bad = errorText(await call(client, 'search', { query: 'okapi', filter: { year: { $gt: 2023 } } }));
    expect(bad).toMatch(/^invalid_request: /);
    expect(bad).toContain('/filter/year');
    // Arguments outside the tool's input schema are refused by the MCP layer before the tool runs,
    // as docs/CLIENTS.md ("MCP") shows them: still a tool error, one line per problem.
    const outOfBounds = errorText(await call(client, 'search', { query: 'okapi', top_k: 500 }));
    expect(outOfBounds).toMatch(
      /^MCP error -32602: Input validation error: Invalid arguments for tool search: /,
    );
    expect(outOfBounds).toMatch(/<=100 at top_k/);
    // Modes: keyword is what this server (no embedding provider) does; semantic is its 400.
    const keyword = resultOf(await call(client, 'search', { query: 'okapi', mode: 'keyword' }));
    expect(keyword.mode).toBe('keyword');
    expect(errorText(await call(client, 'search', { query: 'okapi', mode: 'semantic' }))).toMatch(
      /^semantic_search_unavailable: /,
    );
    // No reranker on this server: asking for one is the API's refusal, declining it a plain search.
    expect(errorText(await call(client, 'search', { query: 'okapi', rerank: true }))).toMatch(
      /^rerank_unavailable: /,
    );
    const declined = resultOf(
      await call(client, 'search', { query: 'okapi', rerank: false, rerank_candidates: 5 }),
    );
    expect(declined.degraded_reasons).toEqual([]);
    const [firstHit] = declined.results as Array<{ scores: { rerank: number | null } }>;
    expect(firstHit?.scores.rerank).toBeNull();
    expect(errorText(await call(client, 'search', { query: 'okapi', rerank_candidates: 201 }))).toMatch(
      /rerank_candidates/,
    );
    // Arguments outside the schema are refused before anything runs.
    expect(errorText(await call(client, 'search', { query: 'okapi', top_k: 0 }))).toMatch(/top_k/);
    expect(errorText(await call(client, 'ingest_text', { text: 'x', metadata: { n: 1 } }))).toMatch(
      /metadata/,
    );
  });

  it('run_evaluation scores judged queries, reads an evaluation back by id, and refuses a call naming neither', async () => {
    const client = await connect(h.orgA.apiKey);
    const ack = resultOf(
      await call(client, 'ingest_text', { text: 'Tapirs browse leaves in the lowland forest.' }),
    );
    const [id] = ack.document_ids as string[];
    await waitReady(client, id!);
    const started = resultOf(
      await call(client, 'run_evaluation', {
        queries: [
          { query: 'tapirs browse leaves', relevant: [{ document_id: id }] },
          { query: 'tapirs', relevant: [{ external_id: 'no-such-tapir' }] },
        ],
        runs: [{ mode: 'keyword' }],
        top_k: 5,
      }),
    );
    const evaluation = started.evaluation as Record<string, unknown> & { runs: Record<string, unknown>[] };
    expect(evaluation).toMatchObject({
      id: started.evaluation_id,
      status: 'done',
      query_count: 2,
      queries_evaluated: 1,
    });
    expect(evaluation.runs[0]).toMatchObject({
      mode: 'keyword',
      ndcg_at_10: 1,
      recall_at_k: 1,
      mrr_at_10: 1,
    });
    const again = resultOf(await call(client, 'run_evaluation', { evaluation_id: started.evaluation_id }));
    expect(again.evaluation).toEqual(evaluation);
    expect(errorText(await call(client, 'run_evaluation', { top_k: 5 }))).toMatch(
      /^invalid_request: Give either queries/,
    );
    expect(errorText(await call(client, 'run_evaluation', { evaluation_id: 'eval_nope' }))).toMatch(
      /^not_found: /,
    );
  });

  it('list_documents pages with cursors and narrows by status, filter and ids', async () => {
    const client = await connect(h.orgB.apiKey);
    const ids: string[] = [];
    for (const colour of ['red', 'green', 'blue']) {
      const ack = resultOf(
        await call(client, 'ingest_text', { text: `A ${colour} kite.`, metadata: { colour } }),
      );
      ids.push(...(ack.document_ids as string[]));
    }
    for (const id of ids) await waitReady(client, id);

    const first = resultOf(await call(client, 'list_documents', { limit: 2 }));
    const firstIds = (first.documents as { id: string }[]).map((doc) => doc.id);
    expect(firstIds).toEqual([ids[2], ids[1]]);
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = resultOf(await call(client, 'list_documents', { limit: 2, cursor: first.next_cursor }));
    expect((second.documents as { id: string }[]).map((doc) => doc.id)).toEqual([ids[0]]);
    expect(second.next_cursor).toBeNull();

    const blue = resultOf(
      await call(client, 'list_documents', { filter: { colour: { $in: ['blue', 'red'] } } }),
    );
    expect((blue.documents as { id: string }[]).map((doc) => doc.id)).toEqual([ids[2], ids[0]]);
    const ready = resultOf(
      await call(client, 'list_documents', { status: 'ready', document_ids: [ids[1]!] }),
    );
    expect(ready.documents).toEqual([
      expect.objectContaining({ id: ids[1], status: 'ready', org_id: h.orgB.orgId }),
    ]);
    const queued = resultOf(await call(client, 'list_documents', { status: 'queued' }));
    expect(queued.documents).toEqual([]);
  });

  it('ingest_url downloads from a (local) server and the text becomes searchable', async () => {
    const client = await connect(h.orgA.apiKey);
    const ack = resultOf(
      await call(client, 'ingest_url', {
        url: `${pagesOrigin}/tapir.txt`,
        metadata: { kind: 'web' },
        chunk_size: 256,
        chunk_overlap: 16,
      }),
    );
    const [id] = ack.document_ids as string[];
    expect(await waitReady(client, id!)).toMatchObject({
      status: 'ready',
      chunk_size: 256,
      chunk_overlap: 16,
      source: { type: 'url', url: `${pagesOrigin}/tapir.txt` },
      metadata: { kind: 'web' },
    });
    const found = resultOf(
      await call(client, 'search', { query: 'tapir cloud forests', filter: { kind: 'web' } }),
    );
    expect((found.results as { document_id: string }[]).map((hit) => hit.document_id)).toEqual([id]);

    const missing = resultOf(await call(client, 'ingest_url', { url: `${pagesOrigin}/gone.txt` }));
    const failed = await waitReady(client, (missing.document_ids as string[])[0]!);
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'url_unreachable' } });

    const blocked = errorText(await call(client, 'ingest_url', { url: 'ftp://127.0.0.1/file.txt' }));
    expect(blocked).toMatch(/^invalid_request: /);
  });

  it('refuses a request without a valid key with 401, like /v1', async () => {
    const none = await rpc(null, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(await none.json()).toMatchObject({ code: 'unauthorized' });
    const wrong = await rpc('dix_not-a-real-key', { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(wrong.status).toBe(401);
    await expect(connect('dix_not-a-real-key')).rejects.toThrow(/401/);
  });

  it('another organisation’s document is not found, exactly like an unknown one', async () => {
    const owner = await connect(h.orgA.apiKey);
    const [id] = resultOf(await call(owner, 'ingest_text', { text: 'Private notes of org A.' }))
      .document_ids as string[];
    const other = await connect(h.orgB.apiKey);
    const foreign = errorText(await call(other, 'get_document', { id: id! }));
    expect(foreign).toBe(`not_found: No document with id ${id}.`);
    const unknown = '00000000-0000-4000-8000-000000000000';
    expect(errorText(await call(other, 'get_document', { id: unknown }))).toBe(
      `not_found: No document with id ${unknown}.`,
    );
    await waitReady(owner, id!);
    const search = resultOf(await call(other, 'search', { query: 'private notes', document_ids: [id!] }));
    expect(search.results).toEqual([]);
  });

  it('checks each tool’s scope: a narrow key connects, runs what it may, and gets insufficient_scope otherwise', async () => {
    const queryOnly = await h.runtime.admin.issueKey(h.orgA.orgId, { scopes: ['query'] });
    const client = await connect(queryOnly.api_key);
    expect((await client.listTools()).tools).toHaveLength(8);
    resultOf(await call(client, 'search', { query: 'okapi' }));
    const refused = errorText(
      await call(client, 'get_document', { id: '00000000-0000-4000-8000-000000000000' }),
    );
    expect(refused).toBe(
      'insufficient_scope: This API key lacks the `read` scope, which the MCP tool `get_document` needs; issue a key with that scope.',
    );
    expect(errorText(await call(client, 'list_documents', {}))).toMatch(/^insufficient_scope: .*`read`/);
    expect(errorText(await call(client, 'ingest_text', { text: 'no' }))).toMatch(
      /^insufficient_scope: .*`ingest`/,
    );
    expect(errorText(await call(client, 'ingest_url', { url: `${pagesOrigin}/tapir.txt` }))).toMatch(
      /^insufficient_scope: .*`ingest`/,
    );
    expect(errorText(await call(client, 'list_sources', {}))).toMatch(/^insufficient_scope: .*`sources`/);
    expect(errorText(await call(client, 'sync_source', { id: 'src_x' }))).toMatch(
      /^insufficient_scope: .*`sources`/,
    );

    const readOnly = await h.runtime.admin.issueKey(h.orgA.orgId, { scopes: ['read'] });
    const reader = await connect(readOnly.api_key);
    expect(errorText(await call(reader, 'search', { query: 'okapi' }))).toMatch(
      /^insufficient_scope: .*`query`/,
    );
    resultOf(await call(reader, 'list_documents', { limit: 1 }));
  });

  it('answers GET and DELETE with 405: the endpoint is stateless', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await rpc(h.orgA.apiKey, undefined, method);
      expect(res.status, method).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect(await res.json()).toMatchObject({ code: 'method_not_allowed' });
    }
    // Stateless: no session id is handed out, and the next request needs none.
    const res = await rpc(h.orgA.apiKey, { jsonrpc: '2.0', id: 7, method: 'tools/list' });
    expect(res.status).toBe(200);
    expect(res.headers.get('mcp-session-id')).toBeNull();
    expect(await res.json()).toMatchObject({ jsonrpc: '2.0', id: 7, result: { tools: expect.any(Array) } });
  });

  it('counts every MCP request against the org’s rate limit, shared with /v1', async () => {
    const limited = await h.runtime.admin.createOrg('limited', 3);
    const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    const remaining: number[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await rpc(limited.api_key, list);
      expect(res.status).toBe(200);
      // The rate-limit headers set before the transport took over the response are sent with it.
      expect(res.headers.get('ratelimit-policy')).toBe('"org";q=3;w=60');
      remaining.push(Number(/r=(\d+)/.exec(res.headers.get('ratelimit') ?? '')?.[1]));
      await res.arrayBuffer();
    }
    expect(remaining).toEqual([2, 1, 0]);
    const refused = await rpc(limited.api_key, list);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await refused.json()).toMatchObject({ code: 'rate_limited' });
    expect((await h.request('GET', '/v1/usage', { key: limited.api_key })).statusCode).toBe(429);
  });

  it('answers tools/call params of the wrong shape with -32602 and one clear line, for every tool', async () => {
    const callWith = async (params: unknown) => {
      const res = await rpc(h.orgA.apiKey, {
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        ...(params === undefined ? {} : { params }),
      });
      expect(res.status).toBe(200);
      return (await res.json()) as {
        id: number;
        error?: { code: number; message: string };
        result?: unknown;
      };
    };
    const expectInvalidParams = (answer: Awaited<ReturnType<typeof callWith>>, mention: RegExp) => {
      expect(answer.id).toBe(7);
      expect(answer.error?.code).toBe(-32602);
      expect(answer.error?.message).toMatch(/^Invalid params: /);
      expect(answer.error?.message).toMatch(mention);
      // One line, not a dump of the validator's issues.
      expect(answer.error?.message).not.toMatch(/\n|"code"|invalid_type/);
    };
    for (const name of [
      'search',
      'get_document',
      'list_documents',
      'ingest_text',
      'ingest_url',
      'run_evaluation',
    ]) {
      for (const args of [null, 'query', ['okapi'], 42, true]) {
        expectInvalidParams(await callWith({ name, arguments: args }), /`arguments` must be an object/);
      }
    }
    expectInvalidParams(await callWith(undefined), /needs params with the tool's name/);
    expectInvalidParams(
      await callWith({ arguments: { query: 'okapi' } }),
      /`name` must be the name of a tool/,
    );
    expectInvalidParams(await callWith({ name: 5 }), /search, get_document, list_documents/);

    // No `arguments` at all is no arguments: a tool that needs some says which, as a tool error
    // (as for any argument outside its input schema); one that needs none runs.
    for (const [name, field] of [
      ['search', 'query'],
      ['get_document', 'id'],
      ['ingest_text', 'text'],
      ['ingest_url', 'url'],
    ]) {
      const answer = await callWith({ name });
      expect(answer.error, name).toBeUndefined();
      const result = answer.result as CallToolResult;
      expect(errorText(result)).toMatch(
        new RegExp(`^MCP error -32602: Input validation error: .* at ${field}`),
      );
    }
    expect((await callWith({ name: 'list_documents' })).result).toMatchObject({
      structuredContent: { documents: expect.any(Array) },
    });
  });

  it('refuses JSON-RPC batches, which would run many calls for one unit of the rate limit', async () => {
    const call = (id: number) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'search', arguments: { query: 'okapi' } },
    });
    const before = (await h.request('GET', '/v1/usage')).json().total_queries as number;
    const res = await rpc(h.orgA.apiKey, [call(1), call(2), call(3)]);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      code: 'invalid_request',
      detail: expect.stringMatching(/batch/),
    });
    expect((await h.request('GET', '/v1/usage')).json().total_queries).toBe(before);
  });

  it('lets a route leave the scope to its tools only in the MCP context', async () => {
    const app = Fastify();
    const starting = app
      .register(async (scope) => {
        await authenticatedScope(h.runtime.appDeps)(scope);
        scope.post('/v1/sneaky', { config: { scope: PER_TOOL } }, async () => 'ok');
      })
      .ready();
    await expect(starting).rejects.toThrow(/POST \/v1\/sneaky declares no key scope/);
    await app.close().catch(() => {});
  });

  it('stays out of the OpenAPI document: MCP describes itself', async () => {
    const paths = Object.keys((await h.request('GET', '/openapi.json', { key: null })).json().paths);
    expect(paths).toContain('/v1/query');
    expect(paths.filter((p) => p.startsWith('/mcp'))).toEqual([]);
  });
});
