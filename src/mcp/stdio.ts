// `docindex mcp`: the docindex tools for an MCP client that starts this process and speaks
// JSON-RPC over its stdin and stdout. Every tool calls a running docindex server through the
// TypeScript client, so this process holds no data and needs only a URL and an API key.
import type { Readable, Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { DocindexClient } from '../client/client.js';
import { connectTools } from './call-params.js';
import { clientApi } from './client-api.js';
import { createToolServer } from './tools.js';

export interface StdioStreams {
  stdin: Readable;
  /** The protocol's only channel: nothing else may be written to it. */
  stdout: Writable;
}

/**
 * Serves the tools over `streams` until the client closes stdin (or `signal` aborts), then
 * resolves. Stdin ending is how an MCP client stops a stdio server.
 */
export async function serveStdio(
  client: DocindexClient,
  streams: StdioStreams,
  version: string,
  signal?: AbortSignal,
): Promise<void> {
  const server = createToolServer(clientApi(client), { version });
  const transport = new StdioServerTransport(streams.stdin, streams.stdout);
  const ended = new Promise<void>((resolve) => {
    streams.stdin.once('end', resolve);
    streams.stdin.once('close', resolve);
    signal?.addEventListener('abort', () => resolve(), { once: true });
  });
  await connectTools(server, transport);
  await ended;
  await server.close();
}
