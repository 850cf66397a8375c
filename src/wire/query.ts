// Schemas of POST /v1/query: the body and the answer.
import { type Static, Type } from '@sinclair/typebox';
import {
  DocumentId,
  EXAMPLE_DOCUMENT_ID,
  EXAMPLE_ORG_ID,
  FilterSchema,
  Nullable,
  PartitionNames,
  PrincipalNames,
} from './common.js';

export const QueryBody = Type.Object(
  {
    query: Type.String({ minLength: 1, maxLength: 4096, description: 'The words to search for.' }),
    top_k: Type.Integer({ minimum: 1, maximum: 100, default: 10, description: 'Chunks to return.' }),
    filter: Type.Optional(FilterSchema),
    document_ids: Type.Optional(
      Type.Array(DocumentId, {
        minItems: 1,
        maxItems: 1000,
        description: 'Search only these documents.',
      }),
    ),
    partitions: Type.Optional(PartitionNames('Search')),
    principals: Type.Optional(PrincipalNames),
    mode: Type.Optional(
      Type.Union([Type.Literal('keyword'), Type.Literal('semantic'), Type.Literal('hybrid')], {
        description:
          '`keyword` (BM25), `semantic` (vectors) or `hybrid` (both, fused). Default: `hybrid` when an embedding provider is configured, else `keyword`.',
      }),
    ),
    semantic_weight: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 1,
        description:
          'Hybrid: weight w of the semantic list in reciprocal rank fusion, score = w/(60 + rank_semantic) + (1 − w)/(60 + rank_keyword). Default 0.5.',
      }),
    ),
    max_chunks_per_document: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 100, description: 'At most this many chunks of one document.' }),
    ),
    score_threshold: Type.Optional(
      Type.Number({
        description:
          'Only results whose `score` is at least this: in keyword mode the share of the most the query could score (0–1, e.g. 0.3), cosine similarity in semantic mode, the fused score in hybrid mode; the reranker’s relevance score when the results were reranked.',
      }),
    ),
    rerank: Type.Optional(
      Type.Boolean({
        description:
          'Order the first stage’s best chunks with the configured reranker (a cross-encoder). Default: true when the server has a reranker; true without one is a 400 `rerank_unavailable`.',
      }),
    ),
    rerank_candidates: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 200,
        description:
          'With reranking: how many of the first stage’s best chunks (filters applied) the reranker orders; max(top_k, this) are taken. Default 50.',
      }),
    ),
    language: Type.Optional(
      Type.String({
        pattern: '^[a-z]{2}$',
        description:
          'The query’s language (ISO 639-1). A query is read in the languages of your documents (each is found in the forms of its own language); naming the query’s language reads it in that one too.',
        examples: ['de'],
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [
      { query: 'how many days of paid leave', top_k: 5, filter: { source: 'hr', year: { $gte: '2025' } } },
      {
        query: 'parental leave policy',
        top_k: 5,
        mode: 'hybrid',
        semantic_weight: 0.6,
        max_chunks_per_document: 2,
        filter: { source: 'hr' },
      },
      { query: 'time off after a child is born', top_k: 10, mode: 'semantic', score_threshold: 0.3 },
      { query: 'who approves parental leave', top_k: 5, rerank: true, rerank_candidates: 100 },
    ],
  },
);
export type QueryBody = Static<typeof QueryBody>;

export const QueryResponse = Type.Object(
  {
    org_id: Type.String(),
    mode: Type.Union([Type.Literal('keyword'), Type.Literal('semantic'), Type.Literal('hybrid')], {
      description: 'The mode used: the one asked, else the default.',
    }),
    degraded: Type.Boolean({
      description:
        'A provider was down and the answer was made without it (`degraded_reasons` says which): a hybrid query’s keyword results alone (every `scores.semantic` null), or the first stage’s order when the reranker failed (every `scores.rerank` null).',
    }),
    degraded_reasons: Type.Array(
      Type.Union([Type.Literal('embeddings_unavailable'), Type.Literal('rerank_unavailable')]),
      { description: 'Empty unless `degraded`.' },
    ),
    results: Type.Array(
      Type.Object({
        document_id: Type.String(),
        chunk_index: Type.Integer(),
        text: Type.String(),
        score: Type.Number({
          description:
            'Higher is better. Keyword mode: the chunk’s BM25 as a fraction of the most the query could score, BM25 / Σ idf × (k1 + 1) over the query words that ranked, in (0, 1] (1: every such word present with saturating frequency), comparable across queries. Semantic mode: cosine similarity. Hybrid mode: the fused reciprocal-rank score, comparable within one answer. When reranked: the reranker’s relevance score.',
        }),
        scores: Type.Object(
          {
            keyword: Nullable(Type.Number()),
            semantic: Nullable(Type.Number()),
            rerank: Nullable(Type.Number()),
          },
          {
            description:
              'The chunk’s keyword score (BM25 as a fraction of the query’s most, as `score` in keyword mode) and cosine similarity, each null when the chunk was not in that list, and the reranker’s relevance score, null when the results were not reranked.',
          },
        ),
        metadata: Type.Record(Type.String(), Type.String()),
        page_start: Nullable(Type.Integer()),
        page_end: Nullable(Type.Integer()),
      }),
      { description: 'Best first.' },
    ),
  },
  {
    description: 'The best-matching chunks.',
    examples: [
      {
        org_id: EXAMPLE_ORG_ID,
        mode: 'hybrid',
        degraded: false,
        degraded_reasons: [],
        results: [
          {
            document_id: EXAMPLE_DOCUMENT_ID,
            chunk_index: 1,
            text: '…to 16:00. 2. Holidays. Each employee has 25 days of paid leave a year…',
            score: 0.9731,
            scores: { keyword: 0.6214, semantic: 0.6812, rerank: 0.9731 },
            metadata: { source: 'hr', year: '2026' },
            page_start: 2,
            page_end: 3,
          },
        ],
      },
    ],
  },
);
