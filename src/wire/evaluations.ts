// Schemas of the /v1/evaluations routes (TypeBox → JSON Schema), with their examples.
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { EVALUATION_LIMITS, EVALUATION_STATUSES } from '../domain/evaluations.js';
import { MAX_EXTERNAL_ID_LENGTH } from '../domain/types.js';
import { EXAMPLE_DOCUMENT_ID, PAGE_CURSOR, PAGE_LIMIT } from './common.js';

const EXAMPLE_EVALUATION_ID = 'eval_1f0e3dad99908345f7439f8ffabdffc4';
const EXAMPLE_SECOND_DOCUMENT_ID = '9b2d7e41-0c6a-4f3e-a5b8-2d1c7e9f0a64';

const Mode = Type.Union([Type.Literal('keyword'), Type.Literal('semantic'), Type.Literal('hybrid')], {
  description: 'The query mode of POST /v1/query.',
});

export const EvaluationParams = Type.Object(
  {
    id: Type.String({
      maxLength: 64,
      description: 'Evaluation ID (`eval_…`).',
      examples: [EXAMPLE_EVALUATION_ID],
    }),
  },
  { additionalProperties: false },
);

const JudgedDocumentSchema = Type.Object(
  {
    document_id: Type.Optional(
      Type.String({ format: 'uuid', description: 'The document, by its ID. Give this or `external_id`.' }),
    ),
    external_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_EXTERNAL_ID_LENGTH,
        description: 'The document, by the `external_id` it was ingested with. Give this or `document_id`.',
      }),
    ),
    grade: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: EVALUATION_LIMITS.maxGrade,
        default: 1,
        description:
          'How relevant the document is: 0 judged not relevant, higher more relevant. nDCG uses it as the gain. Default 1.',
      }),
    ),
  },
  { additionalProperties: false },
);

const EvaluationQuerySchema = Type.Object(
  {
    query: Type.String({
      minLength: 1,
      maxLength: EVALUATION_LIMITS.queryChars,
      description: 'The query text, as sent to POST /v1/query.',
    }),
    relevant: Type.Array(JudgedDocumentSchema, {
      minItems: 1,
      maxItems: EVALUATION_LIMITS.relevantPerQuery,
      description: `The judged documents of the query (at most ${EVALUATION_LIMITS.relevantPerQuery}).`,
    }),
  },
  { additionalProperties: false },
);

const RunSchema = Type.Object(
  {
    mode: Type.Optional(Mode),
    rerank: Type.Optional(
      Type.Boolean({
        description: 'Rerank, as in POST /v1/query. Default: true when a reranker is configured.',
      }),
    ),
    semantic_weight: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 1,
        description: 'Hybrid runs only: as in POST /v1/query. Default 0.5.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const CreateEvaluationBody = Type.Object(
  {
    name: Type.Optional(
      Type.String({ maxLength: EVALUATION_LIMITS.nameChars, description: 'A label for people.' }),
    ),
    queries: Type.Array(EvaluationQuerySchema, {
      minItems: 1,
      maxItems: EVALUATION_LIMITS.queries,
      description: `The queries with their judged documents (at most ${EVALUATION_LIMITS.queries}).`,
    }),
    runs: Type.Optional(
      Type.Array(RunSchema, {
        maxItems: EVALUATION_LIMITS.runs,
        description: `Query settings to compare, each run over every query (at most ${EVALUATION_LIMITS.runs}). Default: one run with the server's defaults.`,
      }),
    ),
    top_k: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: EVALUATION_LIMITS.maxTopK,
        default: 10,
        description:
          'Documents ranked per query: the k of Recall@k, and how far ranks are reported. Default 10.',
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        name: 'leave policy, before and after hybrid',
        queries: [
          {
            query: 'how many days of paid leave',
            relevant: [{ document_id: EXAMPLE_DOCUMENT_ID, grade: 2 }, { external_id: 'hr-handbook-2025' }],
          },
        ],
        runs: [{ mode: 'keyword' }, { mode: 'hybrid', semantic_weight: 0.6 }],
        top_k: 20,
      },
    ],
  },
);
export type CreateEvaluationBody = Static<typeof CreateEvaluationBody>;

export const CreatedEvaluation = Type.Object(
  { evaluation_id: Type.String({ description: 'Poll GET /v1/evaluations/{id} for the results.' }) },
  { examples: [{ evaluation_id: EXAMPLE_EVALUATION_ID }] },
);

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

const RankSchema = Type.Object({
  document_id: Type.String(),
  external_id: Type.Union([Type.String(), Type.Null()]),
  grade: Type.Integer(),
  rank: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], {
    description: 'Its 1-based rank among the run’s top_k documents; null when it was not among them.',
  }),
});

const QueryRunSchema = Type.Object({
  index: Type.Integer({ description: 'The query’s position in the request (0-based).' }),
  ndcg_at_10: Type.Number(),
  recall_at_k: Type.Number(),
  mrr_at_10: Type.Number(),
  latency_ms: Type.Number(),
  degraded: Type.Boolean({ description: 'The answer was made without a provider that was down.' }),
  ranks: Type.Array(RankSchema, {
    description: 'The query’s relevant documents (grade > 0) and their ranks.',
  }),
});

const RunResultSchema = Type.Object({
  mode: Mode,
  rerank: Type.Boolean(),
  semantic_weight: Type.Union([Type.Number(), Type.Null()]),
  ndcg_at_10: Nullable(Type.Number({ description: 'Mean nDCG@10 (linear gains); null until done.' })),
  recall_at_k: Nullable(Type.Number({ description: 'Mean Recall@top_k; null until done.' })),
  mrr_at_10: Nullable(
    Type.Number({ description: 'Mean reciprocal rank of the first relevant document in the top 10.' }),
  ),
  latency_ms: Type.Union([
    Type.Object({
      p50: Type.Union([Type.Number(), Type.Null()]),
      p95: Type.Union([Type.Number(), Type.Null()]),
    }),
    Type.Null(),
  ]),
  degraded_queries: Nullable(Type.Integer()),
  queries: Type.Optional(
    Type.Array(QueryRunSchema, {
      description: 'Each evaluated query’s figures in this run (GET /v1/evaluations/{id} only, once done).',
    }),
  ),
});

const JudgedRefSchema = Type.Union([
  Type.Object({ document_id: Type.String() }),
  Type.Object({ external_id: Type.String() }),
]);

const QueryNoteSchema = Type.Object({
  index: Type.Integer(),
  query: Type.String(),
  evaluated: Type.Boolean({
    description:
      'false when none of its judged documents with a grade above 0 exists: not run, not in the means.',
  }),
  unknown: Type.Array(JudgedRefSchema, {
    description: 'Judged documents that are no document of the organisation; left out of the scoring.',
  }),
});

const evaluationFields = {
  id: Type.String({ description: 'Evaluation ID.' }),
  name: Type.Union([Type.String(), Type.Null()]),
  status: Type.Union(
    EVALUATION_STATUSES.map((s) => Type.Literal(s)),
    { description: '`queued` → `running` → `done` | `failed`.' },
  ),
  top_k: Type.Integer(),
  query_count: Type.Integer(),
  queries_evaluated: Nullable(Type.Integer({ description: 'Queries in the means; null until done.' })),
  error: Type.Union([Type.Object({ code: Type.String(), message: Type.String() }), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
  started_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  finished_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  runs: Type.Array(RunResultSchema),
};

const EXAMPLE_RUN = {
  mode: 'keyword' as const,
  rerank: false,
  semantic_weight: null,
  ndcg_at_10: 0.6267,
  recall_at_k: 1,
  mrr_at_10: 0.5,
  latency_ms: { p50: 4.2, p95: 4.2 },
  degraded_queries: 0,
};

const EXAMPLE_SUMMARY = {
  id: EXAMPLE_EVALUATION_ID,
  name: 'leave policy, before and after hybrid',
  status: 'done' as const,
  top_k: 20,
  query_count: 1,
  queries_evaluated: 1,
  error: null,
  created_at: '2026-03-15T12:00:00.000Z',
  started_at: '2026-03-15T12:00:00.250Z',
  finished_at: '2026-03-15T12:00:01.100Z',
  runs: [EXAMPLE_RUN],
};

export const EvaluationSchema = Type.Object(
  {
    ...evaluationFields,
    queries: Type.Optional(
      Type.Array(QueryNoteSchema, {
        description: 'Each query and what became of its judged documents; once done.',
      }),
    ),
  },
  {
    examples: [
      {
        ...EXAMPLE_SUMMARY,
        runs: [
          {
            ...EXAMPLE_RUN,
            queries: [
              {
                index: 0,
                ndcg_at_10: 0.6267,
                recall_at_k: 1,
                mrr_at_10: 0.5,
                latency_ms: 4.2,
                degraded: false,
                ranks: [
                  { document_id: EXAMPLE_DOCUMENT_ID, external_id: null, grade: 2, rank: 2 },
                  {
                    document_id: EXAMPLE_SECOND_DOCUMENT_ID,
                    external_id: 'hr-handbook-2025',
                    grade: 1,
                    rank: 5,
                  },
                ],
              },
            ],
          },
        ],
        queries: [{ index: 0, query: 'how many days of paid leave', evaluated: true, unknown: [] }],
      },
    ],
  },
);

export const ListEvaluationsQuery = Type.Object(
  { limit: PAGE_LIMIT('Evaluations'), cursor: PAGE_CURSOR },
  { additionalProperties: false },
);
export type ListEvaluationsQuery = Static<typeof ListEvaluationsQuery>;

export const EvaluationList = Type.Object(
  {
    evaluations: Type.Array(Type.Object(evaluationFields), {
      description: 'Newest first; each run’s figures without the per-query ones.',
    }),
    next_cursor: Type.Union([Type.String(), Type.Null()]),
  },
  { examples: [{ evaluations: [EXAMPLE_SUMMARY], next_cursor: null }] },
);
