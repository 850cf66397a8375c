// What every client command shares: the connection flags (--url, --api-key) and the client they
// make, the --filter flags read as one filter, the chunk-settings flags, and the document states.
import { DocindexClient } from '../../client/client.js';
import type { ChunkOptions } from '../../client/options.js';
import type { DocumentStatus, QueryFilter } from '../../client/types.js';
import { CHUNK_OVERLAP, CHUNK_SIZE } from '../../domain/chunk-settings.js';
import { keyValues, type OptionSpec, type Parsed, parseArguments, UsageError, wholeNumber } from '../args.js';
import { SetupError } from '../exit.js';
import type { TerminalIO } from '../render.js';

/** The process's environment: DOCINDEX_URL and DOCINDEX_API_KEY, and what a command reads besides. */
export type Env = Record<string, string | undefined>;

/** A client command: its arguments after the command's name, then the exit code. */
export type ClientCommandRun = (args: string[], env: Env, io: TerminalIO) => Promise<number>;

const DEFAULT_URL = 'http://127.0.0.1:8080';

const CONNECTION_OPTIONS = {
  url: { type: 'string' },
  'api-key': { type: 'string' },
} as const;

/** The command's options and positionals, with --url and --api-key accepted by every command. */
export function parseClientArguments<T extends OptionSpec>(
  args: string[],
  options: T,
): Parsed<typeof CONNECTION_OPTIONS & T> {
  return parseArguments(args, { ...CONNECTION_OPTIONS, ...options });
}

/** A client for the server the flags or the environment name, with the key they give. */
export function connect(
  values: { url?: string | undefined; 'api-key'?: string | undefined },
  env: Env,
): DocindexClient {
  const baseUrl = values.url || env.DOCINDEX_URL || DEFAULT_URL;
  const apiKey = values['api-key'] || env.DOCINDEX_API_KEY;
  if (!apiKey) {
    throw new SetupError(
      'no API key: set DOCINDEX_API_KEY (or pass --api-key). The server prints a key on its first start; `docindex keys create --org ORG_ID` issues another.',
    );
  }
  if (!URL.canParse(baseUrl) || !/^https?:$/.test(new URL(baseUrl).protocol)) {
    throw new SetupError(`the server URL must be http(s)://…, got ${JSON.stringify(baseUrl)}`);
  }
  return new DocindexClient({ baseUrl, apiKey });
}

export const STATUSES: readonly DocumentStatus[] = ['queued', 'processing', 'ready', 'failed'];

/** `--chunk-size` and `--chunk-overlap`, checked against the bounds the server accepts. */
export function chunkOptions(values: { 'chunk-size'?: string; 'chunk-overlap'?: string }): ChunkOptions {
  const chunkSize = wholeNumber(values['chunk-size'], '--chunk-size', CHUNK_SIZE.minimum, CHUNK_SIZE.maximum);
  const chunkOverlap = wholeNumber(
    values['chunk-overlap'],
    '--chunk-overlap',
    CHUNK_OVERLAP.minimum,
    CHUNK_OVERLAP.maximum,
  );
  return {
    ...(chunkSize === undefined ? {} : { chunkSize }),
    ...(chunkOverlap === undefined ? {} : { chunkOverlap }),
  };
}

/**
 * The filter of the --filter flags: each is `key=value` (the key equals the value; one key given
 * several times accepts any of them) or a JSON filter object; all of them must hold. The server
 * checks the language and points at the part it refuses.
 */
export function filterOf(flags: string[] | undefined): QueryFilter | undefined {
  if (flags === undefined || flags.length === 0) return undefined;
  const parts: QueryFilter[] = [];
  const pairs: Record<string, string | string[]> = Object.create(null);
  for (const flag of flags) {
    if (flag.trimStart().startsWith('{')) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(flag);
      } catch {
        throw new UsageError(`--filter ${JSON.stringify(flag)} is not valid JSON`);
      }
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
        throw new UsageError('--filter takes key=value or a JSON object');
      }
      parts.push(parsed as QueryFilter);
      continue;
    }
    for (const [key, value] of keyValues([flag], '--filter')) {
      const previous = Object.hasOwn(pairs, key) ? pairs[key] : undefined;
      pairs[key] =
        previous === undefined ? value : [...(Array.isArray(previous) ? previous : [previous]), value];
    }
  }
  if (Object.keys(pairs).length > 0) parts.unshift(pairs);
  const [only] = parts;
  return parts.length === 1 && only ? only : { $and: parts };
}
