// The `docindex` command line: help, then the client commands (which need nothing but a server's
// URL and key), then the models commands (which need MODELS_DIR and the Hub's address from the
// configuration) and the admin commands (which need the server's configuration, opened by the
// composition root only when one of them runs). Every failure goes through exit.ts.
import type { Readable, Writable } from 'node:stream';
import { ADMIN_COMMANDS, ADMIN_USAGE, runAdminCommand, type ServerSide } from './admin-commands.js';
import { didYouMean } from './args.js';
import { CLIENT_COMMANDS, CLIENT_USAGE, isClientCommand, runClientCommand } from './client-commands.js';
import { EXIT_USAGE, HELP, reportFailure } from './exit.js';
import { MCP_USAGE, runMcpCommand } from './mcp-command.js';
import { MODELS_USAGE, type ModelSettings, runModelsCommand } from './models-command.js';
import type { TerminalIO } from './render.js';

export const USAGE = `docindex — document ingestion, indexing and retrieval

${ADMIN_USAGE}

${CLIENT_USAGE}

${MCP_USAGE}

${MODELS_USAGE}

Configuration is read from the environment; see docs/CONFIGURATION.md.`;

/** Every command `docindex` knows, for the nearest one to a mistyped name. */
const COMMANDS: readonly string[] = [...ADMIN_COMMANDS, ...CLIENT_COMMANDS, 'mcp', 'models', 'help'];

export interface CommandLineDeps {
  /** The service's version, which `docindex mcp` shows its MCP client. */
  version: string;
  /** The client commands' DOCINDEX_URL and DOCINDEX_API_KEY; the admin commands' DOCINDEX_ADMIN_TOKEN. */
  env: Record<string, string | undefined>;
  io: TerminalIO;
  /** The streams `docindex mcp` speaks the protocol on; the process's stdin and stdout by default. */
  stdio?: { stdin: Readable; stdout: Writable };
  /** Reads the server's configuration (a ConfigError when it is invalid). */
  openServer(): Promise<ServerSide>;
  /** MODELS_DIR, HF_ENDPOINT and HF_TOKEN from the configuration (a ConfigError when it is invalid). */
  modelSettings(): ModelSettings;
}

export async function runCommandLine(argv: string[], deps: CommandLineDeps): Promise<number> {
  const [command, ...rest] = argv;
  const { io } = deps;
  if (!command || command === 'help' || command === '--help' || command === '-h') {
    io.stdout.write(`${USAGE}\n`);
    return command ? 0 : 1;
  }
  if (!COMMANDS.includes(command)) {
    const hint = didYouMean(command, COMMANDS, (name) => JSON.stringify(name));
    io.stderr.write(`docindex: unknown command ${JSON.stringify(command)}${hint} (see ${HELP})\n`);
    return EXIT_USAGE;
  }
  if (isClientCommand(command)) return runClientCommand(command, rest, deps.env, io);
  if (command === 'mcp') {
    const stdio = deps.stdio ?? { stdin: process.stdin, stdout: process.stdout };
    return runMcpCommand(rest, deps.env, { ...stdio, stderr: io.stderr }, deps.version);
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    io.stdout.write(`${USAGE}\n`);
    return 0;
  }
  try {
    if (command === 'models') return await runModelsCommand(rest, () => deps.modelSettings(), io);
    return await runAdminCommand(command, rest, () => deps.openServer(), deps.env, io);
  } catch (error) {
    return reportFailure(error, { name: 'docindex', stderr: io.stderr });
  }
}
