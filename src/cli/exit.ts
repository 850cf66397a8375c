// The one mapping from an error to what the user sees and the exit code, told apart by class and
// code, never by message text: 2 when the command cannot run as typed or configured (usage,
// setup, configuration), 1 when it ran and the server or the data said no. Anything else is a
// bug: it is rethrown, and bin/docindex.js prints its stack and exits 1.
import { DocindexError } from '../client/errors.js';
import { ConfigError } from '../config/index.js';
import { ApiError } from '../domain/errors.js';
import { UsageError } from './args.js';
import { ModelPullError } from './models/errors.js';

export const EXIT_OK = 0;
/** The command ran and something failed: a document, a request, an unknown id. */
export const EXIT_FAILED = 1;
/** The command could not run: wrong arguments, missing setup, invalid configuration. */
export const EXIT_USAGE = 2;

/** Where every command and option is listed. */
export const HELP = 'docindex --help';

/** Something to set up before the command can run (no key, bad URL): the message alone, exit 2. */
export class SetupError extends Error {
  override readonly name = 'SetupError';
}

interface Failure {
  exitCode: number;
  message: string;
  /** Start the message with the command's name (`docindex ingest: …`). */
  named: boolean;
}

function failureOf(error: unknown): Failure | null {
  if (error instanceof UsageError) {
    return { exitCode: EXIT_USAGE, message: `${error.message} (see ${HELP})`, named: true };
  }
  if (error instanceof SetupError) {
    return { exitCode: EXIT_USAGE, message: error.message, named: true };
  }
  // The message lists every bad variable under its own heading.
  if (error instanceof ConfigError) {
    return { exitCode: EXIT_USAGE, message: error.message, named: false };
  }
  if (error instanceof DocindexError) {
    return { exitCode: EXIT_FAILED, message: describeClientError(error), named: true };
  }
  // `docindex models`: a token or MODELS_DIR to fix is setup; the Hub, network or disk saying no is a failure.
  if (error instanceof ModelPullError) {
    return {
      exitCode: error.setup ? EXIT_USAGE : EXIT_FAILED,
      message: error.message,
      named: true,
    };
  }
  // An unknown organisation or key (admin commands) is the user's to fix.
  if (error instanceof ApiError && error.code === 'not_found') {
    return { exitCode: EXIT_FAILED, message: error.message, named: true };
  }
  return null;
}

/** Writes what the user should see about `error` to `stderr` and returns the exit code; rethrows a bug. */
export function reportFailure(
  error: unknown,
  context: { name: string; stderr: NodeJS.WritableStream },
): number {
  const failure = failureOf(error);
  if (failure === null) throw error;
  context.stderr.write(`${failure.named ? `${context.name}: ` : ''}${failure.message}\n`);
  return failure.exitCode;
}

/** A failed API call as the user reads it: the detail, per-field problems, status, code and request id. */
export function describeClientError(error: DocindexError): string {
  const lines = [error.detail];
  for (const field of error.errors) lines.push(`  ${field.pointer || '/'}: ${field.message}`);
  const context = [error.status ? String(error.status) : null, error.code, error.requestId]
    .filter((part) => part)
    .join(', ');
  let text = `${lines.join('\n')}${context ? ` (${context})` : ''}`;
  if (error.code === 'network_error') text += '\nIs the server running? Set DOCINDEX_URL or pass --url.';
  if (error.code === 'unauthorized') text += '\nCheck DOCINDEX_API_KEY (or --api-key).';
  return text;
}
