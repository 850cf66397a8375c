// A `tools/call` whose params do not have the request's shape (no params, no tool name, arguments
// that are not an object: null, a string, a list) is answered here with JSON-RPC -32602 (invalid
// params) and one line saying what to send. The SDK checks that shape with zod before its own
// handler runs and answers a failure as -32603 (internal error) carrying zod's issue list. Arguments
// that are an object but do not fit a tool's input schema are not this: they reach the SDK, which
// answers them as a tool error the model can correct (docs/CLIENTS.md).
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CallToolRequestSchema, ErrorCode, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { TOOL_NAMES } from './tools.js';

const EXAMPLE = '{"name": "search", "arguments": {"query": "…"}}';

/** Connects `server` to `transport` and answers malformed `tools/call` params before it sees them. */
export async function connectTools(server: McpServer, transport: Transport): Promise<void> {
  await server.connect(transport);
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    const problem = toolCallProblem(message, TOOL_NAMES);
    if (problem === null) return deliver?.(message, extra);
    void transport
      .send({
        jsonrpc: '2.0',
        id: problem.id,
        error: { code: ErrorCode.InvalidParams, message: problem.text },
      })
      .catch((error: unknown) => transport.onerror?.(error as Error));
  };
}

/** The id and the one-line reason of a `tools/call` request with malformed params; else null. */
export function toolCallProblem(
  message: JSONRPCMessage,
  tools: readonly string[],
): { id: string | number; text: string } | null {
  if (!('method' in message) || message.method !== 'tools/call' || !('id' in message)) return null;
  if (CallToolRequestSchema.safeParse(message).success) return null;
  const { id } = message;
  const params: unknown = message.params;
  if (!isObject(params)) {
    return {
      id,
      text: `Invalid params: tools/call needs params with the tool's name and arguments, e.g. ${EXAMPLE}.`,
    };
  }
  if (typeof params.name !== 'string') {
    return {
      id,
      text: `Invalid params: \`name\` must be the name of a tool (${tools.join(', ')}), got ${kindOf(params.name)}.`,
    };
  }
  if ('arguments' in params && !isObject(params.arguments)) {
    return {
      id,
      text: `Invalid params: \`arguments\` must be an object of the tool's arguments by name, e.g. ${EXAMPLE}; got ${kindOf(params.arguments)}.`,
    };
  }
  return {
    id,
    text: 'Invalid params: tools/call takes `name`, `arguments` (an object) and an optional `_meta` object.',
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function kindOf(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return `a ${typeof value}`;
}
