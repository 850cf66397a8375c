// `docindex ingest`: files (folders searched for the supported extensions) and URLs, uploaded a few
// at a time with a progress line on stderr; with --wait, followed until each is ready or failed.
// A summary table goes to stdout; the exit code is 1 when any item failed or the wait gave up.
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { DocindexClient } from '../../client/client.js';
import { DocindexError, WaitTimeoutError } from '../../client/errors.js';
import type { ChunkOptions, WaitProgress } from '../../client/options.js';
import type { DocumentRecord, DocumentStatus, Metadata } from '../../client/types.js';
import { ADVERTISED_EXTENSIONS, listInProse } from '../../domain/formats.js';
import { keyValues, principalFlags, UsageError } from '../args.js';
import { bar, ProgressLine, type TerminalIO } from '../render.js';
import { chunkOptions, connect, type Env, parseClientArguments, STATUSES } from './shared.js';

const UPLOAD_CONCURRENCY = 4;
const SUPPORTED_EXTENSIONS: ReadonlySet<string> = new Set(ADVERTISED_EXTENSIONS);
/** ".pdf, .docx, .txt, .md, .html or .htm", for messages about what a folder held. */
const SUPPORTED_LIST = listInProse(ADVERTISED_EXTENSIONS);

type ItemState = 'waiting' | 'uploading' | DocumentStatus;

interface IngestItem {
  label: string;
  source: { kind: 'file'; path: string } | { kind: 'url'; url: string } | { kind: 'missing'; reason: string };
  state: ItemState;
  documentId: string | null;
  reason: string | null;
}

export async function ingestCommand(args: string[], env: Env, io: TerminalIO) {
  const { values, positionals } = parseClientArguments(args, {
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
