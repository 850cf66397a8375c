// What every tool module shares: the tools' names and key scopes, the options of a tool server,
// and the runner that checks a call's scope, answers its result as JSON text and structured
// content, and turns any failure into a tool error that starts with the API's problem code.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ApiError, ERRORS } from '../../domain/errors.js';
import { type DocumentAccess, requireEveryPartition, type WholeOrgFeature } from '../../domain/partitions.js';
import type { Scope } from '../../domain/scopes.js';
import type { DocindexApi } from '../api.js';

export interface ToolServerOptions {
  /** The version MCP clients are shown: the service's (package.json's), as the OpenAPI document gives it. */
  version: string;
  /**
   * The calling key's scopes, when this side enforces them (the /mcp endpoint): a tool whose scope
   * is missing answers `insufficient_scope`. Over stdio the API itself enforces them.
   */
  grantedScopes?: ReadonlySet<Scope>;
  /** What the calling key may see, when this side enforces it (the /mcp endpoint), as for the scopes. */
  access?: DocumentAccess;
  /** Told about failures that are not API answers (bugs), which the tool reports as `internal`. */
  onUnexpectedError?: (error: unknown, tool: string) => void;
  /** How long run_evaluation waits for an evaluation to finish before answering its status (30 s). */
  evaluationWaitMs?: number;
}

export const TOOL_NAMES = [
  'search',
  'get_document',
  'list_documents',
  'ingest_text',
  'ingest_url',
  'run_evaluation',
  'list_sources',
  'sync_source',
] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

/** The key scope each tool needs: the scope of the /v1 route it stands for. */
export const TOOL_SCOPES: Readonly<Record<ToolName, Scope>> = {
  search: 'query',
  get_document: 'read',
  list_documents: 'read',
  ingest_text: 'ingest',
  ingest_url: 'ingest',
  run_evaluation: 'query',
  list_sources: 'sources',
  sync_source: 'sources',
};

/** The tools that work on the whole org, as their /v1 routes do: refused to keys limited to partitions. */
const WHOLE_ORG_TOOLS: Readonly<Partial<Record<ToolName, WholeOrgFeature>>> = {
  run_evaluation: 'evaluations',
  list_sources: 'sources',
  sync_source: 'sources',
};

/** Runs a tool: checks its scope, answers JSON text and structured content, or a tool error. */
export type RunTool = <A>(
  tool: ToolName,
  call: (args: A) => Promise<object>,
) => (args: A) => Promise<CallToolResult>;

/** What a tool module registers its tools with. */
export interface ToolContext {
  server: McpServer;
  api: DocindexApi;
  run: RunTool;
  options: ToolServerOptions;
}

/** The runner of one server's tools, enforcing what `options` says this side enforces. */
export function toolRunner(options: ToolServerOptions): RunTool {
  return (tool, call) => async (args) => {
    try {
      const scope = TOOL_SCOPES[tool];
      if (options.grantedScopes && !options.grantedScopes.has(scope)) {
        throw ERRORS.insufficientScopeFor(scope, `the MCP tool \`${tool}\``);
      }
      const wholeOrg = WHOLE_ORG_TOOLS[tool];
      if (options.access && wholeOrg) requireEveryPartition(options.access, wholeOrg);
      const result = await call(args);
      return {
        content: [{ type: 'text', text: JSON.stringify(result) }],
        structuredContent: result as Record<string, unknown>,
      };
    } catch (error) {
      return toolError(error, tool, options.onUnexpectedError);
    }
  };
}

/** The annotations of a tool that only reads the organisation's documents. */
export const READS = { readOnlyHint: true, openWorldHint: false } as const;

/**
 * The annotations of a tool that adds (documents, an evaluation, a run); `openWorldHint` when it
 * reaches outside.
 */
export function adds(openWorldHint: boolean) {
  return { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint };
}

/** The fields a problem carries, whichever side produced it (domain ApiError, client DocindexError). */
interface ProblemLike {
  code: string;
  status: number;
  detail: string;
  errors?: { pointer: string; message: string }[];
}

function problemOf(error: unknown): ProblemLike | null {
  if (error instanceof ApiError) {
    return { code: error.code, status: error.status, detail: error.detail, errors: error.extra.errors ?? [] };
  }
  // The client's DocindexError (and anything shaped like it): a code, a status and a detail.
  if (typeof error === 'object' && error !== null) {
    const { code, status, detail, errors } = error as Partial<ProblemLike>;
    if (typeof code === 'string' && typeof status === 'number' && typeof detail === 'string') {
      return { code, status, detail, errors: Array.isArray(errors) ? errors : [] };
    }
  }
  return null;
}

/** `code: detail`, then one line per field error: what a model needs to correct the call. */
function toolError(
  error: unknown,
  tool: string,
  onUnexpectedError: ToolServerOptions['onUnexpectedError'],
): CallToolResult {
  const problem = problemOf(error);
  if (problem === null) {
    onUnexpectedError?.(error, tool);
    return {
      isError: true,
      content: [{ type: 'text', text: 'internal: An unexpected error occurred; it has been logged.' }],
    };
  }
  const lines = [`${problem.code}: ${problem.detail}`];
  for (const field of problem.errors ?? []) lines.push(`  ${field.pointer || '/'}: ${field.message}`);
  return { isError: true, content: [{ type: 'text', text: lines.join('\n') }] };
}
