// The `docindex` client commands (ingest, status, ls, rm, query, usage): they talk to a running
// server over HTTP with DocindexClient, configured by DOCINDEX_URL / DOCINDEX_API_KEY or flags.
// Results go to stdout (`--json`: the API's JSON body); progress and problems go to stderr.
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DocindexClient, type WaitProgress } from '../client/client.js';
import { DocindexError, WaitTimeoutError } from '../client/errors.js';
import type { DocumentRecord, DocumentStatus, Metadata, QueryFilter, UsageReport } from '../client/types.js';
import { ADVERTISED_EXTENSIONS, listInProse } from '../domain/formats.js';

export const CLIENT_COMMANDS = ['ingest', 'status', 'ls', 'rm', 'query', 'usage'] as const;
export type ClientCommand = (typeof CLIENT_COMMANDS)[number];

export const CLIENT_USAGE = `Client (talks to a running server; DOCINDEX_URL, default http://127.0.0.1:8080, and
DOCINDEX_API_KEY, or --url URL and --api-key KEY on any client command):
  docindex ingest <files|folders|urls…> [--metadata k=v …] [--chunk-size N] [--chunk-overlap N] [--wait]
                                   upload files (folders are searched for ${ADVERTISED_EXTENSIONS.join(' ')}),
                                   queue URLs; --wait follows them to ready or failed
  docindex status <id…> [--json]   processing status of documents
  docindex ls [--status S] [--limit N] [--cursor C] [--json]
  docindex rm <id…>                delete documents
  docindex query "text" [--top-k N] [--filter k=v …] [--document-id ID …] [--json]
  docindex usage [--json]          queries per day over 30 days, totals and the rate limit`;

const DEFAULT_URL = 'http://127.0.0.1:8080';
const UPLOAD_CONCURRENCY = 4;
const SUPPORTED_EXTENSIONS: ReadonlySet<string> = new Set(ADVERTISED_EXTENSIONS);
/** ".pdf, .docx, .txt, .md, .html or .htm", for messages about what a folder held. */
const SUPPORTED_LIST = listInProse(ADVERTISED_EXTENSIONS);
// The file endpoint has no chunk settings, so with --chunk-size/--chunk-overlap these go as text.
const TEXT_EXTENSIONS = new Set(['.txt', '.md']);
const STATUSES: readonly DocumentStatus[] = ['queued', 'processing', 'ready', 'failed'];

/** Where the commands write; process.stdout/stderr unless a caller passes others. */
export interface TerminalIO {
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
}

/** The command line is wrong: the message and the usage text, exit 2. */
class UsageError extends Error {}
/** Something to set up before the command can run (no key, bad URL): the message alone, exit 2. */
class SetupError extends Error {}

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
      case 'status':
        return await statusCommand(args, env, io);
      case 'ls':
        return await listCommand(args, env, io);
      case 'rm':
        return await removeCommand(args, env, io);
      case 'query':
        return await queryCommand(args, env, io);
      case 'usage':
        return await usageCommand(args, env, io);
    }
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`docindex ${command}: ${error.message}\n\n${CLIENT_USAGE}\n`);
      return 2;
    }
    if (error instanceof SetupError) {
      io.stderr.write(`docindex ${command}: ${error.message}\n`);
      return 2;
    }
    if (error instanceof DocindexError) {
      io.stderr.write(`docindex ${command}: ${describeError(error)}\n`);
      return 1;
    }
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------
// Options shared by every client command

const CONNECTION_OPTIONS = {
  url: { type: 'string' },
  'api-key': { type: 'string' },
} as const;

type OptionSpec = Record<string, { type: 'string' | 'boolean'; multiple?: boolean }>;

function parse<T extends OptionSpec>(args: string[], options: T) {
  try {
    return parseArgs({
      args,
      options: { ...CONNECTION_OPTIONS, ...options },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

function connect(
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

function wholeNumber(raw: string | undefined, flag: string, min: number, max: number): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new UsageError(`${flag} must be a whole number from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  }
  return Number(raw);
}

function keyValues(pairs: string[] | undefined, flag: string): Array<[string, string]> {
  return (pairs ?? []).map((pair) => {
    const eq = pair.indexOf('=');
    if (eq < 1) throw new UsageError(`${flag} takes key=value, got ${JSON.stringify(pair)}`);
    return [pair.slice(0, eq), pair.slice(eq + 1)];
  });
}

function describeError(error: DocindexError): string {
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
    wait: { type: 'boolean' },
  });
  if (positionals.length === 0) throw new UsageError('ingest needs at least one file, folder or URL');
  const metadata: Metadata = Object.fromEntries(keyValues(values.metadata, '--metadata'));
  const chunkSize = wholeNumber(values['chunk-size'], '--chunk-size', 1, 1_000_000);
  const chunkOverlap = wholeNumber(values['chunk-overlap'], '--chunk-overlap', 0, 1_000_000);
  const chunked = chunkSize !== undefined || chunkOverlap !== undefined;
  const client = connect(values, env);

  const items = await collectItems(positionals, io);
  if (items.length === 0) {
    io.stderr.write(`docindex ingest: nothing to ingest (no ${SUPPORTED_LIST} files found)\n`);
    return 1;
  }
  if (
    chunked &&
    items.some(
      (item) =>
        item.source.kind === 'url' ||
        (item.source.kind === 'file' && !TEXT_EXTENSIONS.has(extensionOf(item.source.path))),
    )
  ) {
    io.stderr.write(
      'note: --chunk-size/--chunk-overlap apply to .txt and .md files (sent as text); the API chunks PDF, DOCX and URL documents with its defaults (512/64).\n',
    );
  }

  const progress = new ProgressLine(io.stderr);
  const render = () => progress.update(ingestProgressText(items, values.wait === true));
  render();

  await forEachConcurrently(items, UPLOAD_CONCURRENCY, async (item) => {
    if (item.source.kind === 'missing') return;
    item.state = 'uploading';
    render();
    try {
      const ack = await uploadItem(
        client,
        item.source,
        metadata,
        chunked ? { chunkSize, chunkOverlap } : null,
      );
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

async function uploadItem(
  client: DocindexClient,
  source: { kind: 'file'; path: string } | { kind: 'url'; url: string },
  metadata: Metadata,
  chunks: { chunkSize: number | undefined; chunkOverlap: number | undefined } | null,
) {
  if (source.kind === 'url') return client.ingestUrl(source.url, metadata);
  if (chunks && TEXT_EXTENSIONS.has(extensionOf(source.path))) {
    const text = await readFile(source.path, 'utf8');
    return client.ingestText([{ text, metadata: { filename: path.basename(source.path), ...metadata } }], {
      ...(chunks.chunkSize === undefined ? {} : { chunkSize: chunks.chunkSize }),
      ...(chunks.chunkOverlap === undefined ? {} : { chunkOverlap: chunks.chunkOverlap }),
    });
  }
  return client.ingestFile(source.path, { metadata });
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
  const { values, positionals } = parse(args, { json: { type: 'boolean' } });
  if (positionals.length === 0) throw new UsageError('status needs at least one document id');
  const client = connect(values, env);
  const ids = [...new Set(positionals)];
  const found = new Map<string, DocumentRecord>();
  for (let i = 0; i < ids.length; i += 100) {
    const page = await client.listDocuments({ ids: ids.slice(i, i + 100), limit: 100 });
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
    limit: { type: 'string' },
    cursor: { type: 'string' },
    json: { type: 'boolean' },
  });
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
    });
    if (values.json) io.stdout.write(`${JSON.stringify(page)}\n`);
    docs.push(...page.documents);
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined && docs.length < limit);
  if (values.json) return 0;
  if (docs.length === 0) {
    io.stderr.write(status ? `no ${status} documents\n` : 'no documents yet: try `docindex ingest <file>`\n');
    return 0;
  }
  io.stdout.write(renderDocumentTable(docs));
  if (cursor !== undefined) io.stderr.write(`more: docindex ls --cursor ${cursor}\n`);
  return 0;
}

async function removeCommand(args: string[], env: Record<string, string | undefined>, io: TerminalIO) {
  const { values, positionals } = parse(args, {});
  if (positionals.length === 0) throw new UsageError('rm needs at least one document id');
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

function documentName(doc: Pick<DocumentRecord, 'source' | 'metadata'>): string {
  return doc.source.filename ?? doc.source.url ?? doc.metadata.filename ?? doc.metadata.title ?? '(text)';
}

function renderDocumentTable(docs: DocumentRecord[]): string {
  const rows = docs.map((doc) => [
    doc.id,
    doc.status,
    doc.created_at.slice(0, 16).replace('T', ' '),
    doc.chunk_count === null ? '-' : String(doc.chunk_count),
    documentName(doc),
    doc.error ? `${doc.error.code}: ${doc.error.message}` : '',
  ]);
  const header = ['ID', 'STATUS', 'CREATED (UTC)', 'CHUNKS', 'SOURCE', 'ERROR'];
  const showError = rows.some((row) => row[5] !== '');
  const table = [header, ...rows].map((row) => (showError ? row : row.slice(0, 5)));
  const widths = table[0]!.map((_, col) => Math.max(...table.map((row) => row[col]!.length)));
  return `${table
    .map((row) =>
      row
        .map((cell, col) => (col === row.length - 1 ? cell : cell.padEnd(widths[col]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')}\n`;
}

// ---------------------------------------------------------------------------------------------
// docindex query

async function queryCommand(args: string[], env: Record<string, string | undefined>, io: TerminalIO) {
  const { values, positionals } = parse(args, {
    'top-k': { type: 'string' },
    filter: { type: 'string', multiple: true },
    'document-id': { type: 'string', multiple: true },
    json: { type: 'boolean' },
  });
  if (positionals.length === 0) throw new UsageError('query needs the text to search for');
  const filter: QueryFilter = {};
  for (const [key, value] of keyValues(values.filter, '--filter')) {
    const previous = filter[key];
    filter[key] =
      previous === undefined ? value : [...(Array.isArray(previous) ? previous : [previous]), value];
  }
  const topK = wholeNumber(values['top-k'], '--top-k', 1, 100);
  const client = connect(values, env);
  const answer = await client.query({
    query: positionals.join(' '),
    ...(topK === undefined ? {} : { topK }),
    ...(Object.keys(filter).length > 0 ? { filter } : {}),
    ...(values['document-id'] ? { documentIds: values['document-id'] } : {}),
  });
  if (values.json) {
    io.stdout.write(`${JSON.stringify(answer)}\n`);
    return 0;
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
  const out: string[] = [];
  answer.results.forEach((hit, index) => {
    const pages =
      hit.page_start === null
        ? null
        : hit.page_end !== null && hit.page_end !== hit.page_start
          ? `pages ${hit.page_start}–${hit.page_end}`
          : `page ${hit.page_start}`;
    const where = [names.get(hit.document_id) ?? hit.document_id, pages, `chunk ${hit.chunk_index}`]
      .filter((part) => part !== null)
      .join(' · ');
    out.push(`${String(index + 1).padStart(2)}. ${where}  (score ${hit.score.toFixed(3)})`);
    out.push(`    document ${hit.document_id}`);
    const text = hit.text.replace(/\s+/g, ' ').trim();
    const excerpt = text.length > 480 ? `${text.slice(0, 479)}…` : text;
    for (const line of wrap(excerpt, width - 4)) out.push(`    ${line}`);
    out.push('');
  });
  io.stdout.write(`${out.join('\n')}`);
  return 0;
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line.length > 0 && line.length + 1 + word.length > width) {
      lines.push(line);
      line = '';
    }
    line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}

// ---------------------------------------------------------------------------------------------
// docindex usage

async function usageCommand(args: string[], env: Record<string, string | undefined>, io: TerminalIO) {
  const { values, positionals } = parse(args, { json: { type: 'boolean' } });
  if (positionals.length > 0) throw new UsageError('usage takes no arguments');
  const report = await connect(values, env).usage();
  io.stdout.write(values.json ? `${JSON.stringify(report)}\n` : renderUsage(report));
  return 0;
}

const EIGHTHS = [' ', '▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/** A bar chart of queries per day, oldest on the left and today on the right, then the totals. */
export function renderUsage(report: UsageReport, rows = 8): string {
  const days = [...report.daily].reverse();
  const max = Math.max(1, ...days.map((day) => day.count));
  const eighths = days.map((day) =>
    day.count === 0 ? 0 : Math.max(1, Math.round((day.count / max) * rows * 8)),
  );
  const labelWidth = String(max).length;
  const lines = [`Queries per day, last ${report.period_days} days (UTC)`, ''];
  for (let row = rows - 1; row >= 0; row--) {
    const label =
      row === rows - 1
        ? String(max)
        : row === Math.floor((rows - 1) / 2) && max >= 4
          ? String(Math.round(max / 2))
          : '';
    const cells = eighths.map((e) => EIGHTHS[Math.min(8, Math.max(0, e - row * 8))]!).join(' ');
    lines.push(`${label.padStart(labelWidth)} ┤ ${cells}`.trimEnd());
  }
  lines.push(`${'0'.padStart(labelWidth)} ┼${'─'.repeat(days.length * 2)}`);
  const first = days[0]?.date.slice(5) ?? '';
  const last = days.at(-1)?.date.slice(5) ?? '';
  const axisWidth = days.length * 2 - 1;
  lines.push(
    `${' '.repeat(labelWidth + 3)}${first}${' '.repeat(Math.max(1, axisWidth - first.length - last.length))}${last}`,
  );
  const today = report.daily[0]?.count ?? 0;
  lines.push(
    '',
    `Total queries (${report.period_days} days): ${report.total_queries.toLocaleString('en-US')}   today: ${today.toLocaleString('en-US')}`,
    `Rate limit: ${report.rate_limit_rpm.toLocaleString('en-US')} requests per minute`,
  );
  return `${lines.join('\n')}\n`;
}

// ---------------------------------------------------------------------------------------------
// Terminal helpers

/** One self-overwriting status line on a TTY (redrawn at most ~10 times a second); silent otherwise. */
class ProgressLine {
  #last = 0;
  #pending: string | null = null;
  #shown = false;
  constructor(private readonly stream: TerminalIO['stderr']) {}

  update(text: string): void {
    if (!this.stream.isTTY) return;
    this.#pending = text;
    const now = Date.now();
    if (now - this.#last < 100) return;
    this.#draw(now);
  }

  done(): void {
    if (!this.stream.isTTY) return;
    if (this.#pending !== null) this.#draw(Date.now());
    if (this.#shown) this.stream.write('\n');
  }

  #draw(now: number): void {
    const width = (this.stream.columns ?? 80) - 1;
    const text = this.#pending ?? '';
    this.stream.write(`\r\x1b[2K${text.length > width ? text.slice(0, width) : text}`);
    this.#pending = null;
    this.#last = now;
    this.#shown = true;
  }
}

function bar(fraction: number, width: number): string {
  const filled = Math.round(Math.min(1, Math.max(0, fraction)) * width);
  return `[${'█'.repeat(filled)}${'░'.repeat(width - filled)}]`;
}

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
