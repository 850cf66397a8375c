// The `docindex` client commands (ingest, status, ls, rm, chunks, query, eval, usage, webhooks, sources): they talk to a running
// server over HTTP with DocindexClient, configured by DOCINDEX_URL / DOCINDEX_API_KEY or flags.
// Results go to stdout (`--json`: the API's JSON body); progress and problems go to stderr.
import { readdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { type ChunkOptions, DocindexClient, type WaitProgress } from '../client/client.js';
import { DocindexError, WaitTimeoutError } from '../client/errors.js';
import type {
  ChunkPage,
  DocumentRecord,
  DocumentStatus,
  Metadata,
  QueryFilter,
  VersionAck,
} from '../client/types.js';
import { CHUNK_OVERLAP, CHUNK_SIZE } from '../domain/chunk-settings.js';
import { ADVERTISED_EXTENSIONS, listInProse } from '../domain/formats.js';
import {
  keyValues,
  type OptionSpec,
  parseArguments,
  principalFlags,
  UsageError,
  wholeNumber,
} from './args.js';
import { EVAL_USAGE, evalCommand } from './eval-command.js';
import { reportFailure, SetupError } from './exit.js';
import {
  bar,
  documentName,
  ProgressLine,
  renderDocumentTable,
  renderQueryResults,
  renderUsage,
  type TerminalIO,
} from './render.js';
import { SOURCES_USAGE, sourcesCommand } from './source-commands.js';
import { WEBHOOKS_USAGE, webhooksCommand } from './webhook-commands.js';

export const CLIENT_COMMANDS = [
  'ingest',
  'update',
  'reprocess',
  'status',
  'ls',
  'rm',
  'chunks',
  'cat',
  'query',
  'eval',
  'usage',
  'webhooks',
  'sources',
] as const;
export type ClientCommand = (typeof CLIENT_COMMANDS)[number];

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

const DEFAULT_URL = 'http://127.0.0.1:8080';
const UPLOAD_CONCURRENCY = 4;
const SUPPORTED_EXTENSIONS: ReadonlySet<string> = new Set(ADVERTISED_EXTENSIONS);
/** ".pdf, .docx, .txt, .md, .html or .htm", for messages about what a folder held. */
const SUPPORTED_LIST = listInProse(ADVERTISED_EXTENSIONS);
const STATUSES: readonly DocumentStatus[] = ['queued', 'processing', 'ready', 'failed'];

export function isClientCommand(command: string): command is ClientCommand {
  return (CLIENT_COMMANDS as readonly string[]).includes(command);
}

export async function runClientCommand(
  command: ClientCommand,
  args: string[],
  env: Record<string, string | undefined>,
  io: TerminalIO = { stdout: process.stdout, stderr: process.stderr },
): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    io.stdout.write(`${CLIENT_USAGE}\n`);
    return 0;
  }
  try {
    switch (command) {
      case 'ingest':
        return await ingestCommand(args, env, io);
      case 'update':
        return await updateCommand(args, env, io);
      case 'reprocess':
        return await reprocessCommand(args, env, io);
      case 'status':
        return await statusCommand(args, env, io);
      case 'ls':
        return await listCommand(args, env, io);
      case 'rm':
        return await removeCommand(args, env, io);
      case 'chunks':
        return await chunksCommand(args, env, io);
      case 'cat':
        return await catCommand(args, env, io);
      case 'query':
        return await queryCommand(args, env, io);
      case 'eval':
        return await evalCommand(args, (values) => connect(values, env), io);
      case 'usage':
        return await usageCommand(args, env, io);
      case 'webhooks':
        return await webhooksCommand(args, (values) => connect(values, env), io);
      case 'sources':
        return await sourcesCommand(args, (values) => connect(values, env), env, io);
    }
  } catch (error) {
    return reportFailure(error, { name: `docindex ${command}`, stderr: io.stderr });
  }
}

// ---------------------------------------------------------------------------------------------
// Options shared by every client command

const CONNECTION_OPTIONS = {
  url: { type: 'string' },
  'api-key': { type: 'string' },
} as const;

function parse<T extends OptionSpec>(args: string[], options: T) {
  return parseArguments(args, { ...CONNECTION_OPTIONS, ...options });
}

export function connect(
  values: { url?: string | undefined; 'api-key'?: string | undefined },
  env: Record<string, string | undefined>,
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

// ---------------------------------------------------------------------------------------------
// docindex ingest

type ItemState = 'waiting' | 'uploading' | DocumentStatus;

interface IngestItem {
  label: string;
  source: { kind: 'file'; path: string } | { kind: 'url'; url: string } | { kind: 'missing'; reason: string };
  state: ItemState;
  documentId: string | null;
  reason: string | null;
}

async function ingestCommand(args: string[], env: Record<string, string | undefined>, io: TerminalIO) {
  const { values, positionals } = parse(args, {
    metadata: { type: 'string', multiple: true },
    'chunk-size': { type: 'string' },
    'chunk-overlap': { type: 'string' },
    'external-id': { type: 'string' },
    partition: { type: 'string' },
    access: { type: 'string', multiple: true },
    wait: { type: 'boolean' },
  });
  if (positionals.length === 0) throw new UsageError('ingest needs at least one file, folder or URL');
  const externalId = values['external-id'];
  if (externalId !== undefined && positionals.length !== 1) {
    throw new UsageError('--external-id names one document: give exactly one file or URL with it');
  }
  const metadata: Metadata = Object.fromEntries(keyValues(values.metadata, '--metadata'));
  const chunks = chunkOptions(values);
  const client = connect(values, env);

  const items = await collectItems(positionals, io);
  if (externalId !== undefined && items.length > 1) {
    throw new UsageError('--external-id names one document: give a file, not a folder');
  }
  if (items.length === 0) {
    io.stderr.write(`docindex ingest: nothing to ingest (no ${SUPPORTED_LIST} files found)\n`);
    return 1;
  }
  const progress = new ProgressLine(io.stderr);
  const render = () => progress.update(ingestProgressText(items, values.wait === true));
  render();

  await forEachConcurrently(items, UPLOAD_CONCURRENCY, async (item) => {
    if (item.source.kind === 'missing') return;
    item.state = 'uploading';
    render();
    try {
      const ack = await uploadItem(client, item.source, metadata, {
        ...chunks,
        ...(externalId === undefined ? {} : { externalId }),
        ...(values.partition === undefined ? {} : { partition: values.partition }),
        ...(values.access === undefined ? {} : { access: principalFlags(values.access, '--access') }),
      });
      item.documentId = ack.document_ids[0] ?? null;
      item.state = 'queued';
    } catch (error) {
      if (!(error instanceof DocindexError)) throw error;
      item.state = 'failed';
      item.reason = `${error.code}: ${error.detail}`;
    } finally {
      render();
    }
  });

  const accepted = items.filter((item) => item.documentId !== null);
  let timedOut = false;
  if (values.wait && accepted.length > 0) {
    const byId = new Map(accepted.map((item) => [item.documentId!, item]));
    const apply = (docs: DocumentRecord[]) => {
      for (const doc of docs) {
        const item = byId.get(doc.id);
        if (!item) continue;
        item.state = doc.status;
        item.reason = doc.error ? `${doc.error.code}: ${doc.error.message}` : null;
      }
    };
    try {
      apply(
        await client.waitForDocuments([...byId.keys()], {
          onProgress: (update: WaitProgress) => {
            apply(update.documents);
            render();
          },
        }),
      );
    } catch (error) {
      if (error instanceof WaitTimeoutError) {
        apply(error.documents);
        timedOut = true;
      } else if (error instanceof DocindexError && error.code === 'not_found') {
        io.stderr.write(`docindex ingest: ${error.detail}\n`);
      } else {
        progress.done();
        throw error;
      }
    }
  }
  progress.done();

  io.stdout.write(renderIngestSummary(items, values.wait === true, timedOut));
  return items.some((item) => item.state === 'failed') || timedOut ? 1 : 0;
}

async function collectItems(targets: string[], io: TerminalIO): Promise<IngestItem[]> {
  const items: IngestItem[] = [];
  const seen = new Set<string>();
  const add = (label: string, source: IngestItem['source']) => {
    const key = source.kind === 'url' ? source.url : label;
    if (seen.has(key)) return;
    seen.add(key);
    const missing = source.kind === 'missing';
    items.push({
      label,
      source,
      state: missing ? 'failed' : 'waiting',
      documentId: null,
      reason: missing ? source.reason : null,
    });
  };
  for (const target of targets) {
    if (/^https?:\/\//i.test(target)) {
      add(target, { kind: 'url', url: target });
      continue;
    }
    let info: Awaited<ReturnType<typeof stat>>;
    try {
      info = await stat(target);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      add(target, {
        kind: 'missing',
        reason: code === 'ENOENT' ? 'not_found: no such file or directory' : `unreadable: ${code ?? error}`,
      });
      continue;
    }
    if (info.isDirectory()) {
      const files = await walkFolder(target);
      if (files.length === 0) io.stderr.write(`note: no ${SUPPORTED_LIST} files in ${target}\n`);
      for (const file of files) add(file, { kind: 'file', path: file });
    } else {
      // A file named explicitly is sent whatever its extension: the server decides and says why.
      add(target, { kind: 'file', path: target });
    }
  }
  return items;
}

/** Supported files under `folder`, sorted; hidden entries and symlinked folders are skipped. */
async function walkFolder(folder: string): Promise<string[]> {
  const found: string[] = [];
  const entries = await readdir(folder, { withFileTypes: true });
  entries.sort((a, b) => a.name.localeCompare(b.name));
  for (const entry of entries) {
    if (entry.name.startsWith('.')) continue;
    const full = path.join(folder, entry.name);
    if (entry.isDirectory()) {
      found.push(...(await walkFolder(full)));
    } else if (SUPPORTED_EXTENSIONS.has(extensionOf(entry.name))) {
      if (entry.isFile() || (entry.isSymbolicLink() && (await stat(full).catch(() => null))?.isFile())) {
        found.push(full);
      }
    }
  }
  return found;
}

function uploadItem(
  client: DocindexClient,
  source: { kind: 'file'; path: string } | { kind: 'url'; url: string },
  metadata: Metadata,
  options: ChunkOptions & { externalId?: string; partition?: string; access?: string[] },
) {
  if (source.kind === 'url') return client.ingestUrl(source.url, metadata, options);
  return client.ingestFile(source.path, { metadata, ...options });
}

/** `--chunk-size` and `--chunk-overlap`, checked against the bounds the server accepts. */
function chunkOptions(values: { 'chunk-size'?: string; 'chunk-overlap'?: string }): ChunkOptions {
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

// ---------------------------------------------------------------------------------------------
// docindex update, docindex reprocess

async function updateCommand(args: string[], env: Record<string, string | undefined>, io: TerminalIO) {
  const { values, positionals } = parse(args, {
    text: { type: 'string' },
    file: { type: 'string' },
    url: { type: 'string' },
    json: { type: 'boolean' },
  });
  if (positionals.length !== 1) throw new UsageError('update needs exactly one document id');
  const given = (['text', 'file', 'url'] as const).filter((name) => values[name] !== undefined);
  if (given.length !== 1) throw new UsageError('update needs exactly one of --text, --file and --url');
  const client = connect(values, env);
  const content =
    values.text !== undefined
      ? { text: values.text }
      : values.file !== undefined
        ? { file: values.file }
        : { url: values.url as string };
  const ack = await client.replaceContent(positionals[0]!, content);
  return printVersionAck(ack, values.json === true, io);
}

async function reprocessCommand(args: string[], env: Record<string, string | undefined>, io: TerminalIO) {
  const { values, positionals } = parse(args, {
    'chunk-size': { type: 'string' },
    'chunk-overlap': { type: 'string' },
    json: { type: 'boolean' },
  });
  if (positionals.length !== 1) throw new UsageError('reprocess needs exactly one document id');
  const chunks = chunkOptions(values);
  const client = connect(values, env);
  const ack = await client.reprocessDocument(positionals[0]!, chunks);
  return printVersionAck(ack, values.json === true, io);
}

function printVersionAck(ack: VersionAck, json: boolean, io: TerminalIO): number {
  io.stdout.write(
    json
      ? `${JSON.stringify(ack)}\n`
      : `${ack.document_id}: version ${ack.version} queued (the current version answers until it is ready)\n`,
  );
  return 0;
}

function ingestProgressText(items: IngestItem[], waiting: boolean): string {
  const count = (...states: ItemState[]) => items.filter((item) => states.includes(item.state)).length;
  const total = items.length;
  const uploaded = items.filter((item) => item.documentId !== null).length;
  const failed = count('failed');
  const finished = waiting ? count('ready', 'failed') : uploaded + failed;
  return `${bar(finished / total, 16)} ${finished}/${total} · uploaded ${uploaded} · processing ${count('queued', 'processing')} · ready ${count('ready')} · failed ${failed}`;
}

function renderIngestSummary(items: IngestItem[], waited: boolean, timedOut: boolean): string {
  const lines: string[] = [];
  const width = Math.max(...items.map((item) => item.state.length), 6);
  for (const item of items) {
    lines.push(`${item.state.padEnd(width)}  ${(item.documentId ?? '-').padEnd(36)}  ${item.label}`);
  }
  const tally = STATUSES.map(
    (status) => [status, items.filter((item) => item.state === status).length] as const,
  )
    .filter(([, n]) => n > 0)
    .map(([status, n]) => `${n} ${status}`);
  lines.push('', `${items.length} item${items.length === 1 ? '' : 's'}: ${tally.join(', ')}`);
  const failures = items.filter((item) => item.state === 'failed');
  if (failures.length > 0) {
    lines.push('', 'Failed:');
    for (const item of failures) lines.push(`  ${item.label}: ${item.reason ?? 'failed'}`);
  }
  const pending = items.filter((item) => item.state === 'queued' || item.state === 'processing');
  if (pending.length > 0) {
    lines.push(
      '',
      timedOut
        ? 'Gave up waiting; still pending: follow with `docindex status <id…>`.'
        : waited
          ? ''
          : 'Queued for processing: follow with `docindex status <id…>`, or use --wait next time.',
    );
  }
  return `${lines.join('\n').trimEnd()}\n`;
}

// ---------------------------------------------------------------------------------------------
// docindex status / ls / rm

async function statusCommand(args: string[], env: Record<string, string | undefined>, io: TerminalIO) {
  const { values, positionals } = parse(args, {
    principal: { type: 'string', multiple: true },
    json: { type: 'boolean' },
  });
  if (positionals.length === 0) throw new UsageError('status needs at least one document id');
  const principals = values.principal ? { principals: principalFlags(values.principal, '--principal') } : {};
  const client = connect(values, env);
  const ids = [...new Set(positionals)];
  const found = new Map<string, DocumentRecord>();
  for (let i = 0; i < ids.length; i += 100) {
    const page = await client.listDocuments({ ids: ids.slice(i, i + 100), limit: 100, ...principals });
    if (values.json) io.stdout.write(`${JSON.stringify(page)}\n`);
    for (const doc of page.documents) found.set(doc.id, doc);
  }
  const missing = ids.filter((id) => !found.has(id));
  if (!values.json) {
    const docs = ids.flatMap((id) => (found.has(id) ? [found.get(id)!] : []));
    if (docs.length > 0) io.stdout.write(renderDocumentTable(docs));
  }
  for (const id of missing) io.stderr.write(`docindex status: no document with id ${id}\n`);
  return missing.length > 0 ? 1 : 0;
}

async function listCommand(args: string[], env: Record<string, string | undefined>, io: TerminalIO) {
  const { values } = parse(args, {
    status: { type: 'string' },
    filter: { type: 'string', multiple: true },
    partition: { type: 'string', multiple: true },
    principal: { type: 'string', multiple: true },
    limit: { type: 'string' },
    cursor: { type: 'string' },
    json: { type: 'boolean' },
  });
  const filter = filterOf(values.filter);
  const status = values.status;
  if (status !== undefined && !STATUSES.includes(status as DocumentStatus)) {
    throw new UsageError(`--status must be one of ${STATUSES.join(', ')}`);
  }
  const limit = wholeNumber(values.limit, '--limit', 1, 1_000_000) ?? 20;
  const client = connect(values, env);
  const docs: DocumentRecord[] = [];
  let cursor = values.cursor;
  do {
    const page = await client.listDocuments({
      limit: Math.min(100, limit - docs.length),
      ...(cursor === undefined ? {} : { cursor }),
      ...(status === undefined ? {} : { status: status as DocumentStatus }),
      ...(filter === undefined ? {} : { filter }),
      ...(values.partition ? { partitions: values.partition } : {}),
      ...(values.principal ? { principals: principalFlags(values.principal, '--principal') } : {}),
    });
    if (values.json) io.stdout.write(`${JSON.stringify(page)}\n`);
    docs.push(...page.documents);
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined && docs.length < limit);
  if (values.json) return 0;
  if (docs.length === 0) {
    io.stderr.write(
      filter !== undefined
        ? 'no documents pass the filter\n'
        : status
          ? `no ${status} documents\n`
          : 'no documents yet: try `docindex ingest <file>`\n',
    );
    return 0;
  }
  io.stdout.write(renderDocumentTable(docs));
  if (cursor !== undefined) io.stderr.write(`more: docindex ls --cursor ${cursor}\n`);
  return 0;
}

/** A document's extracted text, or with --original its original file (to --output or stdout). */
async function catCommand(args: string[], env: Record<string, string | undefined>, io: TerminalIO) {
  const { values, positionals } = parse(args, {
    original: { type: 'boolean' },
    output: { type: 'string', short: 'o' },
  });
  if (positionals.length !== 1) throw new UsageError('cat needs exactly one document id');
  if (values.output !== undefined && !values.original) {
    throw new UsageError('--output goes with --original (the text goes to stdout: redirect it)');
  }
  const client = connect(values, env);
  if (!values.original) {
    io.stdout.write(await client.getDocumentContent(positionals[0]!));
    return 0;
  }
  const file = await client.getDocumentFile(positionals[0]!);
  if (values.output === undefined) {
    io.stdout.write(file.data);
    return 0;
  }
  await writeFile(values.output, file.data);
  io.stderr.write(
    `${file.filename ?? positionals[0]} (${file.contentType}, ${file.data.length} bytes) → ${values.output}\n`,
  );
  return 0;
}

/** Every chunk of one ready document, following the cursor (`--json`: the array the API pages). */
async function chunksCommand(args: string[], env: Record<string, string | undefined>, io: TerminalIO) {
  const { values, positionals } = parse(args, { json: { type: 'boolean' } });
  if (positionals.length !== 1) throw new UsageError('chunks needs exactly one document id');
  const client = connect(values, env);
  const chunks: ChunkPage['chunks'] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listChunks(positionals[0]!, { limit: 100, ...(cursor ? { cursor } : {}) });
    chunks.push(...page.chunks);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  if (values.json) {
    io.stdout.write(`${JSON.stringify(chunks, null, 2)}\n`);
    return 0;
  }
  for (const chunk of chunks) {
    const pages =
      chunk.page_start === null
        ? ''
        : chunk.page_start === chunk.page_end
          ? `, page ${chunk.page_start}`
          : `, pages ${chunk.page_start}–${chunk.page_end}`;
    io.stdout.write(`── chunk ${chunk.index} (${chunk.token_count} tokens${pages})\n${chunk.text}\n`);
  }
  return 0;
}

async function removeCommand(args: string[], env: Record<string, string | undefined>, io: TerminalIO) {
  const { values, positionals } = parse(args, {
    filter: { type: 'string', multiple: true },
    json: { type: 'boolean' },
  });
  const filter = filterOf(values.filter);
  if (filter !== undefined) return removeByFilter(filter, positionals, values, env, io);
  if (positionals.length === 0) throw new UsageError('rm needs at least one document id, or --filter');
  const client = connect(values, env);
  let failed = 0;
  for (const id of new Set(positionals)) {
    try {
      await client.deleteDocument(id);
      io.stdout.write(`deleted ${id}\n`);
    } catch (error) {
      if (!(error instanceof DocindexError) || error.status === 0 || error.status === 401) throw error;
      failed += 1;
      io.stderr.write(`docindex rm: ${id}: ${error.detail}\n`);
    }
  }
  return failed > 0 ? 1 : 0;
}

/**
 * `rm --filter`: deletes what the filter selects (among the ids, when given), repeating the
 * request while the server says more match. `--json` prints each answer.
 */
async function removeByFilter(
  filter: QueryFilter,
  ids: string[],
  values: { json?: boolean | undefined; url?: string | undefined; 'api-key'?: string | undefined },
  env: Record<string, string | undefined>,
  io: TerminalIO,
): Promise<number> {
  const client = connect(values, env);
  const unique = [...new Set(ids)];
  const batches = unique.length === 0 ? [undefined] : chunked(unique, MAX_DELETE_IDS);
  let deleted = 0;
  for (const documentIds of batches) {
    for (;;) {
      const answer = await client.deleteDocuments({ filter, ...(documentIds ? { documentIds } : {}) });
      if (values.json) io.stdout.write(`${JSON.stringify(answer)}\n`);
      deleted += answer.deleted;
      if (!answer.has_more) break;
    }
  }
  if (!values.json) io.stdout.write(`deleted ${deleted} document${deleted === 1 ? '' : 's'}\n`);
  return 0;
}

/** Most ids one delete request may name (the API's limit). */
const MAX_DELETE_IDS = 1000;

function chunked<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * The filter of the --filter flags: each is `key=value` (the key equals the value; one key given
 * several times accepts any of them) or a JSON filter object; all of them must hold. The server
 * checks the language and points at the part it refuses.
 */
function filterOf(flags: string[] | undefined): QueryFilter | undefined {
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

// ---------------------------------------------------------------------------------------------
// docindex query

async function queryCommand(args: string[], env: Record<string, string | undefined>, io: TerminalIO) {
  const { values, positionals } = parse(args, {
    'top-k': { type: 'string' },
    mode: { type: 'string' },
    filter: { type: 'string', multiple: true },
    'document-id': { type: 'string', multiple: true },
    partition: { type: 'string', multiple: true },
    principal: { type: 'string', multiple: true },
    rerank: { type: 'boolean' },
    'no-rerank': { type: 'boolean' },
    'rerank-candidates': { type: 'string' },
    json: { type: 'boolean' },
  });
  if (positionals.length === 0) throw new UsageError('query needs the text to search for');
  if (values.rerank && values['no-rerank'])
    throw new UsageError('--rerank and --no-rerank contradict each other');
  const rerank = values.rerank ? true : values['no-rerank'] ? false : undefined;
  const rerankCandidates = wholeNumber(values['rerank-candidates'], '--rerank-candidates', 1, 200);
  const mode = values.mode;
  if (mode !== undefined && mode !== 'keyword' && mode !== 'semantic' && mode !== 'hybrid') {
    throw new UsageError(`--mode must be keyword, semantic or hybrid, not "${mode}"`);
  }
  const filter = filterOf(values.filter);
  const topK = wholeNumber(values['top-k'], '--top-k', 1, 100);
  const client = connect(values, env);
  const answer = await client.query({
    query: positionals.join(' '),
    ...(topK === undefined ? {} : { topK }),
    ...(mode === undefined ? {} : { mode }),
    ...(filter === undefined ? {} : { filter }),
    ...(values['document-id'] ? { documentIds: values['document-id'] } : {}),
    ...(values.partition ? { partitions: values.partition } : {}),
    ...(values.principal ? { principals: principalFlags(values.principal, '--principal') } : {}),
    ...(rerank === undefined ? {} : { rerank }),
    ...(rerankCandidates === undefined ? {} : { rerankCandidates }),
  });
  if (values.json) {
    io.stdout.write(`${JSON.stringify(answer)}\n`);
    return 0;
  }
  if (answer.degraded_reasons.includes('embeddings_unavailable')) {
    io.stderr.write('the embedding provider is unavailable: keyword results only\n');
  }
  if (answer.degraded_reasons.includes('rerank_unavailable')) {
    io.stderr.write('the reranker is unavailable: results in first-stage order\n');
  }
  if (answer.results.length === 0) {
    io.stderr.write('no matching chunks\n');
    return 0;
  }
  // One batch-status request names the documents the chunks come from; ids will do without it.
  const names = new Map<string, string>();
  const docIds = [...new Set(answer.results.map((hit) => hit.document_id))];
  try {
    for (const doc of await client.getDocuments(docIds)) names.set(doc.id, documentName(doc));
  } catch (error) {
    if (!(error instanceof DocindexError)) throw error;
  }
  const width = Math.min(Math.max((io.stdout.columns ?? 100) - 1, 40), 120);
  io.stdout.write(renderQueryResults(answer.results, names, width));
  return 0;
}

// ---------------------------------------------------------------------------------------------
// docindex usage

async function usageCommand(args: string[], env: Record<string, string | undefined>, io: TerminalIO) {
  const { values, positionals } = parse(args, { json: { type: 'boolean' }, partition: { type: 'string' } });
  if (positionals.length > 0) throw new UsageError('usage takes no arguments');
  const report = await connect(values, env).usage(
    values.partition === undefined ? { byPartition: true } : { partition: values.partition },
  );
  io.stdout.write(values.json ? `${JSON.stringify(report)}\n` : renderUsage(report));
  return 0;
}

// ---------------------------------------------------------------------------------------------
// Helpers

async function forEachConcurrently<T>(items: T[], limit: number, task: (item: T) => Promise<void>) {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next++]!;
      await task(item);
    }
  });
  await Promise.all(lanes);
}

function extensionOf(name: string): string {
  return path.extname(name).toLowerCase();
}
