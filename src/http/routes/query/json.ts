// The JSON shape of a query result (README, "API overview").
import type { SearchHit } from '../../../domain/types.js';

export function toQueryResultJson(hit: SearchHit) {
  return {
    document_id: hit.documentId,
    chunk_index: hit.chunkIndex,
    text: hit.text,
    score: hit.score,
    metadata: hit.metadata,
    page_start: hit.pageStart,
    page_end: hit.pageEnd,
  };
}
