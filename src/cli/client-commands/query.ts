// `docindex query "text"`: the best-matching chunks, each with the name of its document (one
// batch-status request) and an excerpt wrapped to the terminal; `--json` prints the API's answer.
import { DocindexError } from '../../client/errors.js';
import { principalFlags, UsageError, wholeNumber } from '../args.js';
import { documentName, renderQueryResults, type TerminalIO } from '../render.js';
import { connect, type Env, filterOf, parseClientArguments } from './shared.js';

export async function queryCommand(args: string[], env: Env, io: TerminalIO) {
  const { values, positionals } = parseClientArguments(args, {
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
