// The keyword index on PostgreSQL: the chunks' words (domain/search-words.ts) as tsvectors and
// BM25 search (domain/bm25.ts) over the chunks of `ready` documents. Two layouts: `tsv`, the words
// as they are in a GIN index with the org id (btree_gin), always written; and `terms`, the words
// prefixed with the org's key in a RUM index (positions stored in the index, ordered scans), used
// when the rum extension is installed and every chunk has its terms: each org then has posting
// lists of its own, and a word's chunks of highest frequency are picked inside the index, so a
// query reads the table for a bounded number of candidates (measured against GIN in
// bench/RESULTS.md, section 4). Its writes run inside the record store's transactions
// (PgDocumentStore.saveIndex; a delete cascades from the document row), so a document turns ready
// with its last chunk and stops matching the moment it goes.

import { AsyncLocalStorage } from 'node:async_hooks';
import { BM25_B, BM25_K1, bm25Ceiling, bm25Idf, keywordScore } from '../../domain/bm25.js';
import type { Filter } from '../../domain/filter.js';
import { detectLanguage } from '../../domain/language-detection.js';
import {
  type AnalysisState,
  DEFAULT_SEARCH_ROW_BUDGET,
  type KeywordIndex,
  type KeywordIndexWriter,
} from '../../domain/ports.js';
import {
  candidateBudget,
  LOOSE_FILTER_SCAN_FACTOR,
  MAX_FILTER_DOCUMENTS,
  MAX_QUERY_TERMS,
  RAREST_PRECOUNT,
} from '../../domain/search-limits.js';
import { planTerms, rarestTerms, type TermPlan } from '../../domain/search-plan.js';
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
import { cleanText } from '../../domain/text.js';
import type { ChunkRow, KeywordHit, Metadata, SearchQuery, StoredChunk } from '../../domain/types.js';
import { BinaryArray, int4Array, TEXT } from './binary-array.js';
import type { PgDatabase, Queryable } from './database.js';
import { postgresAccessCondition, postgresFilter, postgresFilterDocuments } from './filter-sql.js';
import { ensureRum, RUM_INDEX, rumIndexStatement } from './migrations.js';
import { quoteLexeme, unquoteLexeme, writeTsvectorLiterals } from './tsvector.js';

export interface PgKeywordIndexOptions {
  /** Most matching chunks one query may rank (default DEFAULT_SEARCH_ROW_BUDGET). */
  searchRowBudget?: number;
  /** SEARCH_LANGUAGE: how chunks and queries become words (default 'english'). */
  language?: SearchLanguage;
  /**
   * Whether to search the RUM index when it is ready and `docindex reindex` may build it (default
   * true); false keeps the GIN index (as a server without the extension does).
   */
  rum?: boolean;
}

/**
 * On the RUM path a query ranks about this many candidate chunks in all, a read of the table and of
 * the chunk's terms each: half are the chunks that hold the query's chosen words most, all of them
 * together (an ordered RUM scan over their OR, so chunks that hold several words come first), and
 * half are each word's share (within RUM_WORD_CANDIDATES_MIN..MAX) of its own chunks of highest
 * term frequency, or all its matches when they are no more, so the ranking is exact BM25 as
 * embedded when no chosen word has more. Bounding the total bounds a long query's work as a short
 * one's.
 */
/** What restricts a search to some of the org's documents besides named ones. */
interface DocumentRestriction {
  filter: Filter | null;
  partitions: readonly string[] | null;
  /** The principals a request acts for: documents without an access list, or sharing one. */
  principals: readonly string[] | null;
}

/** The condition on a document `d` that it is in one of the partitions. */
function partitionCondition(partitions: readonly string[], param: (value: unknown) => string): string {
  return `d.partition = ANY(${param(partitions.map((p) => cleanText(p)))}::text[])`;
}

export const RUM_CANDIDATES = 600;
export const RUM_WORD_CANDIDATES_MAX = 300;
export const RUM_WORD_CANDIDATES_MIN = 20;
/**
 * A word is counted (for its IDF) up to the least frequency the column statistics list, or this
 * many matches when there are no statistics yet: a bound on the table reads a count makes.
 */
const RUM_COUNT_WITHOUT_STATISTICS = 2_000;
/** How long the common terms' frequencies (pg_stats) are reused before being read again. */
const TERM_STATS_TTL_MS = 60_000;

type Written = WrittenAnalysis | null;

interface AnalysisRow {
  written: Written;
  terms_ready: boolean;
  terms_after_document: string | null;
  terms_after_chunk: number | null;
  reindex_target: WrittenAnalysis | null;
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

/** A query's words as the RUM path counts and plans them (PgKeywordIndex.rumCounts). */
interface RumCounts {
  /** The org's key before each term ("<key base 36>_"). */
  prefix: string;
  /** How many of its chunks of highest frequency each chosen word brings (searchRum). */
  perWord: number;
  /** Over the prefixed terms' literals. */
  plan: TermPlan<RankedTerm>;
  rowsOf: Map<RankedTerm, number>;
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

/** The transaction of the search running in this async context (PgKeywordIndex.search). */
const searchSnapshot = new AsyncLocalStorage<Queryable>();

/** What goes before each word of an org's terms ("<key base 36>_<word>"), as SQLite's FTS5 terms. */
function termPrefix(key: number): string {
  return `${key.toString(36)}_`;
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

/** The index and its writes, which the record store makes in its own transactions (`tx`). */
export class PgKeywordIndex implements KeywordIndex, KeywordIndexWriter<Queryable, 'async'> {
  private readonly documents: string;
  private readonly metadata: string;
  private readonly chunks: string;
  private readonly analysisTable: string;
  private readonly searchRowBudget: number;
  private readonly language: SearchLanguage;
  /** The analysis of chunks that come without their words. */
  private readonly analyzer: Analyzer;
  private readonly rumWanted: boolean;
  private written: { value: Written; termsReady: boolean; at: number } | null = null;
  private readonly stats = new Map<string, OrgStats>();
  private readonly orgKeys = new Map<string, number>();
  private termStats: { rows: Map<string, number>; floor: number; at: number } | null = null;

  constructor(
    private readonly db: PgDatabase,
    opts: PgKeywordIndexOptions = {},
  ) {
    this.documents = db.table('documents');
    this.metadata = db.table('document_metadata');
    this.chunks = db.table('chunks');
    this.analysisTable = db.table('search_analysis');
    this.searchRowBudget = opts.searchRowBudget ?? DEFAULT_SEARCH_ROW_BUDGET;
    this.language = opts.language ?? 'auto';
    this.analyzer = documentAnalyzer(fallbackLanguage(this.language));
    this.rumWanted = opts.rum ?? true;
  }

  private async readAnalysis(): Promise<{ value: Written; termsReady: boolean }> {
    const now = Date.now();
    if (this.written !== null && now - this.written.at < ANALYSIS_TTL_MS) return this.written;
    const { rows } = await this.db.query<{ written: Written; terms_ready: boolean }>(
      `SELECT written, terms_ready FROM ${this.analysisTable}`,
    );
    this.written = { value: rows[0]?.written ?? null, termsReady: rows[0]?.terms_ready ?? false, at: now };
    return this.written;
  }

  private async writtenAnalysis(): Promise<Written> {
    return (await this.readAnalysis()).value;
  }

  /** Whether searches take the RUM path: wanted, and every chunk's terms indexed. */
  private async rumReady(): Promise<boolean> {
    return this.rumWanted && (await this.readAnalysis()).termsReady;
  }

  /**
   * The org's key inside terms, made on its first write in the caller's transaction `db` (no
   * second connection is needed while it holds one). A key this transaction made is not cached:
   * the transaction may still roll back; a committed one, read back, is.
   * null when the org has none yet and `create` is false: it has no terms.
   */
  private async orgKey(db: Queryable, orgId: string, create: boolean): Promise<number | null> {
    const id = cleanText(orgId);
    const cached = this.orgKeys.get(id);
    if (cached !== undefined) return cached;
    const keys = this.db.table('search_org_keys');
    if (create) {
      const made = await db.query<{ key: number }>(
        `INSERT INTO ${keys} (org_id) VALUES ($1) ON CONFLICT (org_id) DO NOTHING RETURNING key`,
        [id],
      );
      const key = made.rows[0]?.key;
      if (key !== undefined) return key;
    }
    // A row this very transaction inserted (an earlier batch of it) is not committed yet either.
    const { rows } = await db.query<{ key: number; mine: boolean }>(
      `SELECT key, coalesce(xmin = pg_current_xact_id_if_assigned()::xid, false) AS mine
       FROM ${keys} WHERE org_id = $1`,
      [id],
    );
    const key = rows[0]?.key ?? null;
    if (key !== null && !rows[0]?.mine) {
      if (this.orgKeys.size >= ORG_STATS_CACHED) this.orgKeys.clear();
      this.orgKeys.set(id, key);
    }
    return key;
  }

  /**
   * The language of a chunk's document; for one indexed before documents had a language, told
   * from this chunk and kept on the document (its other chunks are then analysed alike).
   */
  private async languageOf(
    tx: Queryable,
    row: { document_id: string; language: string | null; text: string },
  ): Promise<string | null> {
    if (row.language !== null) return row.language;
    const language = documentLanguage(null, () => detectLanguage(row.text), this.language);
    await tx.query(`UPDATE ${this.documents} SET language = $1 WHERE id = $2 AND language IS NULL`, [
      language,
      row.document_id,
    ]);
    await this.noteLanguage(row.document_id, language, tx);
    return language;
  }

  /**
   * Records, in the caller's transaction, that the document's org has documents analysed in this
   * language (search_languages, which queries are read with).
   */
  async noteLanguage(documentId: string, language: string | null, tx: Queryable): Promise<void> {
    await tx.query(
      `INSERT INTO ${this.db.table('search_languages')} (org_id, language)
       SELECT org_id, $2 FROM ${this.documents} WHERE id = $1 ON CONFLICT DO NOTHING`,
      [documentId, documentAnalyzer(language).language],
    );
  }

  /** The analyses of the org's documents (search_languages), and the query's own. */
  private async queryLanguages(orgId: string, language: string | null | undefined): Promise<string[]> {
    const { rows } = await this.db.query<{ language: string }>(
      `SELECT language FROM ${this.db.table('search_languages')} WHERE org_id = $1`,
      [cleanText(orgId)],
    );
    const languages = rows.map((r) => r.language);
    if (language) languages.push(language);
    return languages;
  }

  /** Whether this server has (or can install) the rum extension. */
  private async rumAvailable(): Promise<boolean> {
    const { rows } = await this.db.query<{ ok: boolean }>(
      `SELECT EXISTS (SELECT FROM pg_available_extensions WHERE name = 'rum') AS ok`,
    );
    return rows[0]?.ok ?? false;
  }

  async adoptAnalysis(): Promise<void> {
    await this.db.query(`UPDATE ${this.analysisTable} SET written = $1 WHERE written IS NULL`, [ANALYSIS]);
    this.written = null;
  }

  async analysisState(): Promise<AnalysisState> {
    this.written = null;
    const { value: written, termsReady } = await this.readAnalysis();
    const configured = ANALYSIS;
    // Terms still to fill (chunks written before migration 60) on a server that has RUM.
    const termsNeeded = this.rumWanted && !termsReady && (await this.rumAvailable());
    return {
      configured,
      written,
      reindexNeeded: (written !== null && written !== configured) || termsNeeded,
    };
  }

  /**
   * Rewrites the words of the next `limit` chunks in key order: first, when SEARCH_LANGUAGE
   * changed, their tsvectors and terms; then, on a server with RUM whose older chunks have no
   * terms yet, their terms, after which the RUM index is built CONCURRENTLY (writes go on) and
   * searches move to it. The state row is locked for the batch, so two reindex runs take turns
   * instead of rewriting the same chunks.
   */
  async reindexBatch(limit: number): Promise<{ rewritten: number; done: boolean }> {
    const configured = ANALYSIS;
    const fillTerms = this.rumWanted && (await this.rumAvailable());
    const result = await this.db.transaction(async (tx) => {
      const { rows: states } = await tx.query<AnalysisRow>(
        `SELECT written, reindex_target, reindex_after_document, reindex_after_chunk, terms_ready,
                terms_after_document, terms_after_chunk
         FROM ${this.analysisTable} FOR UPDATE`,
      );
      const state = states[0];
      if (!state) return { rewritten: 0, done: true, buildIndex: false };
      const language = state.written !== null && state.written !== configured;
      const terms = fillTerms && !state.terms_ready;
      if (!language && !terms) return { rewritten: 0, done: true, buildIndex: false };
      const after = language
        ? state.reindex_target === configured && state.reindex_after_document !== null
          ? [state.reindex_after_document, state.reindex_after_chunk]
          : ['', -1]
        : state.terms_after_document !== null
          ? [state.terms_after_document, state.terms_after_chunk]
          : ['', -1];
      const { rows } = await tx.query<{
        document_id: string;
        chunk_index: number;
        org_id: string;
        text: string;
        language: string | null;
      }>(
        `SELECT c.document_id, c.chunk_index, c.org_id, c.text, d.language FROM ${this.chunks} AS c
         LEFT JOIN ${this.documents} AS d ON d.id = c.document_id
         WHERE (c.document_id, c.chunk_index) > ($1, $2) ORDER BY c.document_id, c.chunk_index LIMIT $3`,
        [...after, limit],
      );
      if (rows.length > 0) {
        const tsv = new BinaryArray(TEXT);
        const terms = new BinaryArray(TEXT);
        const languages = new Map<string, string | null>();
        for (const r of rows) {
          const key = (await this.orgKey(tx, r.org_id, true)) as number;
          const analysed = languages.has(r.document_id)
            ? (languages.get(r.document_id) ?? null)
            : await this.languageOf(tx, r);
          languages.set(r.document_id, analysed);
          const words = documentAnalyzer(analysed).words(r.text);
          // Only the terms when the analysis is unchanged: the CASE below keeps the stored tsv.
          writeTsvectorLiterals(words, termPrefix(key), language ? tsv : null, terms);
          if (!language) tsv.text('');
        }
        await tx.query(
          `UPDATE ${this.chunks} AS c SET tsv = CASE WHEN $5 THEN v.tsv::tsvector ELSE c.tsv END,
             terms = v.terms::tsvector
           FROM unnest($1::text[], $2::int[], $3::text[], $4::text[]) AS v(document_id, chunk_index, tsv, terms)
           WHERE c.document_id = v.document_id AND c.chunk_index = v.chunk_index`,
          [
            rows.map((r) => r.document_id),
            rows.map((r) => r.chunk_index),
            tsv.finish(),
            terms.finish(),
            language,
          ],
        );
      }
      const finished = rows.length < limit;
      const last = rows[rows.length - 1];
      if (language && finished) {
        await tx.query(
          `UPDATE ${this.analysisTable} SET written = $1, reindex_target = NULL,
             reindex_after_document = NULL, reindex_after_chunk = NULL`,
          [configured],
        );
      } else if (language && last) {
        await tx.query(
          `UPDATE ${this.analysisTable} SET reindex_target = $1, reindex_after_document = $2,
             reindex_after_chunk = $3`,
          [configured, last.document_id, last.chunk_index],
        );
      } else if (!finished && last) {
        await tx.query(`UPDATE ${this.analysisTable} SET terms_after_document = $1, terms_after_chunk = $2`, [
          last.document_id,
          last.chunk_index,
        ]);
      }
      // The language rewrite wrote terms too, so the terms fill that follows starts afresh only
      // for what it has not covered; it is simpler to fill everything once more.
      const done = finished && !terms;
      return { rewritten: rows.length, done, buildIndex: finished && !language && terms };
    });
    if (result.buildIndex) await this.buildRumIndex();
    this.written = null;
    return { rewritten: result.rewritten, done: result.done || result.buildIndex };
  }

  /**
   * Builds the RUM index without blocking writes (CREATE INDEX CONCURRENTLY, on a connection of
   * its own with no statement timeout) and moves searches to it. A build cut off earlier leaves
   * an invalid index, dropped and built again.
   */
  private async buildRumIndex(): Promise<void> {
    if (!(await this.db.transaction((tx) => ensureRum(tx)))) return;
    const client = await this.db.connect();
    try {
      await client.query(`SET statement_timeout = 0`);
      const index = `${this.db.quotedSchema}.${RUM_INDEX}`;
      const { rows } = await client.query<{ valid: boolean | null }>(
        `SELECT (SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass($1)) AS valid`,
        [index],
      );
      if (rows[0]?.valid === false) await client.query(`DROP INDEX CONCURRENTLY ${index}`);
      await client.query(rumIndexStatement(this.db, true));
      await client.query(
        `UPDATE ${this.analysisTable} SET terms_ready = true, terms_after_document = NULL, terms_after_chunk = NULL`,
      );
    } finally {
      // The session's settings were changed: the connection does not go back to the pool.
      client.release(true);
    }
  }

  /**
   * Up to `limit` of the document's chunks after index `afterIndex`, in index order; `on` a
   * caller's transaction, so the rows belong to its snapshot.
   */
  async readChunks(
    documentId: string,
    afterIndex: number,
    limit: number,
    on: Queryable,
  ): Promise<StoredChunk[]> {
    const { rows } = await on.query<StoredChunk>(
      `SELECT chunk_index AS "index", text, token_count AS "tokenCount", char_start AS "charStart",
              char_end AS "charEnd", page_start AS "pageStart", page_end AS "pageEnd"
       FROM ${this.chunks} WHERE document_id = $1 AND chunk_index > $2 ORDER BY chunk_index LIMIT $3`,
      [documentId, afterIndex, limit],
    );
    return rows;
  }

  /**
   * Forgets a purged org's key inside terms, in the caller's transaction, once none of its chunks
   * are left (an identity column never hands the key out again).
   */
  async forgetOrg(orgId: string, tx: Queryable): Promise<void> {
    await tx.query(`DELETE FROM ${this.db.table('search_org_keys')} WHERE org_id = $1`, [cleanText(orgId)]);
    await tx.query(`DELETE FROM ${this.db.table('search_languages')} WHERE org_id = $1`, [cleanText(orgId)]);
    this.orgKeys.delete(cleanText(orgId));
  }

  /** Deletes the document's chunks, in the caller's transaction. */
  async deleteChunks(documentId: string, tx: Queryable): Promise<void> {
    await tx.query(`DELETE FROM ${this.chunks} WHERE document_id = $1`, [documentId]);
  }

  /**
   * Writes chunks of the document with their tsvector (their words, computed by the pipeline or
   * here), in the caller's transaction: the record store's, which marks the document ready with
   * its last chunk.
   */
  async writeChunks(
    documentId: string,
    orgId: string,
    batch: readonly ChunkRow[],
    tx: Queryable,
  ): Promise<void> {
    const prefix = termPrefix((await this.orgKey(tx, orgId, true)) as number);
    await tx.query(
      `INSERT INTO ${this.chunks}
         (document_id, org_id, chunk_index, text, token_count, char_start, char_end, page_start, page_end, tsv, terms)
       SELECT $1, $2, i, t, n, cs, ce, ps, pe, v::tsvector, w::tsvector
       FROM unnest($3::int[], $4::text[], $5::int[], $6::int[], $7::int[], $8::int[], $9::int[], $10::text[], $11::text[])
         AS u(i, t, n, cs, ce, ps, pe, v, w)`,
      [documentId, orgId, ...this.chunkColumns(batch, prefix)],
    );
  }

  /**
   * The unnest columns of writeChunks, as binary arrays (binary-array.ts): index, text, token
   * count, character and page ranges, then the tsvector literals of the words and of the terms.
   */
  private chunkColumns(batch: readonly ChunkRow[], prefix: string): Buffer[] {
    let chars = 0;
    for (const c of batch) chars += c.text.length;
    // Room for ASCII text and the literals it makes (0.9-1.05 and 1.0-1.3 bytes a character of
    // prose, in chunks of 500 to 8,000 characters), so that the buffers seldom grow.
    const text = new BinaryArray(TEXT, chars + 4 * batch.length);
    const tsv = new BinaryArray(TEXT, Math.ceil(1.25 * chars));
    const terms = new BinaryArray(TEXT, Math.ceil(1.5 * chars));
    for (const c of batch) {
      const cleaned = cleanText(c.text);
      text.text(cleaned);
      writeTsvectorLiterals(c.words ?? this.analyzer.words(cleaned), prefix, tsv, terms);
    }
    return [
      int4Array(batch.map((c) => c.index)),
      text.finish(),
      int4Array(batch.map((c) => c.tokenCount)),
      int4Array(batch.map((c) => c.charStart)),
      int4Array(batch.map((c) => c.charEnd)),
      int4Array(batch.map((c) => c.pageStart)),
      int4Array(batch.map((c) => c.pageEnd)),
      tsv.finish(),
      terms.finish(),
    ];
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
    const { rows } = await this.reader.query<WordCount>(
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
    const { rows } = await this.reader.query<{ chunks: number; tokens: number }>(
      `SELECT coalesce(sum(chunk_count), 0)::float8 AS chunks, coalesce(sum(token_count), 0)::float8 AS tokens
       FROM ${this.documents} WHERE org_id = $1 AND status = 'ready' AND deleted_at IS NULL`,
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
    const { rows } = await this.reader.query<{ id: string; chunk_count: number }>(
      `SELECT d.id, d.chunk_count FROM ${this.documents} AS d
       WHERE d.org_id = $1 AND d.chunk_count > 0 AND d.deleted_at IS NULL AND ${filters.join(' AND ')}
       LIMIT ${MAX_FILTER_DOCUMENTS + 1}`,
      [cleanText(orgId), ...params],
    );
    const chunks = rows.reduce((n, r) => n + r.chunk_count, 0);
    if (rows.length > MAX_FILTER_DOCUMENTS || chunks > budget) return null;
    return rows.map((r) => r.id);
  }

  /**
   * The documents that pass a metadata filter and are in the partitions (no named documents),
   * from the document_metadata index rather than each document's jsonb and from the documents'
   * (org, partition) index: null when they are more than MAX_FILTER_DOCUMENTS or hold more chunks
   * than `budget`. A restriction that few documents pass costs an index range.
   */
  private async documentsPassing(
    q: SearchQuery,
    { filter, partitions, principals }: DocumentRestriction,
    budget: number,
  ): Promise<string[] | null> {
    const params: unknown[] = [cleanText(q.orgId)];
    const param = (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    };
    const from =
      filter === null
        ? `${this.documents} AS d`
        : `(${postgresFilterDocuments(filter, '$1', { documents: this.documents, metadata: this.metadata }, param)}) AS p
           JOIN ${this.documents} AS d ON d.id = p.id`;
    const inPartitions = partitions === null ? '' : ` AND ${partitionCondition(partitions, param)}`;
    const visible =
      principals === null ? '' : ` AND ${postgresAccessCondition('d.access', principals, param)}`;
    const { rows } = await this.reader.query<{ id: string; chunk_count: number }>(
      `SELECT d.id, d.chunk_count FROM ${from}
       WHERE d.org_id = $1 AND d.chunk_count > 0 AND d.deleted_at IS NULL${inPartitions}${visible}
       LIMIT ${MAX_FILTER_DOCUMENTS + 1}`,
      params,
    );
    const chunks = rows.reduce((n, r) => n + r.chunk_count, 0);
    if (rows.length > MAX_FILTER_DOCUMENTS || chunks > budget) return null;
    return rows.map((r) => r.id);
  }

  /** Where a search's statements run: its snapshot (see search) when inside one. */
  private get reader(): Queryable {
    return searchSnapshot.getStore() ?? this.db;
  }

  /** `fn` in the search's own transaction when inside one (SET LOCAL then lasts to its end), else in a new one. */
  private inSearchTransaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    const tx = searchSnapshot.getStore();
    return tx ? fn(tx) : this.db.transaction(fn);
  }

  /**
   * A search counts its words, plans, then ranks, in several statements: all of them read one
   * snapshot, so a version swap committing in between cannot make the plan's words (counted
   * before it) miss the chunks ranked after it, and a query never sees neither version.
   */
  async search(q: SearchQuery): Promise<KeywordHit[]> {
    return this.db.transaction(async (tx) => {
      await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
      return searchSnapshot.run(tx, () => this.searchInSnapshot(q));
    });
  }

  private async searchInSnapshot(q: SearchQuery): Promise<KeywordHit[]> {
    const topK = Math.floor(q.topK);
    if (topK <= 0 || q.documentIds?.length === 0 || q.partitions?.length === 0) return [];
    const partitions = q.partitions ?? null;
    const [languages, written] = await Promise.all([
      this.queryLanguages(q.orgId, q.language),
      this.writtenAnalysis(),
    ]);
    const analyzers = queryAnalyzers(languages, written, this.language);
    const words = queryWordsOf(q.query, analyzers);
    if (words.length === 0) return [];
    const principals = q.principals ?? null;
    const filtered =
      q.documentIds !== null || q.filter !== null || partitions !== null || principals !== null;
    const rum = await this.rumReady();
    if (!filtered && rum) {
      const counted = await this.rumCounts(q, words);
      return counted === null ? [] : this.searchRum(q, counted);
    }
    // A metadata filter, partitions or principals (no named documents): their documents are looked
    // up first. Few: all their chunks are ranked below. Many: the restriction is applied to the RUM
    // path's ranked candidates, which costs about what none does (a partition holding most of the
    // org is answered as fast as the whole org); only when fewer than topK of those pass does the
    // plan below choose the candidates by it.
    const byMetadata: DocumentRestriction | null =
      q.documentIds === null && (q.filter !== null || partitions !== null || principals !== null)
        ? { filter: q.filter, partitions, principals }
        : null;
    const metadataAllowed =
      byMetadata !== null
        ? await this.documentsPassing(q, byMetadata, candidateBudget(q, this.searchRowBudget))
        : undefined;
    if (metadataAllowed?.length === 0) return [];
    if (metadataAllowed && rum) return this.searchRumAmong(q, words, metadataAllowed);
    let walked: KeywordHit[] = [];
    // A loose metadata filter on RUM: its words are counted once, as the RUM path counts them
    // (not one by one across the org on GIN), for RUM's candidates and for the plan below.
    const rumCounted = byMetadata !== null && rum ? await this.rumCounts(q, words) : undefined;
    if (rumCounted === null) return [];
    // RUM's candidates are RUM_CANDIDATES at most: a top_k near that could never fill from them.
    if (rumCounted && Math.floor(q.topK) * 2 <= RUM_CANDIDATES) {
      walked = await this.searchRum(q, rumCounted, byMetadata);
      if (walked.length >= Math.floor(q.topK)) return walked;
    }
    // Here only when RUM's ranked candidates left fewer than topK passing (or none were asked).
    const plan = rumCounted
      ? this.rumPlan(rumCounted)
      : this.planSearch(await this.countWords(q.orgId, words, filtered));
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
    // The partitions restrict as the filter does: a condition on the document, tested before the
    // matches are ranked, and choosing the candidates when the plan is over budget.
    if (partitions !== null) filters.push(partitionCondition(partitions, filterParam));
    // So does the access list: a request acting for principals ranks only what they may see.
    if (principals !== null) filters.push(postgresAccessCondition('d.access', principals, filterParam));
    if (q.filter !== null) filters.push(postgresFilter(q.filter, 'd.metadata', filterParam));
    const overBudget = filtered && !plan.exact;
    // Named documents may hold more chunks than the budget and still be ranked whole; a metadata
    // filter alone may not.
    const budgetOfCandidates = candidateBudget(q, this.searchRowBudget);
    const allowed =
      metadataAllowed !== undefined
        ? metadataAllowed
        : overBudget
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
    const hits = await this.rank(q, ranked, params, candidates, 'q AS (SELECT $2::tsquery AS query)');
    return hits.length >= walked.length ? hits : walked;
  }

  /**
   * BM25 as embedded (domain/bm25.ts) over the ranked words, of the `candidates` (a statement
   * giving document_id, chunk_index, token_count and tsv, whose parameters are in `params`): a
   * word's term frequency in a chunk is how many positions its tsvector holds for it; a chunk's
   * length is its token count, against the org's mean. Each chunk's tsvector is read once (it is
   * usually stored out of line) and cut down to the query's words in one pass (setweight marks
   * them, ts_filter keeps the marked ones; stored lexemes carry no weight), whatever the number
   * of words: one ts_rank_cd per word and chunk would parse each word's tsquery again per call
   * and make a long query's ranking grow with its words. Each hit's score is its BM25 as a
   * fraction of the most the same IDFs allow (domain/bm25.ts, keywordScore).
   */
  private async rank(
    q: SearchQuery,
    ranked: readonly RankedTerm[],
    params: unknown[],
    candidates: string,
    prelude: string,
    settings: readonly string[] = [],
  ): Promise<KeywordHit[]> {
    const param = (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    };
    const stats = await this.orgStats(q.orgId);
    const total = Math.max(stats.chunks, ...ranked.map((t) => t.rows));
    const lexemes = param(ranked.map((t) => unquoteLexeme(t.literal)));
    const idfValues = ranked.map((t) => bm25Idf(total, t.rows));
    const ceiling = bm25Ceiling(idfValues);
    const idfs = param(idfValues);
    const meanTokens = param(stats.meanTokens);
    const limit = param(Math.floor(q.topK));
    const run = async (db: Queryable) =>
      db.query<HitRow>(
        `${prelude === '' ? '' : `WITH ${prelude}`}
       SELECT c.document_id, c.chunk_index, c.text, c.page_start, c.page_end, d.metadata, top.score
       FROM (SELECT m.document_id, m.chunk_index,
               (SELECT coalesce(sum((${idfs}::float8[])[array_position(${lexemes}::text[], u.lexeme)] * f.tf * ${BM25_K1 + 1}
                  / (f.tf + ${BM25_K1} * (${1 - BM25_B} + ${BM25_B} * m.token_count / ${meanTokens}::float8))), 0)
                FROM unnest(ts_filter(setweight(m.tsv, 'A', ${lexemes}::text[]), '{a}')) AS u
                CROSS JOIN LATERAL (SELECT cardinality(u.positions)::float8 AS tf) AS f) AS score
             FROM (${candidates}) AS m
             ORDER BY score DESC, m.document_id, m.chunk_index
             LIMIT ${limit}) AS top
       JOIN ${this.chunks} AS c ON c.document_id = top.document_id AND c.chunk_index = top.chunk_index
       JOIN ${this.documents} AS d ON d.id = top.document_id AND d.deleted_at IS NULL
       ORDER BY top.score DESC, top.document_id, top.chunk_index`,
        params,
      );
    const { rows } =
      settings.length === 0
        ? await run(this.reader)
        : await this.inSearchTransaction(async (tx) => {
            for (const setting of settings) await tx.query(`SET LOCAL ${setting}`);
            const result = await run(tx);
            // The search's transaction goes on (a filtered search may rank again): its later
            // statements plan with the defaults.
            for (const setting of settings)
              await tx.query(`SET LOCAL ${setting.split('=')[0]!.trim()} TO DEFAULT`);
            return result;
          });
    return rows.map((r) => ({
      documentId: r.document_id,
      chunkIndex: r.chunk_index,
      text: r.text,
      score: keywordScore(r.score, ceiling),
      bm25: r.score,
      bm25Max: ceiling,
      metadata: r.metadata,
      pageStart: r.page_start,
      pageEnd: r.page_end,
    }));
  }

  /**
   * The terms' estimated matches from the column statistics (pg_stats' most common elements of
   * `terms`, ANALYZE's sample of up to 300,000 chunks at statistics target 1000): a term listed
   * there is too common to count cheaply (every access to it through RUM reads its whole posting
   * list). `floor` is the least frequency the list keeps: a term missing from it is rarer.
   */
  private async commonTerms(): Promise<{ rows: Map<string, number>; floor: number }> {
    const now = Date.now();
    if (this.termStats && now - this.termStats.at < TERM_STATS_TTL_MS) return this.termStats;
    const { rows } = await this.reader.query<{
      elems: string[] | null;
      freqs: number[] | null;
      tuples: number;
    }>(
      `SELECT s.most_common_elems::text::text[] AS elems, s.most_common_elem_freqs AS freqs,
              greatest(c.reltuples, 0)::float8 AS tuples
       FROM pg_stats AS s JOIN pg_class AS c ON c.oid = to_regclass($2)
       WHERE s.schemaname = $1 AND s.tablename = 'chunks' AND s.attname = 'terms'`,
      [this.db.schema, this.chunks],
    );
    const map = new Map<string, number>();
    let floor = 0;
    const row = rows[0];
    if (row?.elems && row.freqs) {
      const freqs = row.freqs;
      row.elems.forEach((term, i) => {
        map.set(term, Math.max(1, Math.round((freqs[i] ?? 0) * row.tuples)));
      });
      // After the elements' frequencies come the least and the greatest of them, then null's.
      floor = Math.round((row.freqs[row.elems.length] ?? 0) * row.tuples);
    }
    this.termStats = { rows: map, floor, at: now };
    return this.termStats;
  }

  /**
   * A filter few documents pass, on the RUM path: every chunk of theirs that holds a query word is
   * ranked with every word (exact, as embedded), the words counted as searchRum counts them. The
   * GIN path's count (each word's matches in the org, up to the row budget, through the org's
   * posting lists and table rows) reads a table row per match of every word, far more than the
   * ranking of the few documents' chunks costs.
   */
  private async searchRumAmong(q: SearchQuery, words: string[], documents: string[]): Promise<KeywordHit[]> {
    const counted = await this.rumCounts(q, words);
    if (counted === null) return [];
    const ranked: RankedTerm[] = counted.plan.every.map((t) => ({
      literal: t.literal,
      rows: counted.rowsOf.get(t) ?? 0,
    }));
    const params: unknown[] = [];
    const param = (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    };
    const any = `${param(ranked.map((t) => t.literal).join(' | '))}::tsquery`;
    // The terms are read out of line once, for the match test and the ranking both.
    const candidates = `SELECT r.document_id, r.chunk_index, r.token_count, v.tsv FROM (
        SELECT document_id, chunk_index, token_count, terms FROM ${this.chunks}
        WHERE document_id = ANY(${param(documents)}::text[])
        LIMIT ${param(candidateBudget(q, this.searchRowBudget))}
      ) AS r CROSS JOIN LATERAL (SELECT r.terms || ''::tsvector AS tsv OFFSET 0) AS v
      WHERE v.tsv @@ ${any}`;
    return this.rank(q, ranked, params, candidates, '');
  }

  /**
   * The RUM path's word counts as a plan over the plain words of `tsv` (the org's prefix taken
   * off), for a loose filter that searchRum's candidates could not satisfy: counting each word
   * across the org on GIN would read a table row per match and cost such a query nearly all of
   * its time.
   */
  private rumPlan({ prefix, plan, rowsOf }: RumCounts): SearchPlan {
    const plain = (t: RankedTerm): RankedTerm => ({
      literal: quoteLexeme(unquoteLexeme(t.literal).slice(prefix.length)),
      rows: rowsOf.get(t) ?? 0,
    });
    return { chosen: plan.chosen.map(plain), every: plan.every.map(plain), exact: plan.exact };
  }

  /**
   * The query's words as the RUM path counts them (see searchRum): each as a literal of the org's
   * prefixed terms with its matches, counted up to the least frequency the column statistics list
   * or estimated from them when listed as common; the rarest MAX_QUERY_TERMS of them planned as
   * everywhere (domain/search-plan.ts). null when the org has no key or no word matches anything.
   */
  private async rumCounts(q: SearchQuery, words: string[]): Promise<RumCounts | null> {
    const key = await this.orgKey(this.reader, q.orgId, false);
    if (key === null) return null;
    const prefix = termPrefix(key);
    const literals = words.map((w) => quoteLexeme(prefix + w));
    const common = await this.commonTerms();
    const share = Math.floor(RUM_CANDIDATES / 2 / words.length);
    const perWord = Math.min(
      Math.max(RUM_WORD_CANDIDATES_MIN, Math.min(RUM_WORD_CANDIDATES_MAX, share)),
      this.searchRowBudget,
    );
    // Words the statistics do not list as common are counted, up to the least frequency they
    // list (a term missing from them is rarer than that, as far as their sample tells), so their
    // IDF is exact; listed terms of no more estimated matches than a word may bring are counted
    // too, so the ranking stays exact wherever it can be and never rests on stale statistics.
    const countCap = Math.max(perWord, common.floor > 0 ? common.floor : RUM_COUNT_WITHOUT_STATISTICS) + 1;
    const estimate = (w: string) => common.rows.get(prefix + w) ?? 0;
    const uncounted = words.filter((w) => estimate(w) <= perWord || !common.rows.has(prefix + w));
    const counted = new Map<string, number>();
    if (uncounted.length > 0) {
      const { rows } = await this.reader.query<{ word: string; rows: number }>(
        `SELECT w.word, (SELECT count(*)::int FROM (
             SELECT FROM ${this.chunks} AS c WHERE c.terms @@ w.literal::tsquery LIMIT $3
           ) AS capped) AS rows
         FROM unnest($1::text[], $2::text[]) AS w(word, literal)`,
        [uncounted, uncounted.map((w) => quoteLexeme(prefix + w)), countCap],
      );
      for (const r of rows) counted.set(r.word, r.rows);
    }
    const counts = words.map((w, i) => ({
      term: { literal: literals[i] as string, rows: 0 },
      rows: counted.get(w) ?? estimate(w),
    }));
    const rarest = rarestTerms(counts, MAX_QUERY_TERMS);
    const kept = counts.filter((c) => rarest.includes(c.term));
    const plan = planTerms(kept, this.searchRowBudget);
    if (plan === null) return null;
    return { prefix, perWord, plan, rowsOf: new Map(kept.map((c) => [c.term, c.rows])) };
  }

  /**
   * Keyword search on the RUM index (no filters). Each word's matches are counted, up to the
   * least frequency the column statistics list, unless they list it as common, when their estimate
   * stands in; the words to rank are chosen as everywhere (domain/search-plan.ts). Each
   * chosen word brings its share of chunks of highest term frequency (an ordered
   * RUM scan, answered from the index's stored positions: the heap is read for those chunks only),
   * or all its matches when they are no more, and the chosen words together their chunks of
   * highest frequency over all of them (RUM's rank of their OR); a word over the row budget (a query of common words
   * only) brings its first matches, where the planner, seeing how common it is, may scan the table
   * and stop early. Exact BM25 ranks their union: the same ranking as embedded whenever every
   * chosen word has no more matches than that.
   */
  private async searchRum(
    q: SearchQuery,
    { perWord, plan, rowsOf }: RumCounts,
    restriction: DocumentRestriction | null = null,
  ): Promise<KeywordHit[]> {
    const ranked: RankedTerm[] = plan.chosen.map((t) => ({ literal: t.literal, rows: rowsOf.get(t) ?? 0 }));

    const params: unknown[] = [];
    const param = (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    };
    const limit = param(perWord);
    const scans = ranked.map((t) => {
      const query = `${param(t.literal)}::tsquery`;
      // Every match within the budget is ranked by the index; a word over it is too common for
      // any order to mean much (its first matches are read, see below).
      const order = t.rows <= this.searchRowBudget ? `ORDER BY c.terms <=> ${query}` : '';
      return `(SELECT c.document_id, c.chunk_index, c.token_count, c.terms AS tsv FROM ${this.chunks} AS c
        WHERE c.terms @@ ${query} ${order} LIMIT ${limit})`;
    });
    if (ranked.length > 1 && ranked.every((t) => t.rows <= this.searchRowBudget)) {
      const all = `${param(ranked.map((t) => t.literal).join(' | '))}::tsquery`;
      scans.push(`(SELECT c.document_id, c.chunk_index, c.token_count, c.terms AS tsv FROM ${this.chunks} AS c
        WHERE c.terms @@ ${all} ORDER BY c.terms <=> ${all} LIMIT ${param(RUM_CANDIDATES / 2)})`);
    }
    // A restriction is tested on the candidates only (one document row by key each), before ranking.
    const conditions: string[] = [];
    if (restriction?.filter) conditions.push(postgresFilter(restriction.filter, 'd.metadata', param));
    if (restriction?.partitions) conditions.push(partitionCondition(restriction.partitions, param));
    if (restriction?.principals) {
      conditions.push(postgresAccessCondition('d.access', restriction.principals, param));
    }
    const passes =
      conditions.length === 0
        ? ''
        : `WHERE EXISTS (SELECT FROM ${this.documents} AS d
             WHERE d.id = u.document_id AND ${conditions.join(' AND ')})`;
    const candidates = `SELECT DISTINCT ON (u.document_id, u.chunk_index) u.document_id, u.chunk_index,
        u.token_count, u.tsv FROM (${scans.join(' UNION ALL ')}) AS u ${passes}`;
    // A word over the budget is read through a bitmap of its posting list: seeing how common it
    // is, the planner would scan the table expecting its first matches soon, and read most of
    // it when the org's chunks sit elsewhere in the table (a small org's query then takes seconds).
    const overBudget = ranked.some((t) => t.rows > this.searchRowBudget);
    return this.rank(
      q,
      ranked,
      params,
      candidates,
      '',
      overBudget ? ['enable_seqscan = off', 'enable_indexscan = off'] : [],
    );
  }
}
