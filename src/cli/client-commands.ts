// The `docindex` client commands (ingest, update, reprocess, status, ls, rm, chunks, cat, query,
// eval, usage, webhooks, sources): they talk to a running server over HTTP with DocindexClient,
// configured by DOCINDEX_URL / DOCINDEX_API_KEY or flags. This is their table, their help and the
// one place their failures are reported; each command is a module of client-commands/.
// Results go to stdout (`--json`: the API's JSON body); progress and problems go to stderr.
import { CHUNK_OVERLAP, CHUNK_SIZE } from '../domain/chunk-settings.js';
import { ADVERTISED_EXTENSIONS } from '../domain/formats.js';
import { catCommand, chunksCommand } from './client-commands/content.js';
import { EVAL_USAGE, evalCommand } from './client-commands/eval.js';
import { ingestCommand } from './client-commands/ingest.js';
import { listCommand } from './client-commands/list.js';
import { queryCommand } from './client-commands/query.js';
import { removeCommand } from './client-commands/remove.js';
import type { ClientCommandRun, Env } from './client-commands/shared.js';
import { SOURCES_USAGE, sourcesCommand } from './client-commands/sources.js';
import { statusCommand } from './client-commands/status.js';
import { usageCommand } from './client-commands/usage.js';
import { reprocessCommand, updateCommand } from './client-commands/versions.js';
import { WEBHOOKS_USAGE, webhooksCommand } from './client-commands/webhooks.js';
import { reportFailure } from './exit.js';
import type { TerminalIO } from './render.js';

/** Every client command by name, in the order `docindex --help` lists them. */
const RUNS = {
  ingest: ingestCommand,
  update: updateCommand,
  reprocess: reprocessCommand,
  status: statusCommand,
  ls: listCommand,
  rm: removeCommand,
  chunks: chunksCommand,
  cat: catCommand,
  query: queryCommand,
  eval: evalCommand,
  usage: usageCommand,
  webhooks: webhooksCommand,
  sources: sourcesCommand,
} as const satisfies Record<string, ClientCommandRun>;

export type ClientCommand = keyof typeof RUNS;
export const CLIENT_COMMANDS = Object.keys(RUNS) as readonly ClientCommand[];

export const CLIENT_USAGE = `Client (talks to a running server; DOCINDEX_URL, default http://127.0.0.1:8080, and
DOCINDEX_API_KEY, or --url URL and --api-key KEY on any client command):
  docindex ingest <files|folders|urls…> [--metadata k=v …] [--chunk-size N] [--chunk-overlap N] [--wait]
                                   upload files (folders are searched for ${ADVERTISED_EXTENSIONS.join(' ')}),
                                   queue URLs; --wait follows them to ready or failed;
                                   --chunk-size N: tokens per chunk, ${CHUNK_SIZE.minimum} to ${CHUNK_SIZE.maximum} (default ${CHUNK_SIZE.default});
                                   --chunk-overlap N: tokens two chunks share, ${CHUNK_OVERLAP.minimum} to ${CHUNK_OVERLAP.maximum},
                                   less than the chunk size (default ${CHUNK_OVERLAP.default})
  docindex ingest <file|url> --external-id ID [--metadata k=v …] [--wait]
                                   with your own key for it: sent again, it becomes a new version
  docindex ingest … --partition NAME
                                   into that partition of the organisation (default: default)
  docindex ingest … --access PRINCIPAL …
                                   with an access list (repeatable, e.g. --access group:eng): only
                                   requests acting for one of them (or for none) see the documents
  docindex update <id> (--text T | --file PATH | --url URL) [--json]
                                   new content for a document, as a new version (the current one
                                   answers queries until it is ready)
  docindex reprocess <id> [--chunk-size N] [--chunk-overlap N] [--json]
                                   process a document again from its text or original file
                                   (chunk settings as for ingest; the document's by default)
  docindex status <id…> [--principal P …] [--json]
                                   processing status of documents
  docindex ls [--status S] [--filter F …] [--partition NAME …] [--principal P …] [--limit N] [--cursor C] [--json]
  docindex rm <id…>                delete documents
  docindex rm --filter F … [<id…>] [--json]
                                   delete every document that passes the filter (and is among the ids)
  docindex chunks <id> [--json]    the chunks a ready document was indexed as, in order
  docindex cat <id>                the text a ready document was indexed from
  docindex cat <id> --original [--output PATH]
                                   the file it was uploaded as or downloaded from (to PATH, or stdout)
  docindex query "text" [--mode keyword|semantic|hybrid] [--top-k N] [--filter F …] [--document-id ID …]
                [--partition NAME …] [--principal P …] [--rerank | --no-rerank] [--rerank-candidates N] [--json]
                                   reranking (the server's RERANK) is on by default when it has a reranker;
                                   --principal (repeatable, on status, ls and query too) acts for those
                                   principals: only documents without an access list or naming one of them
  A filter F is k=v, or a JSON filter such as '{"year": {"$gte": "2020"}, "lang": {"$in": ["en", "de"]}}'
  (operators $eq $ne $gt $gte $lt $lte $in $nin $exists $and $or $not); several must all hold.
${EVAL_USAGE}
  docindex usage [--partition NAME] [--json]
                                   queries per day over 30 days, totals by partition and the
                                   rate limit; with --partition, that partition's only
${WEBHOOKS_USAGE}
${SOURCES_USAGE}`;

export function isClientCommand(command: string): command is ClientCommand {
  return Object.hasOwn(RUNS, command);
}

export async function runClientCommand(
  command: ClientCommand,
  args: string[],
  env: Env,
  io: TerminalIO = { stdout: process.stdout, stderr: process.stderr },
): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    io.stdout.write(`${CLIENT_USAGE}\n`);
    return 0;
  }
  try {
    return await RUNS[command](args, env, io);
  } catch (error) {
    return reportFailure(error, { name: `docindex ${command}`, stderr: io.stderr });
  }
}
