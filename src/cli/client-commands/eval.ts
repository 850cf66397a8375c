// `docindex eval FILE|FOLDER`: reads judged queries (JSONL in the request's own form, or a BEIR
// folder: queries.jsonl and qrels/test.tsv, documents named by their external_id = the BEIR
// corpus id), submits them as one evaluation, waits for it and prints one row per run (and with
// --per-query, one row per query). `--json` prints the API's JSON body as it is.
import { readFile, stat } from 'node:fs/promises';
import type { Evaluation, EvaluationQuery, EvaluationRun } from '../../client/types.js';
import { EVALUATION_LIMITS } from '../../domain/evaluations.js';
import { UsageError, wholeNumber } from '../args.js';
import { jsonLines, readBeirQueries } from '../beir.js';
import { SetupError } from '../exit.js';
import { ProgressLine, renderTable, type TerminalIO } from '../render.js';
import { connect, type Env, parseClientArguments } from './shared.js';

export const EVAL_USAGE = `  docindex eval <file.jsonl|beir-folder> [--run SETTINGS …] [--top-k N] [--name NAME]
                [--limit N] [--per-query] [--json]
                                   measure retrieval on judged queries: nDCG@10, Recall@top_k, MRR@10
                                   and latency per run. A .jsonl line is {"query": "…", "relevant":
                                   [{"external_id" | "document_id": "…", "grade": 1}]}; a BEIR folder
                                   has queries.jsonl and qrels/test.tsv (corpus ids = external_id).
                                   --run mode=keyword|semantic|hybrid,rerank=true|false,semantic_weight=W
                                   (repeat to compare runs; default: one run, the server's defaults);
                                   --limit N: the first N queries only (at most ${EVALUATION_LIMITS.queries})`;

/** `mode=hybrid,rerank=false,semantic_weight=0.7` as a run. */
export function parseRun(spec: string): EvaluationRun {
  const run: EvaluationRun = {};
  for (const part of spec.split(',')) {
    const at = part.indexOf('=');
    const key = at === -1 ? part.trim() : part.slice(0, at).trim();
    const value = at === -1 ? '' : part.slice(at + 1).trim();
    if (key === 'mode') {
      if (value !== 'keyword' && value !== 'semantic' && value !== 'hybrid') {
        throw new UsageError(`--run mode must be keyword, semantic or hybrid, not "${value}"`);
      }
      run.mode = value;
    } else if (key === 'rerank') {
      if (value !== 'true' && value !== 'false')
        throw new UsageError(`--run rerank must be true or false, not "${value}"`);
      run.rerank = value === 'true';
    } else if (key === 'semantic_weight' || key === 'semantic-weight') {
      const weight = Number(value);
      if (value === '' || !Number.isFinite(weight) || weight < 0 || weight > 1) {
        throw new UsageError(`--run semantic_weight must be a number from 0 to 1, not "${value}"`);
      }
      run.semantic_weight = weight;
    } else {
      throw new UsageError(`--run takes mode=…, rerank=… and semantic_weight=…, not "${part}"`);
    }
  }
  return run;
}

/** The judged queries of a BEIR folder, its corpus ids as external ids. */
async function beirQueries(folder: string): Promise<EvaluationQuery[]> {
  return (await readBeirQueries(folder)).map((q) => ({
    query: q.text,
    relevant: q.judgements.map((j) => ({ external_id: j.corpusId, grade: j.grade })),
  }));
}

/** Queries from a JSONL file (the API's query objects) or a BEIR folder. */
export async function readEvaluationQueries(source: string): Promise<EvaluationQuery[]> {
  const info = await stat(source).catch(() => null);
  if (!info) throw new SetupError(`${source}: no such file or folder`);
  if (info.isDirectory()) return beirQueries(source);
  return jsonLines(await readFile(source, 'utf8'), source).map((entry, i) => {
    const q = entry as Partial<EvaluationQuery>;
    if (typeof q.query !== 'string' || !Array.isArray(q.relevant)) {
      throw new SetupError(`${source}, line ${i + 1}: expected {"query": "…", "relevant": [ … ]}`);
    }
    return q as EvaluationQuery;
  });
}

const figure = (value: number | null | undefined) =>
  value === null || value === undefined ? '-' : value.toFixed(4);
const ms = (value: number | null | undefined) =>
  value === null || value === undefined ? '-' : value.toFixed(1);

export function renderEvaluation(e: Evaluation, perQuery: boolean): string {
  const lines: string[] = [];
  const unknown = (e.queries ?? []).filter((q) => !q.evaluated).length;
  lines.push(
    `evaluation ${e.id}${e.name ? ` (${e.name})` : ''}: ${e.status}, ${e.query_count} queries` +
      (e.queries_evaluated === null ? '' : `, ${e.queries_evaluated} evaluated`) +
      (unknown > 0 ? ` (${unknown} without a known relevant document)` : ''),
  );
  if (e.error) lines.push(`error: ${e.error.code}: ${e.error.message}`);
  lines.push('');
  lines.push(
    renderTable([
      [
        'RUN',
        'MODE',
        'RERANK',
        'WEIGHT',
        'nDCG@10',
        `RECALL@${e.top_k}`,
        'MRR@10',
        'P50 ms',
        'P95 ms',
        'DEGRADED',
      ],
      ...e.runs.map((run, i) => [
        String(i + 1),
        run.mode,
        run.rerank ? 'yes' : 'no',
        run.semantic_weight === null ? '-' : String(run.semantic_weight),
        figure(run.ndcg_at_10),
        figure(run.recall_at_k),
        figure(run.mrr_at_10),
        ms(run.latency_ms?.p50),
        ms(run.latency_ms?.p95),
        run.degraded_queries === null ? '-' : String(run.degraded_queries),
      ]),
    ]).trimEnd(),
  );
  if (perQuery && e.queries) {
    const outcome = e.runs.map((run) => new Map((run.queries ?? []).map((q) => [q.index, q])));
    lines.push('');
    lines.push(
      renderTable([
        ['#', 'QUERY', ...e.runs.map((_, i) => `nDCG@10 R${i + 1}`), 'RANKS R1', 'NOTE'],
        ...e.queries.map((q) => {
          const first = outcome[0]?.get(q.index);
          const ranks =
            first?.ranks.map((r) => `${r.external_id ?? r.document_id}:${r.rank ?? '-'}`).join(' ') ?? '';
          const note = [
            q.evaluated ? '' : 'not evaluated',
            q.unknown.length > 0
              ? `unknown: ${q.unknown.map((u) => ('external_id' in u ? u.external_id : u.document_id)).join(' ')}`
              : '',
          ]
            .filter((s) => s !== '')
            .join('; ');
          const text = q.query.length > 48 ? `${q.query.slice(0, 47)}…` : q.query;
          return [
            String(q.index + 1),
            text,
            ...outcome.map((runs) => figure(runs.get(q.index)?.ndcg_at_10)),
            ranks,
            note,
          ];
        }),
      ]).trimEnd(),
    );
  }
  return `${lines.join('\n')}\n`;
}

export async function evalCommand(args: string[], env: Env, io: TerminalIO): Promise<number> {
  const { values, positionals } = parseClientArguments(args, {
    run: { type: 'string', multiple: true },
    'top-k': { type: 'string' },
    name: { type: 'string' },
    limit: { type: 'string' },
    'per-query': { type: 'boolean' },
    json: { type: 'boolean' },
  });
  if (positionals.length !== 1) throw new UsageError('eval needs one JSONL file or BEIR folder');
  const runs = (values.run ?? []).map(parseRun);
  const topK = wholeNumber(values['top-k'], '--top-k', 1, EVALUATION_LIMITS.maxTopK);
  const limit = wholeNumber(values.limit, '--limit', 1, EVALUATION_LIMITS.queries);
  let queries = await readEvaluationQueries(positionals[0]!);
  if (limit !== undefined) queries = queries.slice(0, limit);
  if (queries.length === 0) throw new SetupError(`${positionals[0]}: no judged queries`);
  if (queries.length > EVALUATION_LIMITS.queries) {
    throw new UsageError(
      `${queries.length} queries: an evaluation takes at most ${EVALUATION_LIMITS.queries}; pass --limit ${EVALUATION_LIMITS.queries} to take the first ones`,
    );
  }
  const client = connect(values, env);
  const id = await client.createEvaluation({
    queries,
    ...(runs.length === 0 ? {} : { runs }),
    ...(topK === undefined ? {} : { top_k: topK }),
    ...(values.name === undefined ? {} : { name: values.name }),
  });
  const progress = new ProgressLine(io.stderr);
  progress.update(`evaluation ${id}: queued`);
  const evaluation = await client.waitForEvaluation(id, {
    onProgress: (e) => progress.update(`evaluation ${id}: ${e.status}`),
  });
  progress.done();
  if (values.json) io.stdout.write(`${JSON.stringify(evaluation)}\n`);
  else io.stdout.write(renderEvaluation(evaluation, values['per-query'] === true));
  return evaluation.status === 'done' ? 0 : 1;
}
