// The keyword index on SQLite: chunks, their FTS5 rows with per-organisation terms
// (../fts-terms.ts), and BM25 search over the chunks of `ready` documents. Its writes run inside
// the record store's transactions (SqliteDocumentStore.saveIndex and deleteDocument, through
// SlicedKeywordIndexWriter), so a document turns ready with its last chunk and stops matching the
// moment it is deleted. The parts: writes.ts (chunks and FTS rows), reindex.ts (the analysis and
// its rewrite), search.ts and filtered-search.ts (planning and ranking a query).
import {
  type AnalysisState,
  DEFAULT_SEARCH_ROW_BUDGET,
  type KeywordIndex,
  type SlicedKeywordIndexWriter,
} from '../../../domain/ports.js';
import { documentAnalyzer, fallbackLanguage, type SearchLanguage } from '../../../domain/search-words.js';
import type { ChunkRow, KeywordHit, SearchQuery, StoredChunk } from '../../../domain/types.js';
import type { Database } from '../database.js';
import { StatementCache } from '../statements.js';
import { OrgKeys, type SqliteKeywordContext } from './context.js';
import { SqliteFilteredSearch } from './filtered-search.js';
import { SqliteKeywordAnalysis } from './reindex.js';
import { SqliteKeywordSearch } from './search.js';
import { SqliteKeywordWrites } from './writes.js';

export interface SqliteKeywordIndexOptions {
  /** Most matching chunks one query may rank (default DEFAULT_SEARCH_ROW_BUDGET). */
  searchRowBudget?: number;
  /** SEARCH_LANGUAGE: the language of documents that name none and cannot be told (default 'auto'). */
  language?: SearchLanguage;
  /** How long a term found over the row budget is not counted again (default 60 s; 0: always). */
  overBudgetMemoMs?: number;
}

/**
 * The index and its writes, which the record store makes in its own transactions (the writer's
 * `tx` is void: better-sqlite3's statements join the connection's open transaction).
 */
export class SqliteKeywordIndex implements KeywordIndex, SlicedKeywordIndexWriter<void, 'sync'> {
  private readonly writes: SqliteKeywordWrites;
  private readonly analysis: SqliteKeywordAnalysis;
  private readonly searches: SqliteKeywordSearch;

  constructor(db: Database, opts: SqliteKeywordIndexOptions = {}) {
    const sql = new StatementCache(db);
    const language = opts.language ?? 'auto';
    const context: SqliteKeywordContext = {
      db,
      sql,
      searchRowBudget: opts.searchRowBudget ?? DEFAULT_SEARCH_ROW_BUDGET,
      language,
      analyzer: documentAnalyzer(fallbackLanguage(language)),
      orgKeys: new OrgKeys(db, sql),
    };
    this.writes = new SqliteKeywordWrites(context);
    this.analysis = new SqliteKeywordAnalysis(context, this.writes);
    this.searches = new SqliteKeywordSearch(
      context,
      this.analysis,
      new SqliteFilteredSearch(context),
      opts.overBudgetMemoMs,
    );
  }

  search(q: SearchQuery): Promise<KeywordHit[]> {
    return this.searches.search(q);
  }

  adoptAnalysis(): Promise<void> {
    return this.analysis.adoptAnalysis();
  }

  analysisState(): Promise<AnalysisState> {
    return this.analysis.analysisState();
  }

  reindexBatch(limit: number): Promise<{ rewritten: number; done: boolean }> {
    return this.analysis.reindexBatch(limit);
  }

  writeChunks(id: string, orgId: string, chunks: readonly ChunkRow[]): void {
    this.writes.writeChunks(id, orgId, chunks);
  }

  deleteChunks(id: string): void {
    this.writes.deleteChunks(id);
  }

  deleteChunkSlice(id: string, limit: number): number {
    return this.writes.deleteChunkSlice(id, limit);
  }

  moveChunks(from: string, to: string): void {
    this.writes.moveChunks(from, to);
  }

  readChunks(id: string, afterIndex: number, limit: number): StoredChunk[] {
    return this.writes.readChunks(id, afterIndex, limit);
  }

  countChunks(id: string, cap: number): number {
    return this.writes.countChunks(id, cap);
  }

  noteLanguage(documentId: string, language: string | null): void {
    this.writes.noteLanguage(documentId, language);
  }

  forgetOrg(orgId: string): void {
    this.writes.forgetOrg(orgId);
  }
}
