// The SQLite keyword search of a query with filters, partitions, principals or named documents:
// the candidates chosen from the documents side when few pass, else the ranked matches walked
// best first with the filters applied, and only when too few pass there the newest passing ones.
import {
  candidateBudget,
  LOOSE_FILTER_SCAN_FACTOR,
  MAX_FILTER_DOCUMENTS,
} from '../../../domain/search-limits.js';
import type { KeywordHit, SearchQuery } from '../../../domain/types.js';
import { sqliteAccessCondition, sqliteAccessDocuments, sqliteFilterDocuments } from '../filter-sql.js';
import type { StatementCache } from '../statements.js';
import type { SqliteKeywordContext } from './context.js';
import { type HitRow, keywordHits, type Ranking, type SearchPlan } from './hits.js';

/**
 * How many of the best matches a filtered query walks first; only when fewer than topK of them
 * pass are all the ranked matches sorted and walked.
 */
const WALK_FIRST = 1000;

export class SqliteFilteredSearch {
  private readonly sql: StatementCache;
  private readonly searchRowBudget: number;

  constructor(context: SqliteKeywordContext) {
    this.sql = context.sql;
    this.searchRowBudget = context.searchRowBudget;
  }

  /**
   * The documents a filtered query may answer from: null when they are too many to rank all
   * their chunks (more than MAX_FILTER_DOCUMENTS documents, or more chunks than candidateBudget).
   * Reading stops as soon as either bound is passed. A metadata filter, else principals, are
   * answered from an index (document_metadata, document_principals): a restriction that few
   * documents pass costs an index range, not a read of every document row of the org. Named
   * documents are looked up by key and tested as rows; partitions alone walk their own index.
   */
  private allowedDocuments(q: SearchQuery, where: string[], params: (string | number)[]): string[] | null {
    let rows: Iterable<{ id: string; chunk_count: number | null }>;
    const passing =
      q.documentIds !== null
        ? null
        : q.filter !== null
          ? sqliteFilterDocuments(q.filter, q.orgId)
          : q.principals != null
            ? sqliteAccessDocuments(q.orgId, q.principals)
            : null;
    if (passing !== null) {
      const partitions = q.partitions ?? null;
      const access = q.principals == null ? null : sqliteAccessCondition('d.access', q.principals);
      // Counted in the index alone first: a loose restriction is known as such without reading
      // a thousand document rows.
      const many = this.sql
        .get<(string | number)[], number>(`SELECT count(*) FROM (${passing.sql} LIMIT ?)`)
        .pluck()
        .get(...passing.params, MAX_FILTER_DOCUMENTS + 1);
      if ((many ?? 0) > MAX_FILTER_DOCUMENTS) return null;
      // CROSS JOIN: from the passing ids to their rows by key, never a walk of the org's rows.
      rows = this.sql
        .get<(string | number)[], { id: string; chunk_count: number | null }>(
          `SELECT d.id, d.chunk_count FROM (${passing.sql}) AS p CROSS JOIN documents AS d ON d.id = p.id
           WHERE d.org_id = ? AND d.status = 'ready' AND d.chunk_count > 0
             ${partitions === null ? '' : 'AND d.partition IN (SELECT value FROM json_each(?))'}
             ${access === null ? '' : `AND ${access.sql}`}`,
        )
        .iterate(
          ...passing.params,
          q.orgId,
          ...(partitions === null ? [] : [JSON.stringify(partitions)]),
          ...(access === null ? [] : access.params),
        );
    } else {
      // Partitions alone: counted in their index first (no row is read), so a partition holding
      // much of the org is known as loose before a thousand document rows are walked.
      if (q.documentIds === null && q.partitions != null) {
        const many = this.sql
          .get<(string | number)[], number>(
            `SELECT count(*) FROM (SELECT 1 FROM documents
               WHERE org_id = ? AND partition IN (SELECT value FROM json_each(?)) LIMIT ?)`,
          )
          .pluck()
          .get(q.orgId, JSON.stringify(q.partitions), MAX_FILTER_DOCUMENTS + 1);
        if ((many ?? 0) > MAX_FILTER_DOCUMENTS) return null;
      }
      // With document ids, `+org_id` makes SQLite look the ids up by primary key rather than walk
      // the org's index (as in listDocuments).
      const org = q.documentIds !== null ? '+d.org_id' : 'd.org_id';
      rows = this.sql
        .get<(string | number)[], { id: string; chunk_count: number | null }>(
          `SELECT d.id, d.chunk_count FROM documents AS d
           WHERE ${org} = ? AND d.chunk_count > 0 ${where.map((w) => `AND ${w}`).join(' ')}`,
        )
        .iterate(q.orgId, ...params);
    }
    const budget = candidateBudget(q, this.searchRowBudget);
    const ids: string[] = [];
    let chunks = 0;
    for (const row of rows) {
      ids.push(row.id);
      chunks += row.chunk_count ?? 0;
      if (ids.length > MAX_FILTER_DOCUMENTS || chunks > budget) return null;
    }
    return ids;
  }

  /** The rowids of the chunks of `documents`, at most candidateBudget of them. */
  private chunksOf(q: SearchQuery, documents: string[]): number[] {
    return this.sql
      .get<[string, number], number>(
        'SELECT id FROM chunks WHERE document_id IN (SELECT value FROM json_each(?)) LIMIT ?',
      )
      .pluck()
      .all(JSON.stringify(documents), candidateBudget(q, this.searchRowBudget));
  }

  /**
   * The newest matches that pass the filters, among at most LOOSE_FILTER_SCAN_FACTOR × budget
   * newest matches (so a loose filter still bounds the work), at most the budget of them.
   */
  private newestPassing(
    match: string,
    q: SearchQuery,
    where: string[],
    params: (string | number)[],
  ): number[] {
    // CROSS JOIN pins the order: newest matches first, then their chunk and document by key.
    return this.sql
      .get<(string | number)[], number>(
        `SELECT c.id FROM (SELECT rowid AS id FROM chunks_fts WHERE chunks_fts MATCH ?
                           ORDER BY rowid DESC LIMIT ?) AS f
         CROSS JOIN chunks AS c ON c.id = f.id CROSS JOIN documents AS d ON d.id = c.document_id
         WHERE d.org_id = ? ${where.map((w) => `AND ${w}`).join(' ')}
         LIMIT ?`,
      )
      .pluck()
      .all(match, this.searchRowBudget * LOOSE_FILTER_SCAN_FACTOR, q.orgId, ...params, this.searchRowBudget);
  }

  /**
   * A query with filters or named documents. When few documents pass (known from an index, not a
   * scan), all their chunks are the candidates and ranked in one FTS scan: exact. Otherwise the
   * filters are applied while walking the ranked matches best first, as an unfiltered query ranks
   * them, which stops after topK passing rows, so a loose filter costs about what no filter does.
   * Only when fewer than topK pass there (the plan ranked a bounded subset and the passing
   * chunks sit outside it) do the filters choose the candidates: the newest passing matches.
   */
  search(
    q: SearchQuery,
    plan: SearchPlan,
    where: string[],
    params: (string | number)[],
    joined: string,
    rankAndFilter: (best?: number) => KeywordHit[],
  ): KeywordHit[] {
    const topK = Math.floor(q.topK);
    // One FTS scan over the candidates' rowid span ranks them: bm25() counts each term's matches
    // once per scan, so one scan per document would cost that count per document. `+rowid` keeps
    // the IN list out of the FTS query plan for the same reason.
    const rankAmong = (ranking: Ranking, rowids: number[]): KeywordHit[] => {
      if (rowids.length === 0) return [];
      let lo = Number.POSITIVE_INFINITY;
      let hi = 0;
      for (const id of rowids) {
        if (id < lo) lo = id;
        if (id > hi) hi = id;
      }
      const rows = this.sql
        .get<(string | number)[], HitRow>(
          `WITH f AS MATERIALIZED (
             SELECT rowid AS chunk_id, bm25(chunks_fts) AS bm25_score FROM chunks_fts
             WHERE chunks_fts MATCH ? AND rowid BETWEEN ? AND ?
               AND +rowid IN (SELECT value FROM json_each(?))
             ORDER BY bm25_score, rowid LIMIT ?)
           ${joined}
           WHERE d.org_id = ? AND ${where.join(' AND ')}
           ORDER BY f.bm25_score, f.chunk_id`,
        )
        .all(ranking.match, lo, hi, JSON.stringify(rowids), topK, q.orgId, ...params);
      return keywordHits(rows, ranking);
    };
    // Named documents under the budget are ranked and filtered as they are (their matches are
    // all ranked); a metadata filter is looked up first whatever the plan.
    const allowed = q.documentIds === null || !plan.exact ? this.allowedDocuments(q, where, params) : null;
    if (allowed !== null) {
      const rowids = this.chunksOf(q, allowed);
      // The terms the plan chose first, as an unfiltered query ranks: the too-common ones cost a
      // scan of their whole posting list. Every term only when those find fewer than topK.
      if (plan.chosen.match !== plan.every.match) {
        const chosen = rankAmong(plan.chosen, rowids);
        if (chosen.length >= topK) return chosen;
      }
      return rankAmong(plan.every, rowids);
    }
    let walked = rankAndFilter(WALK_FIRST);
    if (walked.length < topK) walked = rankAndFilter();
    if (walked.length >= topK || plan.exact) return walked;
    const newest = rankAmong(plan.chosen, this.newestPassing(plan.chosen.match, q, where, params));
    return newest.length > walked.length ? newest : walked;
  }
}
