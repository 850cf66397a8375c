// `docindex rm`: deletes documents by id, or every document a filter selects (among the ids, when
// given), repeating the request while the server says more match.
import { DocindexError } from '../../client/errors.js';
import type { QueryFilter } from '../../client/types.js';
import { UsageError } from '../args.js';
import type { TerminalIO } from '../render.js';
import { connect, type Env, filterOf, parseClientArguments } from './shared.js';

export async function removeCommand(args: string[], env: Env, io: TerminalIO) {
  const { values, positionals } = parseClientArguments(args, {
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
  env: Env,
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
