// How DocindexClient's query is sent: `POST /v1/query` with the options given, by their JSON names.

import type { CallOptions } from '../http-exchange.js';
import type { QueryOptions } from '../options.js';

export function queryCall(options: QueryOptions): CallOptions {
  const body = {
    query: options.query,
    ...(options.topK === undefined ? {} : { top_k: options.topK }),
    ...(options.filter === undefined ? {} : { filter: options.filter }),
    ...(options.documentIds === undefined ? {} : { document_ids: options.documentIds }),
    ...(options.partitions === undefined ? {} : { partitions: options.partitions }),
    ...(options.principals === undefined ? {} : { principals: options.principals }),
    ...(options.mode === undefined ? {} : { mode: options.mode }),
    ...(options.semanticWeight === undefined ? {} : { semantic_weight: options.semanticWeight }),
    ...(options.maxChunksPerDocument === undefined
      ? {}
      : { max_chunks_per_document: options.maxChunksPerDocument }),
    ...(options.scoreThreshold === undefined ? {} : { score_threshold: options.scoreThreshold }),
    ...(options.rerank === undefined ? {} : { rerank: options.rerank }),
    ...(options.rerankCandidates === undefined ? {} : { rerank_candidates: options.rerankCandidates }),
    ...(options.language === undefined ? {} : { language: options.language }),
  };
  return { json: body, signal: options.signal };
}
