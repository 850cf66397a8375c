// The keyword index on SQLite: chunks, their FTS5 rows with per-organisation terms
// (fts-terms.ts), and BM25 search over the chunks of `ready` documents. Its writes run inside the
// record store's transactions (SqliteDocumentStore.saveIndex and deleteDocument), so a document
// turns ready with its last chunk and stops matching the moment it is deleted.

import { bm25Ceiling, bm25Idf, keywordScore } from '../../domain/bm25.js';
import { detectLanguage } from '../../domain/language-detection.js';
import {
  type AnalysisState,
  DEFAULT_SEARCH_ROW_BUDGET,
  type KeywordIndex,
  type SlicedKeywordIndexWriter,
} from '../../domain/ports.js';
import {
  candidateBudget,
  LOOSE_FILTER_SCAN_FACTOR,
  MAX_FILTER_DOCUMENTS,
  MAX_QUERY_TERMS,
  RAREST_PRECOUNT,
} from '../../domain/search-limits.js';
import { OverBudgetTerms, planTerms, rarestTerms } from '../../domain/search-plan.js';
import {
  ANALYSIS,
  type Analyzer,
  documentAnalyzer,
  documentLanguage,
  fallbackLanguage,
  queryAnalyzers,
  queryWordsOf,
  type SearchLanguage,
  type WrittenAnalysis,
} from '../../domain/search-words.js';
import type {
  ChunkRow,
  DocumentStatus,
  KeywordHit,
  Metadata,
  SearchQuery,
  StoredChunk,
} from '../../domain/types.js';
import type { Database } from './database.js';
import { sqliteAccessCondition, sqliteFilter, sqliteFilterDocuments } from './filter-sql.js';
import { averagesRowCount } from './fts-row-count.js';
import { indexTerms, queryTerms } from './fts-terms.js';
import { StatementCache } from './statements.js';
import { storableText } from './text.js';

export interface SqliteKeywordIndexOptions {
  /** Most matching chunks one query may rank (default DEFAULT_SEARCH_ROW_BUDGET). */
  searchRowBudget?: number;
  /** SEARCH_LANGUAGE: the language of documents that name none and cannot be told (default 'auto'). */
  language?: SearchLanguage;
  /** How long a term found over the row budget is not counted again (default 60 s; 0: always). */
  overBudgetMemoMs?: number;
}

/**
 * How many of the best matches a filtered query walks first; only when fewer than topK of them
 * pass are all the ranked matches sorted and walked.
 */
const WALK_FIRST = 1000;

interface AnalysisRow {
  written: WrittenAnalysis | null;
  reindex_target: WrittenAnalysis | null;
  reindex_after: number | null;
}

/** Terms OR-ed into an FTS5 MATCH, with the most BM25 they could give a chunk. */
interface Ranking {
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

interface SearchPlan {
  /** The terms the plan chose; from `minRowid` on when their matches exceed the budget. */
  chosen: Ranking;
  /** Every term that matches anything. */
  every: Ranking;
  minRowid: number;
  /** Whether `chosen` is every term, every match counted. */
  exact: boolean;
}

interface HitRow {
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

/**
 * The index and its writes, which the record store makes in its own transactions (the writer's
 * `tx` is void: better-sqlite3's statements join the connection's open transaction).
 */
export class SqliteKeywordIndex implements KeywordIndex, SlicedKeywordIndexWriter<void, 'sync'> {
  private readonly sql: StatementCache;
  private readonly orgKeys = new Map<string, number>();
  private readonly searchRowBudget: number;
  private readonly language: SearchLanguage;
  /** The analysis of chunks that come without their words. */
  private readonly analyzer: Analyzer;
  private readonly overBudget: OverBudgetTerms;

  constructor(
    private readonly db: Database,
    opts: SqliteKeywordIndexOptions = {},
  ) {
    this.sql = new StatementCache(db);
    this.overBudget = new OverBudgetTerms(opts.overBudgetMemoMs);
    this.searchRowBudget = opts.searchRowBudget ?? DEFAULT_SEARCH_ROW_BUDGET;
    this.language = opts.language ?? 'auto';
    this.analyzer = documentAnalyzer(fallbackLanguage(this.language));
  }

  private analysis(): AnalysisRow {
    return (
      this.sql
        .get<[], AnalysisRow>(
          'SELECT written, reindex_target, reindex_after FROM search_analysis WHERE id = 1',
        )
        .get() ?? { written: null, reindex_target: null, reindex_after: null }
    );
  }

  async adoptAnalysis(): Promise<void> {
    this.sql.get('UPDATE search_analysis SET written = ? WHERE id = 1 AND written IS NULL').run(ANALYSIS);
  }

  async analysisState(): Promise<AnalysisState> {
    const { written } = this.analysis();
    return { configured: ANALYSIS, written, reindexNeeded: written !== null && written !== ANALYSIS };
  }

  /**
   * Rewrites the FTS rows of the next `limit` chunks in rowid order (chunks written meanwhile
   * already carry the configured analysis; rewriting one again changes nothing). IMMEDIATE takes
   * the write lock first: a read transaction that turns into a write while a server process
   * writes fails at once with SQLITE_BUSY instead of waiting its turn.
   */
  async reindexBatch(limit: number): Promise<{ rewritten: number; done: boolean }> {
    const configured = ANALYSIS;
    return this.db
      .transaction(() => {
        const state = this.analysis();
        if (state.written === null || state.written === configured) return { rewritten: 0, done: true };
        const after = state.reindex_target === configured ? (state.reindex_after ?? 0) : 0;
        const rows = this.sql
          .get<
            [number, number],
            { id: number; text: string; org_key: number; document_id: string; language: string | null }
          >(
            `SELECT c.id, c.text, o.id AS org_key, d.id AS document_id, d.language FROM chunks AS c
           CROSS JOIN documents AS d ON d.id = c.document_id
           CROSS JOIN fts_orgs AS o ON o.org_id = d.org_id
           WHERE c.id > ? ORDER BY c.id LIMIT ?`,
          )
          .all(after, limit);
        const drop = this.sql.get('DELETE FROM chunks_fts WHERE rowid = ?');
        const insert = this.sql.get('INSERT INTO chunks_fts (rowid, terms) VALUES (?, ?)');
        const languages = new Map<string, string | null>();
        for (const row of rows) {
          drop.run(row.id);
          const language = languages.has(row.document_id)
            ? (languages.get(row.document_id) ?? null)
            : this.languageOf(row);
          languages.set(row.document_id, language);
          insert.run(row.id, indexTerms(row.org_key, documentAnalyzer(language).words(row.text)));
        }
        const done = rows.length < limit;
        const last = rows[rows.length - 1];
        if (done) {
          this.sql
            .get(
              'UPDATE search_analysis SET written = ?, reindex_target = NULL, reindex_after = NULL WHERE id = 1',
            )
            .run(configured);
        } else if (last) {
          this.sql
            .get('UPDATE search_analysis SET reindex_target = ?, reindex_after = ? WHERE id = 1')
            .run(configured, last.id);
        }
        return { rewritten: rows.length, done };
      })
      .immediate();
  }

  /**
   * The language of a chunk's document; for one indexed before documents had a language, told
   * from this chunk and kept on the document (its other chunks are then analysed alike).
   */
  private languageOf(row: { document_id: string; language: string | null; text: string }): string | null {
    if (row.language !== null) return row.language;
    const language = documentLanguage(null, () => detectLanguage(row.text), this.language);
    this.sql
      .get('UPDATE documents SET language = ? WHERE id = ? AND language IS NULL')
      .run(language, row.document_id);
    this.noteLanguage(row.document_id, language);
    return language;
  }

  /**
   * Records, in the caller's transaction, that the document's org has documents analysed in this
   * language (search_languages, which queries are read with).
   */
  noteLanguage(documentId: string, language: string | null): void {
    this.sql
      .get(
        'INSERT OR IGNORE INTO search_languages (org_id, language) SELECT org_id, ? FROM documents WHERE id = ?',
      )
      .run(documentAnalyzer(language).language, documentId);
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
   * The org's key inside FTS terms; with `create`, assigns one inside the caller's transaction.
   * Only keys read outside a transaction are cached: a key assigned in a transaction that then
   * rolls back could be handed to another org, and a stale cache would mix the two orgs' terms.
   */
  private orgKey(orgId: string, create: boolean): number | null {
    const cached = this.orgKeys.get(orgId);
    if (cached !== undefined) return cached;
    if (create) {
      this.sql.get('INSERT INTO fts_orgs (org_id) VALUES (?) ON CONFLICT (org_id) DO NOTHING').run(orgId);
    }
    const key = this.sql.get<[string], number>('SELECT id FROM fts_orgs WHERE org_id = ?').pluck().get(orgId);
    if (key === undefined) return null;
    if (!this.db.inTransaction) this.orgKeys.set(orgId, key);
    return key;
  }

  /**
   * Writes the document's chunks and their FTS rows, inside the caller's transaction (the record
   * store's: a document turns ready with its last chunk). They are found once it is `ready`.
   */
  writeChunks(id: string, orgId: string, chunks: readonly ChunkRow[]): void {
    const orgKey = this.orgKey(orgId, true) as number;
    const insertChunk = this.sql.get(`INSERT INTO chunks
      (document_id, chunk_index, text, token_count, char_start, char_end, page_start, page_end)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?)`);
    const insertFts = this.sql.get('INSERT INTO chunks_fts (rowid, terms) VALUES (?, ?)');
    for (const c of chunks) {
      const text = storableText(c.text);
      const { lastInsertRowid } = insertChunk.run(
        id,
        c.index,
        text,
        c.tokenCount,
        c.charStart,
        c.charEnd,
        c.pageStart,
        c.pageEnd,
      );
      insertFts.run(lastInsertRowid, indexTerms(orgKey, c.words ?? this.analyzer.words(text)));
    }
  }

  /** Deletes the document's chunks (their trigger drops the FTS rows). */
  deleteChunks(id: string): void {
    this.sql.get('DELETE FROM chunks WHERE document_id = ?').run(id);
  }

  /** Deletes up to `limit` of the document's chunks (their trigger drops the FTS rows); how many. */
  deleteChunkSlice(id: string, limit: number): number {
    return this.sql
      .get('DELETE FROM chunks WHERE id IN (SELECT id FROM chunks WHERE document_id = ? LIMIT ?)')
      .run(id, limit).changes;
  }

  /**
   * Hands the chunks of document `from` to document `to`: an update of the chunk rows, leaving
   * their FTS rows (keyed by chunk rowid, with the org's terms) as they are.
   */
  moveChunks(from: string, to: string): void {
    this.sql.get('UPDATE chunks SET document_id = ? WHERE document_id = ?').run(to, from);
  }

  /**
   * Forgets a purged org's number inside terms, once none of its chunks are left (the number is
   * never handed out again: fts_orgs counts with AUTOINCREMENT).
   */
  forgetOrg(orgId: string): void {
    this.sql.get('DELETE FROM fts_orgs WHERE org_id = ?').run(orgId);
    this.sql.get('DELETE FROM search_languages WHERE org_id = ?').run(orgId);
    this.orgKeys.delete(orgId);
  }

  /** Up to `limit` of the document's chunks after index `afterIndex`, in index order. */
  readChunks(id: string, afterIndex: number, limit: number): StoredChunk[] {
    return this.sql
      .get<[string, number, number], StoredChunk>(
        `SELECT chunk_index AS "index", text, token_count AS tokenCount, char_start AS charStart,
                char_end AS charEnd, page_start AS pageStart, page_end AS pageEnd
         FROM chunks WHERE document_id = ? AND chunk_index > ? ORDER BY chunk_index LIMIT ?`,
      )
      .all(id, afterIndex, limit);
  }

  /** How many chunks the document has, counted up to `cap`. */
  countChunks(id: string, cap: number): number {
    return (
      this.sql
        .get<[string, number], number>(
          'SELECT count(*) FROM (SELECT 1 FROM chunks WHERE document_id = ? LIMIT ?)',
        )
        .pluck()
        .get(id, cap) ?? 0
    );
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
   * The documents a filtered query may answer from: null when they are too many to rank all
   * their chunks (more than MAX_FILTER_DOCUMENTS documents, or more chunks than candidateBudget).
   * Reading stops as soon as either bound is passed. A metadata filter alone is answered from the
   * document_metadata index (a filter that few documents pass costs an index range, not a parse
   * of every document's JSON in the org); named documents are looked up by key and tested as rows.
   */
  private allowedDocuments(q: SearchQuery, where: string[], params: (string | number)[]): string[] | null {
    let rows: Iterable<{ id: string; chunk_count: number | null }>;
    if (q.documentIds === null && q.filter !== null) {
      const partitions = q.partitions ?? null;
      const access = q.principals == null ? null : sqliteAccessCondition('d.access', q.principals);
      const passing = sqliteFilterDocuments(q.filter, q.orgId);
      // Counted in the index alone first: a loose filter is known as such without reading
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
  private searchFiltered(
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

  /**
   * The query's best matches. Its terms are counted, FTS5's row count read and the matches
   * ranked in one read transaction: one snapshot, so the IDFs a score is divided by are those
   * bm25() ranked with even while another process writes.
   */
  async search(q: SearchQuery): Promise<KeywordHit[]> {
    const topK = Math.floor(q.topK);
    const orgKey = this.orgKey(q.orgId, false);
    // An org that has never indexed a chunk has no terms to match.
    if (orgKey === null || topK <= 0 || q.documentIds?.length === 0 || q.partitions?.length === 0) return [];
    return this.db.transaction(() => this.searchInSnapshot(q, orgKey, topK))();
  }

  private searchInSnapshot(q: SearchQuery, orgKey: number, topK: number): KeywordHit[] {
    const analyzers = queryAnalyzers(
      this.queryLanguages(q.orgId, q.language),
      this.analysis().written,
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
    if (filtered) return this.searchFiltered(q, plan, where, params, joined, rankAndFilter);
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

/** Rows ranked by `ranking`'s terms as hits, each scored against its ceiling. */
function keywordHits(rows: readonly HitRow[], ranking: Ranking): KeywordHit[] {
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
