// The SQLite keyword search: a query's terms planned within the row budget
// (domain/search-plan.ts) and ranked by FTS5's bm25() over the chunks of `ready` documents, in one
// read transaction. Queries with filters go on in filtered-search.ts.
import { bm25Ceiling, bm25Idf } from '../../../domain/bm25.js';
import { MAX_QUERY_TERMS, RAREST_PRECOUNT } from '../../../domain/search-limits.js';
import { OverBudgetTerms, planTerms, rarestTerms } from '../../../domain/search-plan.js';
import { queryAnalyzers, queryWordsOf, type SearchLanguage } from '../../../domain/search-words.js';
import type { KeywordHit, SearchQuery } from '../../../domain/types.js';
import type { Database } from '../database.js';
import { sqliteAccessCondition, sqliteFilter } from '../filter-sql.js';
import { averagesRowCount } from '../fts-row-count.js';
import { queryTerms } from '../fts-terms.js';
import type { StatementCache } from '../statements.js';
import type { OrgKeys, SqliteKeywordContext } from './context.js';
import type { SqliteFilteredSearch } from './filtered-search.js';
import { type HitRow, keywordHits, type Ranking, type SearchPlan } from './hits.js';
import type { SqliteKeywordAnalysis } from './reindex.js';

export class SqliteKeywordSearch {
  private readonly db: Database;
  private readonly sql: StatementCache;
  private readonly orgKeys: OrgKeys;
  private readonly searchRowBudget: number;
  private readonly language: SearchLanguage;
  private readonly overBudget: OverBudgetTerms;

  constructor(
    context: SqliteKeywordContext,
    private readonly analysis: SqliteKeywordAnalysis,
    private readonly filtered: SqliteFilteredSearch,
    /** How long a term found over the row budget is not counted again (default 60 s; 0: always). */
    overBudgetMemoMs?: number,
  ) {
    this.db = context.db;
    this.sql = context.sql;
    this.orgKeys = context.orgKeys;
    this.searchRowBudget = context.searchRowBudget;
    this.language = context.language;
    this.overBudget = new OverBudgetTerms(overBudgetMemoMs);
  }

  /** The analyses of the org's documents (search_languages), and the query's own. */
  private queryLanguages(orgId: string, language: string | null | undefined): string[] {
    const languages = this.sql
      .get<[string], string>('SELECT language FROM search_languages WHERE org_id = ?')
      .pluck()
      .all(orgId);
    if (language) languages.push(language);
    return languages;
  }

  /**
   * A query's terms cut to MAX_QUERY_TERMS, keeping the rarest (domain/search-plan.ts): each term
   * is first counted up to RAREST_PRECOUNT matches only.
   */
  private rarestTerms(terms: string[]): string[] {
    if (terms.length <= MAX_QUERY_TERMS) return terms;
    const countCapped = this.countCapped();
    return rarestTerms(
      terms.map((term) => ({ term, rows: countCapped.get(term, RAREST_PRECOUNT) ?? 0 })),
      MAX_QUERY_TERMS,
    );
  }

  private countCapped() {
    return this.sql
      .get<[string, number], number>(
        'SELECT count(*) FROM (SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT ?)',
      )
      .pluck();
  }

  /**
   * How many rows FTS5's bm25() takes the table to hold (its N; fts-row-count.ts): the whole
   * table's, as it ranks, not the org's.
   */
  private ftsRowCount(): number {
    return averagesRowCount(
      this.sql.get<[], Uint8Array>('SELECT block FROM chunks_fts_data WHERE id = 1').pluck().get(),
    );
  }

  /**
   * The terms to rank with (domain/search-plan.ts) as FTS5 MATCH expressions. A query whose
   * rarest term alone exceeds the budget is ranked among that term's newest matches, from
   * `minRowid` on. `every` ORs all the terms that match anything; `exact` says whether `chosen`
   * is all of them, every match counted. null when no term matches anything.
   */
  private planMatch(terms: string[]): SearchPlan | null {
    const countCapped = this.countCapped();
    const over = this.searchRowBudget + 1;
    // Terms are org-scoped (fts-terms.ts), so a term is its own key.
    const count = (term: string) => {
      if (this.overBudget.has(term)) return over;
      const rows = countCapped.get(term, over) ?? 0;
      if (rows >= over) this.overBudget.add(term);
      return rows;
    };
    const counts = terms.map((term) => ({ term, rows: count(term) }));
    const plan = planTerms(counts, this.searchRowBudget);
    if (plan === null) return null;
    const total = this.ftsRowCount();
    const rowsOf = new Map(counts.map((c) => [c.term, c.rows]));
    const ranking = (chosen: readonly string[]): Ranking => ({
      match: chosen.join(' OR '),
      ceiling: bm25Ceiling(
        chosen.map((term) => {
          const rows = rowsOf.get(term) ?? 0;
          // A table whose averages record is not written yet counts at least the matches.
          return bm25Idf(Math.max(total, rows), rows);
        }),
      ),
    });
    const chosen = ranking(plan.chosen);
    const every = ranking(plan.every);
    if (plan.rows <= this.searchRowBudget) return { chosen, every, minRowid: 0, exact: plan.exact };
    const edge = this.sql
      .get<[string, number], number>(
        'SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?',
      )
      .pluck()
      .get(chosen.match, this.searchRowBudget - 1);
    return { chosen, every, minRowid: edge ?? 0, exact: false };
  }

  /**
   * The query's best matches. Its terms are counted, FTS5's row count read and the matches
   * ranked in one read transaction: one snapshot, so the IDFs a score is divided by are those
   * bm25() ranked with even while another process writes.
   */
  async search(q: SearchQuery): Promise<KeywordHit[]> {
    const topK = Math.floor(q.topK);
    const orgKey = this.orgKeys.key(q.orgId, false);
    // An org that has never indexed a chunk has no terms to match.
    if (orgKey === null || topK <= 0 || q.documentIds?.length === 0 || q.partitions?.length === 0) return [];
    return this.db.transaction(() => this.searchInSnapshot(q, orgKey, topK))();
  }

  /**
   * Whether every document of the org is in one of `partitions`: then they restrict nothing,
   * and the query is answered as an unrestricted one (the same hits, without a filter to test).
   * The org's partitions are walked in their index, one seek each, and the walk stops at the
   * first one not named: at most one seek more than the partitions named.
   */
  private coversOrg(orgId: string, partitions: readonly string[]): boolean {
    const named = new Set(partitions);
    // A partition's name is never empty: the walk starts after ''.
    const next = this.sql.get<[string, string], string | null>(
      'SELECT min(partition) FROM documents WHERE org_id = ? AND partition > ?',
    );
    let partition = next.pluck().get(orgId, '') ?? null;
    while (partition !== null) {
      if (!named.has(partition)) return false;
      partition = next.pluck().get(orgId, partition) ?? null;
    }
    return true;
  }

  private searchInSnapshot(query: SearchQuery, orgKey: number, topK: number): KeywordHit[] {
    const q =
      query.partitions != null && this.coversOrg(query.orgId, query.partitions)
        ? { ...query, partitions: null }
        : query;
    const analyzers = queryAnalyzers(
      this.queryLanguages(q.orgId, q.language),
      this.analysis.read().written,
      this.language,
    );
    const words = queryWordsOf(q.query, analyzers);
    const plan = this.planMatch(this.rarestTerms(queryTerms(orgKey, words)));
    if (plan === null) return [];
    const { chosen, minRowid } = plan;

    // Only chunks of ready documents are found: a large document being indexed in slices, or
    // one whose indexing was cut off, has some of its chunks in the index already.
    const where: string[] = ["d.status = 'ready'"];
    const params: (string | number)[] = [];
    if (q.documentIds !== null) {
      where.push('d.id IN (SELECT value FROM json_each(?))');
      params.push(JSON.stringify(q.documentIds));
    }
    // The partitions restrict as the filter does: a condition on the document, tested before the
    // ranked matches are cut to topK, and choosing the candidates when the plan is over budget.
    const partitions = q.partitions ?? null;
    if (partitions !== null) {
      where.push('d.partition IN (SELECT value FROM json_each(?))');
      params.push(JSON.stringify(partitions));
    }
    // So does the access list: a request acting for principals ranks only what they may see.
    const principals = q.principals ?? null;
    if (principals !== null) {
      const condition = sqliteAccessCondition('d.access', principals);
      where.push(condition.sql);
      params.push(...condition.params);
    }
    if (q.filter !== null) {
      const condition = sqliteFilter(q.filter, 'd.metadata');
      where.push(condition.sql);
      params.push(...condition.params);
    }
    const filtered =
      q.documentIds !== null || q.filter !== null || partitions !== null || principals !== null;

    // bm25() rather than FTS5's `rank` column: its sorter is several times slower on large match
    // sets. CROSS JOIN pins the join order (matches → chunk → document, by primary key): left to
    // itself the planner may walk every chunk of a large org and probe the index per chunk.
    // Ties are broken by chunk rowid so equal scores come back in a stable order.
    const joined = `SELECT c.document_id, c.chunk_index, c.text, c.page_start, c.page_end, d.metadata,
        d.org_id, d.status, -f.bm25_score AS score
      FROM f CROSS JOIN chunks AS c ON c.id = f.chunk_id CROSS JOIN documents AS d ON d.id = c.document_id`;
    // The plan's matches (from minRowid on), materialised in score order; the outer ORDER BY is
    // the same, so SQLite walks them best first and stops once topK rows pass the conditions.
    // With `best`, only that many of the best matches are walked: a top-N sort instead of
    // sorting every match, the same answer whenever topK of them pass.
    const rankAndFilter = (best?: number) =>
      keywordHits(
        this.sql
          .get<(string | number)[], HitRow>(
            `WITH f AS MATERIALIZED (
               SELECT rowid AS chunk_id, bm25(chunks_fts) AS bm25_score FROM chunks_fts
               WHERE chunks_fts MATCH ? AND rowid >= ? ORDER BY bm25_score, rowid LIMIT ?)
             ${joined}
             WHERE d.org_id = ? AND ${where.join(' AND ')}
             ORDER BY f.bm25_score, f.chunk_id
             LIMIT ?`,
          )
          .all(chosen.match, minRowid, best ?? -1, q.orgId, ...params, topK),
        chosen,
      );
    if (filtered) return this.filtered.search(q, plan, where, params, joined, rankAndFilter);
    // Terms are org-scoped, so every match is this org's: top-k is taken in the index before
    // any join.
    const rows = this.sql
      .get<(string | number)[], HitRow>(
        `WITH f AS MATERIALIZED (
           SELECT rowid AS chunk_id, bm25(chunks_fts) AS bm25_score FROM chunks_fts
           WHERE chunks_fts MATCH ? AND rowid >= ? ORDER BY bm25_score, rowid LIMIT ?)
         ${joined}
         ORDER BY f.bm25_score, f.chunk_id`,
      )
      .all(chosen.match, minRowid, topK);
    // Unless that top-k held chunks not to be shown: of a document not ready yet, or of one
    // deleted whose chunks are still being removed.
    if (rows.some((r) => r.status !== 'ready' || r.org_id !== q.orgId)) return rankAndFilter();
    return keywordHits(rows, chosen);
  }
}
