// `docindex ls`: the organisation's documents, newest first, narrowed by status, filter, partition
// or principal, page after page up to --limit.
import type { DocumentRecord, DocumentStatus } from '../../client/types.js';
import { principalFlags, UsageError, wholeNumber } from '../args.js';
import { renderDocumentTable, type TerminalIO } from '../render.js';
import { connect, type Env, filterOf, parseClientArguments, STATUSES } from './shared.js';

export async function listCommand(args: string[], env: Env, io: TerminalIO) {
  const { values } = parseClientArguments(args, {
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
