// The keyword index on PostgreSQL: the chunks table's tsvector column ('simple' configuration,
// GIN index) and ts_rank_cd search over the chunks of `ready` documents. Its writes run inside the
// record store's transactions (PgDocumentStore.saveIndex; a delete cascades from the document
// row), so a document turns ready with its last chunk and stops matching the moment it goes.
import { DEFAULT_SEARCH_ROW_BUDGET, type SearchIndex } from '../../domain/ports.js';
import {
  candidateBudget,
  LOOSE_FILTER_SCAN_FACTOR,
  MAX_FILTER_DOCUMENTS,
  MAX_QUERY_TERMS,
  RAREST_PRECOUNT,
} from '../../domain/search-limits.js';
import { planTerms } from '../../domain/search-plan.js';
import { cleanText } from '../../domain/text.js';
import type { ChunkRow, Metadata, SearchHit, SearchQuery, StoredChunk } from '../../domain/types.js';
import type { PgDatabase, Queryable } from './database.js';
import { postgresFilter } from './filter-sql.js';

export interface PgKeywordIndexOptions {
  /** Most matching chunks one query may rank (default DEFAULT_SEARCH_ROW_BUDGET). */
  searchRowBudget?: number;
}

interface WordCount {
  /** The word as a quoted tsquery literal. */
  literal: string;
  /** The org's chunks that hold it, counted up to the row budget + 1; null when not counted. */
  rows: number | null;
}

interface HitRow {
  document_id: string;
  chunk_index: number;
  text: string;
  page_start: number | null;
  page_end: number | null;
  metadata: Metadata;
  score: number;
}

export class PgKeywordIndex implements SearchIndex {
  private readonly documents: string;
  private readonly chunks: string;
  private readonly searchRowBudget: number;

  constructor(
    private readonly db: PgDatabase,
    opts: PgKeywordIndexOptions = {},
  ) {
    this.documents = db.table('documents');
    this.chunks = db.table('chunks');
    this.searchRowBudget = opts.searchRowBudget ?? DEFAULT_SEARCH_ROW_BUDGET;
  }

  /** Up to `limit` of the document's chunks after index `afterIndex`, in index order. */
  async readChunks(documentId: string, afterIndex: number, limit: number): Promise<StoredChunk[]> {
    const { rows } = await this.db.query<StoredChunk>(
      `SELECT chunk_index AS "index", text, token_count AS "tokenCount", page_start AS "pageStart",
              page_end AS "pageEnd"
       FROM ${this.chunks} WHERE document_id = $1 AND chunk_index > $2 ORDER BY chunk_index LIMIT $3`,
      [documentId, afterIndex, limit],
    );
    return rows;
  }

  /** Deletes the document's chunks, in the caller's transaction. */
  async deleteChunks(tx: Queryable, documentId: string): Promise<void> {
    await tx.query(`DELETE FROM ${this.chunks} WHERE document_id = $1`, [documentId]);
  }

  /**
   * Writes chunks of the document (their tsvector is computed by a generated column), in the
   * caller's transaction: the record store's, which marks the document ready with its last chunk.
   */
  async writeChunks(
    tx: Queryable,
    documentId: string,
    orgId: string,
    batch: readonly ChunkRow[],
  ): Promise<void> {
    await tx.query(
      `INSERT INTO ${this.chunks}
         (document_id, org_id, chunk_index, text, token_count, char_start, char_end, page_start, page_end)
       SELECT $1, $2, * FROM unnest($3::int[], $4::text[], $5::int[], $6::int[], $7::int[], $8::int[], $9::int[])`,
      [
        documentId,
        orgId,
        batch.map((c) => c.index),
        batch.map((c) => cleanText(c.text)),
        batch.map((c) => c.tokenCount),
        batch.map((c) => c.charStart),
        batch.map((c) => c.charEnd),
        batch.map((c) => c.pageStart),
        batch.map((c) => c.pageEnd),
      ],
    );
  }

  /**
   * The query's words as quoted tsquery literals, each with how many of the org's chunks hold it,
   * counted up to searchRowBudget + 1 only: the LIMIT stops reading rows once a word is known to
   * be over the budget. Of a query with more than MAX_QUERY_TERMS distinct words, the rarest
   * MAX_QUERY_TERMS that match anything are kept (each word first counted up to RAREST_PRECOUNT
   * only; ties keep query order). The word of a one-word query is counted only with `countOne`:
   * without filters its plan is the same whatever the count.
   */
  private async countWords(orgId: string, text: string, countOne: boolean): Promise<WordCount[]> {
    // The query text goes through the same parser and 'simple' dictionary as the chunks, so a
    // query word matches exactly the lexemes the index holds (compound tokens such as e-mail
    // addresses, hosts and version numbers included). Each lexeme becomes a quoted literal: user
    // input never reaches tsquery syntax, so no string can make it throw. Quoting rules of
    // tsquery input: a quote is doubled, a backslash escaped.
    const capped = (literal: string, cap: string) => `(SELECT count(*)::int FROM (
        SELECT FROM ${this.chunks} AS c WHERE c.org_id = $1 AND c.tsv @@ ${literal}::tsquery LIMIT ${cap}
      ) AS capped)`;
    const { rows } = await this.db.query<WordCount>(
      `WITH words AS (
         SELECT '''' || replace(replace(lexeme, '\\', '\\\\'), '''', '''''') || '''' AS literal,
                positions[1] AS position
         FROM unnest(to_tsvector('simple'::regconfig, $2))
       ),
       kept AS (
         SELECT literal, position FROM words WHERE (SELECT count(*) FROM words) <= $3
         UNION ALL
         SELECT literal, position FROM (
           SELECT literal, position FROM (
             SELECT w.literal, w.position, ${capped('w.literal', '$6')} AS few
             FROM words AS w WHERE (SELECT count(*) FROM words) > $3
           ) AS precounted
           WHERE few > 0 ORDER BY few, position LIMIT $3
         ) AS rarest
       )
       SELECT k.literal,
              CASE WHEN $5 OR (SELECT count(*) FROM kept) > 1 THEN ${capped('k.literal', '$4')} END AS rows
       FROM kept AS k
       ORDER BY k.position`,
      [cleanText(orgId), text, MAX_QUERY_TERMS, this.searchRowBudget + 1, countOne, RAREST_PRECOUNT],
    );
    return rows;
  }

  /**
   * The words to rank with (domain/search-plan.ts) as tsqueries: `query` to rank with, `every`
   * ORs every word that matches anything, and `exact` says whether `query` is all of them with
   * every match within the budget. A query whose rarest word alone exceeds the budget is ranked
   * among a bounded subset of that word's matches. null when no word matches anything.
   */
  private planSearch(words: WordCount[]): { query: string; every: string; exact: boolean } | null {
    const [only] = words;
    if (words.length === 1 && only && only.rows === null) {
      return { query: only.literal, every: only.literal, exact: false };
    }
    const plan = planTerms(
      words.map((w) => ({ term: w.literal, rows: w.rows ?? 0 })),
      this.searchRowBudget,
    );
    if (plan === null) return null;
    return { query: plan.chosen.join(' | '), every: plan.every.join(' | '), exact: plan.exact };
  }

  /**
   * The documents a filtered query may answer from, found from the documents side: null when
   * they are too many to rank all their chunks (more than MAX_FILTER_DOCUMENTS documents, or
   * more chunks than `budget`), so the query must start from the index instead. A filter
   * that few documents pass reads the org's document rows once: a twentieth of its chunks.
   * `filters` test a document `d`; their parameters are $2 on.
   */
  private async allowedDocuments(
    orgId: string,
    filters: string[],
    params: unknown[],
    budget: number,
  ): Promise<string[] | null> {
    const { rows } = await this.db.query<{ id: string; chunk_count: number }>(
      `SELECT d.id, d.chunk_count FROM ${this.documents} AS d
       WHERE d.org_id = $1 AND d.chunk_count > 0 AND ${filters.join(' AND ')}
       LIMIT ${MAX_FILTER_DOCUMENTS + 1}`,
      [cleanText(orgId), ...params],
    );
    const chunks = rows.reduce((n, r) => n + r.chunk_count, 0);
    if (rows.length > MAX_FILTER_DOCUMENTS || chunks > budget) return null;
    return rows.map((r) => r.id);
  }

  async search(q: SearchQuery): Promise<SearchHit[]> {
    const topK = Math.floor(q.topK);
    const text = cleanText(q.query);
    if (topK <= 0 || q.documentIds?.length === 0 || text.trim() === '') return [];
    const filtered = q.documentIds !== null || q.filter !== null;
    const plan = this.planSearch(await this.countWords(q.orgId, text, filtered));
    if (plan === null) return [];

    // The filters, on a document `d`; their values are parameters $2 on.
    const filterParams: unknown[] = [];
    const filterParam = (value: unknown) => {
      filterParams.push(value);
      return `$${filterParams.length + 1}`;
    };
    const filters: string[] = [];
    if (q.documentIds !== null) {
      filters.push(`d.id = ANY(${filterParam(q.documentIds.map((id) => cleanText(id)))}::text[])`);
    }
    if (q.filter !== null) filters.push(postgresFilter(q.filter, 'd.metadata', filterParam));
    const overBudget = filtered && !plan.exact;
    // Named documents may hold more chunks than the budget and still be ranked whole; a metadata
    // filter alone may not.
    const budgetOfCandidates = candidateBudget(q, this.searchRowBudget);
    const allowed = overBudget
      ? await this.allowedDocuments(q.orgId, filters, filterParams, budgetOfCandidates)
      : null;

    const params: unknown[] = [cleanText(q.orgId), allowed !== null ? plan.every : plan.query];
    const param = (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    };
    // The same filters, renumbered after this statement's first two parameters (documents already
    // chosen by them need no more filtering, and an unused parameter would have no type).
    const shift = params.length - 1;
    if (filtered && allowed === null) params.push(...filterParams);
    const passes = filters.map((f) => f.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + shift}`));
    const passing = (alias: string) =>
      `EXISTS (SELECT FROM ${this.documents} AS d WHERE d.id = ${alias}.document_id AND ${passes.join(' AND ')})`;
    // A parameter the statement does not use would have no type: the budget is bound where used.
    const budget = () => param(this.searchRowBudget);
    const matches = (limit: string) => `SELECT document_id, chunk_index, tsv FROM ${this.chunks}
      WHERE org_id = $1 AND tsv @@ (SELECT query FROM q) LIMIT ${limit}`;

    // At most searchRowBudget matches are ranked. Without filters, or with every match within the
    // budget, they are the words' matches (over the budget, the first ones in table order) and
    // the filters apply to them afterwards. Over the budget, the filters choose the candidates
    // instead, so they never come after the cut: documents few enough to rank all their chunks
    // are read by key and every match among them ranked (exact); with a looser filter, the first
    // matches that pass among LOOSE_FILTER_SCAN_FACTOR × budget. The LIMITs also fence the
    // matches off from the filters; left free, the planner may walk the org's documents and probe
    // the full-text index once per document, seconds in a large org. The tsquery comes in
    // through a sub-select, so the planner does not read its words' frequencies and always takes
    // the GIN index: a plan that scans the table expecting to stop early would, on a wrong
    // estimate, read the whole org. Ranking reads only the tsvector; text and metadata are
    // fetched for the top hits alone.
    let candidates: string;
    if (allowed !== null) {
      candidates = `SELECT r.document_id, r.chunk_index, r.tsv FROM (
          SELECT document_id, chunk_index, tsv FROM ${this.chunks}
          WHERE document_id = ANY(${param(allowed)}::text[]) AND org_id = $1 LIMIT ${param(budgetOfCandidates)}
        ) AS r WHERE r.tsv @@ (SELECT query FROM q)`;
    } else if (overBudget) {
      candidates = `SELECT r.document_id, r.chunk_index, r.tsv
        FROM (${matches(param(this.searchRowBudget * LOOSE_FILTER_SCAN_FACTOR))}) AS r
        WHERE ${passing('r')} LIMIT ${budget()}`;
    } else {
      candidates = `SELECT r.document_id, r.chunk_index, r.tsv FROM (${matches(budget())}) AS r
        ${filtered ? `WHERE ${passing('r')}` : ''}`;
    }
    const limit = param(topK);
    const { rows } = await this.db.query<HitRow>(
      `WITH q AS (SELECT $2::tsquery AS query)
       SELECT c.document_id, c.chunk_index, c.text, c.page_start, c.page_end, d.metadata, top.score
       FROM (SELECT m.document_id, m.chunk_index, ts_rank_cd(m.tsv, (SELECT query FROM q), 1) AS score
             FROM (${candidates}) AS m
             ORDER BY score DESC, m.document_id, m.chunk_index
             LIMIT ${limit}) AS top
       JOIN ${this.chunks} AS c ON c.document_id = top.document_id AND c.chunk_index = top.chunk_index
       JOIN ${this.documents} AS d ON d.id = top.document_id
       ORDER BY top.score DESC, top.document_id, top.chunk_index`,
      params,
    );
    return rows.map((r) => ({
      documentId: r.document_id,
      chunkIndex: r.chunk_index,
      text: r.text,
      score: r.score,
      metadata: r.metadata,
      pageStart: r.page_start,
      pageEnd: r.page_end,
    }));
  }
}
