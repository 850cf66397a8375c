// The run_evaluation tool: judged queries scored once per run setting (`POST /v1/evaluations`),
// waited for up to a bound, or an evaluation started earlier read again.
import { z } from 'zod';
import type { EvaluationRequest } from '../../client/types.js';
import { ERRORS } from '../../domain/errors.js';
import { EVALUATION_LIMITS } from '../../domain/evaluations.js';
import { documentId } from './schemas.js';
import { adds, TOOL_SCOPES, type ToolContext } from './shared.js';

const DEFAULT_EVALUATION_WAIT_MS = 30_000;
const EVALUATION_POLL_MS = 250;

const judgedDocument = z
  .object({
    document_id: documentId.optional(),
    external_id: z.string().min(1).max(255).optional(),
    grade: z
      .number()
      .int()
      .min(0)
      .max(EVALUATION_LIMITS.maxGrade)
      .optional()
      .describe('How relevant: 0 not relevant, higher more (the gain of nDCG); default 1.'),
  })
  .strict()
  .describe('A document that should answer the query: document_id or external_id (one of them).');

const runEvaluationInput = {
  queries: z
    .array(
      z
        .object({
          query: z.string().min(1).max(EVALUATION_LIMITS.queryChars),
          relevant: z.array(judgedDocument).min(1).max(EVALUATION_LIMITS.relevantPerQuery),
        })
        .strict(),
    )
    .min(1)
    .max(EVALUATION_LIMITS.queries)
    .optional()
    .describe(
      `The judged queries to evaluate (at most ${EVALUATION_LIMITS.queries}). Give these to start an evaluation, or evaluation_id to read one.`,
    ),
  runs: z
    .array(
      z
        .object({
          mode: z.enum(['keyword', 'semantic', 'hybrid']).optional(),
          rerank: z.boolean().optional(),
          semantic_weight: z.number().min(0).max(1).optional(),
        })
        .strict(),
    )
    .max(EVALUATION_LIMITS.runs)
    .optional()
    .describe(
      'Query settings to compare, each run over every query; default one run with the server’s defaults.',
    ),
  top_k: z
    .number()
    .int()
    .min(1)
    .max(EVALUATION_LIMITS.maxTopK)
    .optional()
    .describe('Documents ranked per query: the k of Recall@k (default 10).'),
  name: z.string().max(EVALUATION_LIMITS.nameChars).optional(),
  evaluation_id: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .describe(
      'An evaluation started earlier (its evaluation_id), to read its results instead of starting one.',
    ),
};

export function registerEvaluationTools({ server, api, run, options }: ToolContext): void {
  server.registerTool(
    'run_evaluation',
    {
      title: 'Measure retrieval quality',
      description: `Run judged queries through search once per run setting and score the rankings: nDCG@10 (grades as gains), Recall@top_k and MRR@10 per run, p50/p95 latency, and per query the ranks of its relevant documents. Waits up to ${Math.round((options.evaluationWaitMs ?? DEFAULT_EVALUATION_WAIT_MS) / 1000)} s; an evaluation still queued or running comes back with its status and evaluation_id: call again with evaluation_id for the results. Judged documents that do not exist are listed per query and left out. Needs the \`${TOOL_SCOPES.run_evaluation}\` key scope.`,
      inputSchema: runEvaluationInput,
      outputSchema: { evaluation_id: z.string(), evaluation: z.looseObject({ status: z.string() }) },
      annotations: adds(false),
    },
    run(
      'run_evaluation',
      async (args: {
        queries?: EvaluationRequest['queries'];
        runs?: EvaluationRequest['runs'];
        top_k?: number;
        name?: string;
        evaluation_id?: string;
      }) => {
        if ((args.queries === undefined) === (args.evaluation_id === undefined)) {
          throw ERRORS.invalid(
            'Give either queries (to start an evaluation) or evaluation_id (to read one).',
          );
        }
        const id =
          args.evaluation_id ??
          (await api.createEvaluation({
            queries: args.queries!,
            ...(args.runs === undefined ? {} : { runs: args.runs }),
            ...(args.top_k === undefined ? {} : { top_k: args.top_k }),
            ...(args.name === undefined ? {} : { name: args.name }),
          }));
        const deadline = Date.now() + (options.evaluationWaitMs ?? DEFAULT_EVALUATION_WAIT_MS);
        for (;;) {
          const evaluation = await api.getEvaluation(id);
          const finished = evaluation.status === 'done' || evaluation.status === 'failed';
          if (finished || Date.now() >= deadline) return { evaluation_id: id, evaluation };
          await new Promise((resolve) => setTimeout(resolve, EVALUATION_POLL_MS));
        }
      },
    ),
  );
}
