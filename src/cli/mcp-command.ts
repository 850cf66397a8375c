// `docindex mcp`: an MCP server on stdin/stdout for MCP clients (Claude Desktop, editors, agent
// frameworks) that start it as a subprocess. It is a client of a running docindex server, found
// and authenticated like the client commands (DOCINDEX_URL, DOCINDEX_API_KEY or flags). Stdout
// carries only the protocol; the one line for a person goes to stderr.
import type { Readable, Writable } from 'node:stream';
import { serveStdio } from '../mcp/stdio.js';
import { TOOL_NAMES } from '../mcp/tools.js';
import { parseArguments } from './args.js';
import { connect } from './client-commands/shared.js';
import { reportFailure } from './exit.js';
import type { TerminalIO } from './render.js';

export const MCP_USAGE = `MCP (for MCP clients such as Claude Desktop; the same DOCINDEX_URL and DOCINDEX_API_KEY):
  docindex mcp [--url URL] [--api-key KEY]
                                   serve the tools ${TOOL_NAMES.join(', ')} over stdio
                                   (the server also serves them over HTTP at /mcp)`;

export interface McpCommandIO {
  /** The protocol's streams. */
  stdin: Readable;
  stdout: Writable;
  stderr: TerminalIO['stderr'];
}

export async function runMcpCommand(
  args: string[],
  env: Record<string, string | undefined>,
  io: McpCommandIO,
  version: string,
): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    io.stdout.write(`${MCP_USAGE}\n`);
    return 0;
  }
  try {
    const { values } = parseArguments(args, { url: { type: 'string' }, 'api-key': { type: 'string' } }, 0);
    const client = connect(values, env);
    io.stderr.write(
      `docindex mcp: serving MCP over stdio for ${client.baseUrl}; an MCP client starts this command (docs/CLIENTS.md, "MCP")\n`,
    );
    await serveStdio(client, { stdin: io.stdin, stdout: io.stdout }, version);
    return 0;
  } catch (error) {
    return reportFailure(error, { name: 'docindex mcp', stderr: io.stderr });
  }
}
