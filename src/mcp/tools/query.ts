// The search tool: the best-matching chunks of the organisation's ready documents
// (`POST /v1/query`).
import { z } from 'zod';
import type { QueryFilter } from '../../client/types.js';
import { documentId, filterSchema, partitionsInput, principalsInput } from './schemas.js';
import { READS, TOOL_SCOPES, type ToolContext } from './shared.js';

const searchInput = {
  query: z
    .string()
    .min(1)
    .max(4096)
    .describe(
      'What to look for. In keyword mode (BM25 with English stemming where configured) use the distinctive words the passage would contain; semantic and hybrid modes also find passages by meaning.',
    ),
  mode: z
    .enum(['keyword', 'semantic', 'hybrid'])
    .optional()
    .describe(
      'keyword (words), semantic (meaning, needs an embedding provider) or hybrid (both). Default: hybrid when the server has an embedding provider, else keyword.',
    ),
  top_k: z
    .number()
    .int()
    .min(1)
    .max(100)
    .optional()
    .describe('How many chunks to return, 1–100 (default 10).'),
  filter: filterSchema.optional(),
  document_ids: z
    .array(documentId)
    .min(1)
    .max(1000)
    .optional()
    .describe('Search only within these documents (at most 1,000).'),
  partitions: partitionsInput('Search'),
  principals: principalsInput,
  rerank: z
    .boolean()
    .optional()
    .describe(
      'Order the best candidates with the server’s reranker (a cross-encoder that reads the query with each passage). Default: on when the server has a reranker; true without one is an error.',
    ),
  rerank_candidates: z
    .number()
    .int()
    .min(1)
    .max(200)
    .optional()
    .describe(
      'With reranking: how many of the first stage’s best chunks the reranker orders, 1–200 (default 50).',
    ),
};

const searchOutput = {
  org_id: z.string(),
  mode: z.enum(['keyword', 'semantic', 'hybrid']),
  degraded: z.boolean(),
  degraded_reasons: z.array(z.enum(['embeddings_unavailable', 'rerank_unavailable'])),
  results: z.array(
    z.object({
      document_id: z.string(),
      chunk_index: z.number().int(),
      text: z.string(),
      score: z
        .number()
        .describe(
          'Higher is better. keyword: the share (0–1) of the most the query could score, comparable across queries; semantic: cosine similarity; hybrid: the fused rank score; reranked: the reranker’s score.',
        ),
      scores: z.object({
        keyword: z.number().nullable(),
        semantic: z.number().nullable(),
        rerank: z.number().nullable(),
      }),
      metadata: z.record(z.string(), z.string()),
      page_start: z.number().int().nullable(),
      page_end: z.number().int().nullable(),
    }),
  ),
};

export function registerQueryTools({ server, api, run }: ToolContext): void {
  server.registerTool(
    'search',
    {
      title: 'Search documents',
      description: `Search the organisation’s ready documents and return the best-matching chunks (passages), best first, each with its text, score, document_id, chunk_index, metadata and page range (PDF pages, else null). Narrow with filter (metadata), document_ids and partitions; principals acts for those principals (access lists). Needs the \`${TOOL_SCOPES.search}\` key scope.`,
      inputSchema: searchInput,
      outputSchema: searchOutput,
      annotations: READS,
    },
    run(
      'search',
      (args: {
        query: string;
        top_k?: number;
        filter?: Record<string, unknown>;
        document_ids?: string[];
        partitions?: string[];
        principals?: string[];
        mode?: 'keyword' | 'semantic' | 'hybrid';
        rerank?: boolean;
        rerank_candidates?: number;
      }) =>
        api.search({
          query: args.query,
          ...(args.top_k === undefined ? {} : { topK: args.top_k }),
          ...(args.mode === undefined ? {} : { mode: args.mode }),
          ...(args.rerank === undefined ? {} : { rerank: args.rerank }),
          ...(args.rerank_candidates === undefined ? {} : { rerankCandidates: args.rerank_candidates }),
          ...(args.filter === undefined ? {} : { filter: args.filter as QueryFilter }),
          ...(args.document_ids === undefined ? {} : { documentIds: args.document_ids }),
          ...(args.partitions === undefined ? {} : { partitions: args.partitions }),
          ...(args.principals === undefined ? {} : { principals: args.principals }),
        }),
    ),
  );
}
