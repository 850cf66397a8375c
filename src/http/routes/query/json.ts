// The JSON shape of a query result (docs/API.md, "Routes").
import type { QueryHit } from '../../../domain/query.js';

export function toQueryResultJson(hit: QueryHit) {
  return {
    document_id: hit.documentId,
    chunk_index: hit.chunkIndex,
    text: hit.text,
    score: hit.score,
    scores: { keyword: hit.scores.keyword, semantic: hit.scores.semantic, rerank: hit.scores.rerank },
    metadata: hit.metadata,
    page_start: hit.pageStart,
    page_end: hit.pageEnd,
  };
}
