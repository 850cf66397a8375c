// What the SQLite keyword search's plan and its ranking statements share: the terms it ranks
// with and their ceiling, and the rows those statements give, as hits.
import { keywordScore } from '../../../domain/bm25.js';
import type { DocumentStatus, KeywordHit, Metadata } from '../../../domain/types.js';

/** Terms OR-ed into an FTS5 MATCH, with the most BM25 they could give a chunk. */
export interface Ranking {
  match: string;
  /**
   * bm25Ceiling of the IDFs FTS5 ranks these terms with: N its row count (ftsRowCount), n each
   * term's matches as counted for the plan (docs/ARCHITECTURE.md, "Keyword scores"). Exact
   * whenever every count is within the row budget, and for a single term whatever its count (its
   * IDF is both the score's factor and the ceiling's). A term counted only up to the cap
   * (budget + 1) weighs at least as much here as in FTS5, so the score is a little lower than
   * exact; one remembered over the budget but since brought under it by deletions may weigh less,
   * and keywordScore keeps the score at 1 at most.
   */
  ceiling: number;
}

export interface SearchPlan {
  /** The terms the plan chose; from `minRowid` on when their matches exceed the budget. */
  chosen: Ranking;
  /** Every term that matches anything. */
  every: Ranking;
  minRowid: number;
  /** Whether `chosen` is every term, every match counted. */
  exact: boolean;
}

export interface HitRow {
  document_id: string;
  chunk_index: number;
  text: string;
  page_start: number | null;
  page_end: number | null;
  metadata: string;
  org_id: string;
  status: DocumentStatus;
  score: number;
}

/** Rows ranked by `ranking`'s terms as hits, each scored against its ceiling. */
export function keywordHits(rows: readonly HitRow[], ranking: Ranking): KeywordHit[] {
  return rows.map((r) => ({
    documentId: r.document_id,
    chunkIndex: r.chunk_index,
    text: r.text,
    score: keywordScore(r.score, ranking.ceiling),
    bm25: r.score,
    bm25Max: ranking.ceiling,
    metadata: JSON.parse(r.metadata) as Metadata,
    pageStart: r.page_start,
    pageEnd: r.page_end,
  }));
}
