// The keyword index on PostgreSQL: the chunks table's tsvector column (the words of
// domain/search-words.ts, written as they are; GIN index) and BM25 search (domain/bm25.ts) over
// the chunks of `ready` documents. Its writes run inside the record store's transactions (PgDocumentStore.saveIndex; a delete cascades from the document
// row), so a document turns ready with its last chunk and stops matching the moment it goes.

import { BM25_B, BM25_K1, bm25Idf } from '../../domain/bm25.js';
import { type AnalysisState, DEFAULT_SEARCH_ROW_BUDGET, type SearchIndex } from '../../domain/ports.js';
import {
  candidateBudget,
  LOOSE_FILTER_SCAN_FACTOR,
  MAX_FILTER_DOCUMENTS,
  MAX_QUERY_TERMS,
  RAREST_PRECOUNT,
} from '../../domain/search-limits.js';
import { planTerms } from '../../domain/search-plan.js';
import {
  type Analyzer,
  analyzer,
  queryAnalyzers,
  queryWordsOf,
  type SearchLanguage,
} from '../../domain/search-words.js';
import { cleanText } from '../../domain/text.js';
import type { ChunkRow, Metadata, SearchHit, SearchQuery, StoredChunk } from '../../domain/types.js';
import type { PgDatabase, Queryable } from './database.js';
import { postgresFilter } from './filter-sql.js';
import { tsvectorLiteral } from './tsvector.js';

export interface PgKeywordIndexOptions {
  /** Most matching chunks one query may rank (default DEFAULT_SEARCH_ROW_BUDGET). */
  searchRowBudget?: number;
  /** SEARCH_LANGUAGE: how chunks and queries become words (default 'english'). */
  language?: SearchLanguage;
}

type Written = SearchLanguage | 'legacy' | null;

interface AnalysisRow {
  written: Written;
  reindex_target: SearchLanguage | null;
  reindex_after_document: string | null;
  reindex_after_chunk: number | null;
}

/**
 * How long a process trusts the analysis it last read before reading it again: a reindex run
 * elsewhere finishing is seen within this time (until then queries also look for the old words).
 */
const ANALYSIS_TTL_MS = 5_000;

interface WordCount {
  /** The word as a quoted tsquery literal. */
  literal: string;
  /** The org's chunks that hold it, counted up to the row budget + 1; null when not counted. */
  rows: number | null;
}

interface RankedTerm {
  /** The word as a quoted tsquery literal. */
  literal: string;
  /** The org's chunks that hold it (capped at the row budget + 1). */
  rows: number;
}

interface SearchPlan {
  /** The words to rank with, rarest first (OR-ed, they are the tsquery). */
  chosen: RankedTerm[];
  /** Every word that matches anything, rarest first. */
  every: RankedTerm[];
  /** Whether `chosen` is every word, with every match within the budget. */
  exact: boolean;
}

interface OrgStats {
  chunks: number;
  meanTokens: number;
  at: number;
}

/** How long an org's chunk count and mean chunk length are reused before being read again. */
const ORG_STATS_TTL_MS = 60_000;
/** Orgs whose statistics are remembered at once (the map is cleared when full). */
const ORG_STATS_CACHED = 10_000;

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
  private readonly analysisTable: string;
  private readonly searchRowBudget: number;
  private readonly analyzer: Analyzer;
  private written: { value: Written; at: number } | null = null;
  private readonly stats = new Map<string, OrgStats>();

  constructor(
    private readonly db: PgDatabase,
    opts: PgKeywordIndexOptions = {},
  ) {
    this.documents = db.table('documents');
    this.chunks = db.table('chunks');
    this.analysisTable = db.table('search_analysis');
    this.searchRowBudget = opts.searchRowBudget ?? DEFAULT_SEARCH_ROW_BUDGET;
    this.analyzer = analyzer(opts.language ?? 'english');
  }

  private async writtenAnalysis(): Promise<Written> {
    const now = Date.now();
    if (this.written !== null && now - this.written.at < ANALYSIS_TTL_MS) return this.written.value;
    const { rows } = await this.db.query<{ written: Written }>(`SELECT written FROM ${this.analysisTable}`);
    this.written = { value: rows[0]?.written ?? null, at: now };
    return this.written.value;
  }

  async adoptAnalysis(): Promise<void> {
    await this.db.query(`UPDATE ${this.analysisTable} SET written = $1 WHERE written IS NULL`, [
      this.analyzer.language,
    ]);
    this.written = null;
  }

  async analysisState(): Promise<AnalysisState> {
    this.written = null;
    const written = await this.writtenAnalysis();
    const configured = this.analyzer.language;
    return { configured, written, reindexNeeded: written !== null && written !== configured };
  }

  /**
   * Rewrites the tsvectors of the next `limit` chunks in key order. The state row is locked for
   * the batch, so two reindex runs take turns instead of rewriting the same chunks.
   */
  async reindexBatch(limit: number): Promise<{ rewritten: number; done: boolean }> {
    const configured = this.analyzer.language;
    const result = await this.db.transaction(async (tx) => {
      const { rows: states } = await tx.query<AnalysisRow>(
        `SELECT written, reindex_target, reindex_after_document, reindex_after_chunk
         FROM ${this.analysisTable} FOR UPDATE`,
      );
      const state = states[0];
      if (!state || state.written === null || state.written === configured) {
        return { rewritten: 0, done: true };
      }
      const resume = state.reindex_target === configured && state.reindex_after_document !== null;
      const { rows } = await tx.query<{ document_id: string; chunk_index: number; text: string }>(
        `SELECT document_id, chunk_index, text FROM ${this.chunks}
         WHERE (document_id, chunk_index) > ($1, $2) ORDER BY document_id, chunk_index LIMIT $3`,
        [resume ? state.reindex_after_document : '', resume ? state.reindex_after_chunk : -1, limit],
      );
      if (rows.length > 0) {
        await tx.query(
          `UPDATE ${this.chunks} AS c SET tsv = v.tsv::tsvector
           FROM unnest($1::text[], $2::int[], $3::text[]) AS v(document_id, chunk_index, tsv)
           WHERE c.document_id = v.document_id AND c.chunk_index = v.chunk_index`,
          [
            rows.map((r) => r.document_id),
            rows.map((r) => r.chunk_index),
            rows.map((r) => tsvectorLiteral(this.analyzer.words(r.text))),
          ],
        );
      }
      const done = rows.length < limit;
      const last = rows[rows.length - 1];
      if (done) {
        await tx.query(
          `UPDATE ${this.analysisTable} SET written = $1, reindex_target = NULL,
             reindex_after_document = NULL, reindex_after_chunk = NULL`,
          [configured],
        );
      } else if (last) {
        await tx.query(
          `UPDATE ${this.analysisTable} SET reindex_target = $1, reindex_after_document = $2,
             reindex_after_chunk = $3`,
          [configured, last.document_id, last.chunk_index],
        );
      }
      return { rewritten: rows.length, done };
    });
    if (result.done) this.written = null;
    return result;
  }

  /** Up to `limit` of the document's chunks after index `afterIndex`, in index order. */
  async readChunks(documentId: string, afterIndex: number, limit: number): Promise<StoredChunk[]> {
    const { rows } = await this.db.query<StoredChunk>(
      `SELECT chunk_index AS "index", text, token_count AS "tokenCount", char_start AS "charStart",
              char_end AS "charEnd", page_start AS "pageStart", page_end AS "pageEnd"
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
   * Writes chunks of the document with their tsvector (their words, computed by the pipeline or
   * here), in the caller's transaction: the record store's, which marks the document ready with
   * its last chunk.
   */
  async writeChunks(
    tx: Queryable,
    documentId: string,
    orgId: string,
    batch: readonly ChunkRow[],
  ): Promise<void> {
    const texts = batch.map((c) => cleanText(c.text));
    await tx.query(
      `INSERT INTO ${this.chunks}
         (document_id, org_id, chunk_index, text, token_count, char_start, char_end, page_start, page_end, tsv)
       SELECT $1, $2, i, t, n, cs, ce, ps, pe, v::tsvector
       FROM unnest($3::int[], $4::text[], $5::int[], $6::int[], $7::int[], $8::int[], $9::int[], $10::text[])
         AS u(i, t, n, cs, ce, ps, pe, v)`,
      [
        documentId,
        orgId,
        batch.map((c) => c.index),
        texts,
        batch.map((c) => c.tokenCount),
        batch.map((c) => c.charStart),
        batch.map((c) => c.charEnd),
        batch.map((c) => c.pageStart),
        batch.map((c) => c.pageEnd),
        batch.map((c, i) => tsvectorLiteral(c.words ?? this.analyzer.words(texts[i] as string))),
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
  private async countWords(orgId: string, words: string[], countOne: boolean): Promise<WordCount[]> {
    // The query's words come from the same analysis as the chunks' (domain/search-words.ts). Each
    // becomes a quoted literal: user input never reaches tsquery syntax, so no string can make it
    // throw. Quoting rules of tsquery input: a quote is doubled, a backslash escaped.
    const capped = (literal: string, cap: string) => `(SELECT count(*)::int FROM (
        SELECT FROM ${this.chunks} AS c WHERE c.org_id = $1 AND c.tsv @@ ${literal}::tsquery LIMIT ${cap}
      ) AS capped)`;
    const { rows } = await this.db.query<WordCount>(
      `WITH words AS (
         SELECT '''' || replace(replace(lexeme, '\\', '\\\\'), '''', '''''') || '''' AS literal,
                position
         FROM unnest($2::text[]) WITH ORDINALITY AS w(lexeme, position)
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
      [cleanText(orgId), words, MAX_QUERY_TERMS, this.searchRowBudget + 1, countOne, RAREST_PRECOUNT],
    );
    return rows;
  }

  /**
   * The words to rank with (domain/search-plan.ts). A query whose rarest word alone exceeds the
   * budget is ranked among a bounded subset of that word's matches. null when no word matches
   * anything.
   */
  private planSearch(words: WordCount[]): SearchPlan | null {
    const [only] = words;
    if (words.length === 1 && only && only.rows === null) {
      const one = [{ literal: only.literal, rows: 1 }];
      return { chosen: one, every: one, exact: false };
    }
    const plan = planTerms(
      words.map((w) => ({ term: w, rows: w.rows ?? 0 })),
      this.searchRowBudget,
    );
    if (plan === null) return null;
    const counted = (w: WordCount) => ({ literal: w.literal, rows: w.rows ?? 0 });
    return { chosen: plan.chosen.map(counted), every: plan.every.map(counted), exact: plan.exact };
  }

  /**
   * How many chunks the org's ready documents hold and their mean length in tokens, for BM25's
   * document frequencies and length normalisation; read at most once a minute per org.
   */
  private async orgStats(orgId: string): Promise<OrgStats> {
    const now = Date.now();
    const cached = this.stats.get(orgId);
    if (cached && now - cached.at < ORG_STATS_TTL_MS) return cached;
    const { rows } = await this.db.query<{ chunks: number; tokens: number }>(
      `SELECT coalesce(sum(chunk_count), 0)::float8 AS chunks, coalesce(sum(token_count), 0)::float8 AS tokens
       FROM ${this.documents} WHERE org_id = $1 AND status = 'ready'`,
      [cleanText(orgId)],
    );
    const chunks = rows[0]?.chunks ?? 0;
    const tokens = rows[0]?.tokens ?? 0;
    const stats = { chunks, meanTokens: chunks > 0 && tokens > 0 ? tokens / chunks : 1, at: now };
    if (this.stats.size >= ORG_STATS_CACHED) this.stats.clear();
    this.stats.set(orgId, stats);
    return stats;
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
    if (topK <= 0 || q.documentIds?.length === 0) return [];
    const analyzers = queryAnalyzers(this.analyzer.language, await this.writtenAnalysis());
    const words = queryWordsOf(q.query, analyzers);
    if (words.length === 0) return [];
    const filtered = q.documentIds !== null || q.filter !== null;
    const plan = this.planSearch(await this.countWords(q.orgId, words, filtered));
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

    // Documents few enough to rank whole are ranked with every word; otherwise the chosen ones.
    const ranked = allowed !== null ? plan.every : plan.chosen;
    const params: unknown[] = [cleanText(q.orgId), ranked.map((t) => t.literal).join(' | ')];
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
    const matches = (limit: string) => `SELECT document_id, chunk_index, token_count, tsv FROM ${this.chunks}
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
      candidates = `SELECT r.document_id, r.chunk_index, r.token_count, r.tsv FROM (
          SELECT document_id, chunk_index, token_count, tsv FROM ${this.chunks}
          WHERE document_id = ANY(${param(allowed)}::text[]) AND org_id = $1 LIMIT ${param(budgetOfCandidates)}
        ) AS r WHERE r.tsv @@ (SELECT query FROM q)`;
    } else if (overBudget) {
      candidates = `SELECT r.document_id, r.chunk_index, r.token_count, r.tsv
        FROM (${matches(param(this.searchRowBudget * LOOSE_FILTER_SCAN_FACTOR))}) AS r
        WHERE ${passing('r')} LIMIT ${budget()}`;
    } else {
      candidates = `SELECT r.document_id, r.chunk_index, r.token_count, r.tsv FROM (${matches(budget())}) AS r
        ${filtered ? `WHERE ${passing('r')}` : ''}`;
    }
    // BM25 as embedded (domain/bm25.ts) over the ranked words: a single-word tsquery's cover
    // density without normalisation is 0.1 × the word's positions in the chunk, its term
    // frequency; a chunk's length is its token count, against the org's mean. A chunk's tsvector
    // is usually stored out of line (TOAST): `|| ''` reads it once per chunk into memory (OFFSET 0
    // keeps that a step of its own), where each word's lookup would otherwise read it again,
    // twice the time of the whole query with ten words (bench/RESULTS.md, section 11).
    const stats = await this.orgStats(q.orgId);
    const total = Math.max(stats.chunks, ...ranked.map((t) => t.rows));
    const literals = param(ranked.map((t) => t.literal));
    const idfs = param(ranked.map((t) => bm25Idf(total, t.rows)));
    const meanTokens = param(stats.meanTokens);
    const limit = param(topK);
    const { rows } = await this.db.query<HitRow>(
      `WITH q AS (SELECT $2::tsquery AS query),
       terms AS (SELECT t.literal::tsquery AS query, t.idf
                 FROM unnest(${literals}::text[], ${idfs}::float8[]) AS t(literal, idf))
       SELECT c.document_id, c.chunk_index, c.text, c.page_start, c.page_end, d.metadata, top.score
       FROM (SELECT m.document_id, m.chunk_index,
               (SELECT coalesce(sum(t.idf * f.tf * ${BM25_K1 + 1}
                  / (f.tf + ${BM25_K1} * (${1 - BM25_B} + ${BM25_B} * m.token_count / ${meanTokens}::float8))), 0)
                FROM terms AS t CROSS JOIN LATERAL (SELECT ts_rank_cd(v.tsv, t.query, 0) * 10 AS tf) AS f
                WHERE f.tf > 0) AS score
             FROM (${candidates}) AS m
             CROSS JOIN LATERAL (SELECT m.tsv || ''::tsvector AS tsv OFFSET 0) AS v
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
