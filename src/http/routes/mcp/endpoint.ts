// /mcp — the docindex MCP tools over streamable HTTP, inside the authenticated scope: the org's
// Bearer key and rate limit as on /v1 (each JSON-RPC POST is one request), and each tool checks
// its own key scope, so any valid key may connect and list the tools. Stateless: every POST gets
// a fresh MCP server and transport (no session id), so any instance can answer any request and
// nothing is held between requests; there is therefore no SSE stream to GET and no session to
// DELETE (405, as the MCP specification asks of a server without them).
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, ERRORS } from '../../../domain/errors.js';
import { connectTools } from '../../../mcp/call-params.js';
import { createToolServer } from '../../../mcp/tools.js';
import type { AppDeps } from '../../deps.js';
import { PER_TOOL } from '../../plugins/authenticated.js';
import { serviceApi } from './service-api.js';

export function mcpEndpoint(app: FastifyInstance, deps: AppDeps): void {
  // Not in the OpenAPI document: MCP describes itself (tools/list).
  const options = { config: { scope: PER_TOOL }, schema: { hide: true } } as const;

  app.post('/mcp', options, async (request, reply) => {
    // The 2025-03-26 protocol allowed JSON-RPC batches and the SDK still reads them, but a batch
    // would run many tool calls for one unit of the rate limit; later protocols removed them.
    if (Array.isArray(request.body)) {
      throw ERRORS.invalid(
        'Send one JSON-RPC message per POST: batches are not accepted here (each message counts against the rate limit).',
      );
    }
    const { principal } = request;
    const server = createToolServer(serviceApi(deps, principal, request.traceSpan), {
      version: deps.version,
      grantedScopes: principal.scopes,
      access: request.principal.access,
      onUnexpectedError: (error, tool) => request.log.error({ err: error, tool }, 'MCP tool failed'),
    });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      // One JSON answer per POST: nothing here streams, and plain JSON passes every proxy.
      enableJsonResponse: true,
    });
    // From here the transport writes the response; headers set so far (rate limit) go with it.
    reply.hijack();
    for (const [name, value] of Object.entries(reply.getHeaders())) {
      if (value !== undefined) reply.raw.setHeader(name, value);
    }
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    try {
      await connectTools(server, transport);
      await transport.handleRequest(request.raw, reply.raw, request.body);
    } catch (error) {
      request.log.error({ err: error }, 'MCP request failed');
      if (!reply.raw.headersSent) {
        reply.raw.writeHead(500, { 'content-type': 'application/json' });
        reply.raw.end(
          JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null }),
        );
      }
    }
  });

  const notAllowed = async (_request: FastifyRequest, reply: FastifyReply) => {
    reply.header('allow', 'POST');
    throw new ApiError(
      'method_not_allowed',
      'This MCP endpoint is stateless: send each JSON-RPC message with POST. It offers no SSE stream to GET and no session to DELETE.',
    );
  };
  app.get('/mcp', options, notAllowed);
  app.delete('/mcp', options, notAllowed);
}
