// `docindex status <id…>`: the processing status of documents, one batch-status request per 100.
import type { DocumentRecord } from '../../client/types.js';
import { principalFlags, UsageError } from '../args.js';
import { renderDocumentTable, type TerminalIO } from '../render.js';
import { connect, type Env, parseClientArguments } from './shared.js';

export async function statusCommand(args: string[], env: Env, io: TerminalIO) {
  const { values, positionals } = parseClientArguments(args, {
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
