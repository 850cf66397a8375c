// The docindex MCP tools (search, get_document, list_documents, ingest_text, ingest_url,
// run_evaluation, list_sources, sync_source), defined once for both transports against
// DocindexApi (api.ts): `docindex mcp` (stdio) implements it with the TypeScript client over
// HTTP, the server's /mcp endpoint with the domain services. Each tool answers its result as JSON
// text and as structured content; a failure is a tool error that starts with the API's problem
// code (`not_found: …`), never a protocol error or a crash. Arguments outside a tool's input
// schema never reach it: the SDK answers those with a tool error of its own (`MCP error -32602:
// Input validation error: …`), as docs/CLIENTS.md describes.
// Each resource's tools are a module of tools/ (shared.ts: their names, scopes and runner); this
// module assembles them into one server, in the order TOOL_NAMES lists them (the order of
// tools/list).
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { DocindexApi } from './api.js';
import { registerDocumentTools } from './tools/documents.js';
import { registerEvaluationTools } from './tools/evaluations.js';
import { registerIngestTools } from './tools/ingest.js';
import { registerQueryTools } from './tools/query.js';
import { type ToolContext, type ToolServerOptions, toolRunner } from './tools/shared.js';
import { registerSourceTools } from './tools/sources.js';

export type { DocindexApi } from './api.js';
export { TOOL_NAMES, TOOL_SCOPES, type ToolName, type ToolServerOptions } from './tools/shared.js';

/** Largest number of array elements and object members one call's arguments may hold. */
const MAX_ARGUMENT_ELEMENTS = 5_000;

/** Each resource's tools, registered in this order. */
const REGISTRATIONS: ReadonlyArray<(context: ToolContext) => void> = [
  registerQueryTools,
  registerDocumentTools,
  registerIngestTools,
  registerEvaluationTools,
  registerSourceTools,
];

/** An MCP server with the docindex tools, answering through `api`. One per connection. */
export function createToolServer(api: DocindexApi, options: ToolServerOptions): McpServer {
  const server = new McpServer(
    { name: 'docindex', title: 'docindex', version: options.version },
    {
      maxToolInputElements: MAX_ARGUMENT_ELEMENTS,
      instructions:
        'docindex indexes an organisation’s documents and searches them. Use search to find passages (each result names its document_id and chunk_index), get_document and list_documents to see documents and their processing status, and ingest_text or ingest_url to add documents; new documents become searchable once their status is ready. list_sources shows the collections (S3 buckets, web sites) kept in sync as documents and sync_source starts a run of one.',
    },
  );
  const context: ToolContext = { server, api, run: toolRunner(options), options };
  for (const register of REGISTRATIONS) register(context);
  return server;
}
