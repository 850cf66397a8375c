// The keyword index on PostgreSQL: the chunks' words (domain/search-words.ts) as tsvectors and
// BM25 search (domain/bm25.ts) over the chunks of `ready` documents. Two layouts: `tsv`, the words
// as they are in a GIN index with the org id (btree_gin), always written; and `terms`, the words
// prefixed with the org's key in a RUM index (positions stored in the index, ordered scans), used
// when the rum extension is installed and every chunk has its terms: each org then has posting
// lists of its own, and a word's chunks of highest frequency are picked inside the index, so a
// query reads the table for a bounded number of candidates (measured against GIN in
// bench/RESULTS.md, section 4). Its writes run inside the record store's transactions
// (PgDocumentStore.saveIndex, through KeywordIndexWriter; a delete cascades from the document row),
// so a document turns ready with its last chunk and stops matching the moment it goes. The parts:
// writes.ts, reindex.ts (the analysis, `docindex reindex` and the RUM index's build), search.ts
// (the path a query takes), gin-search.ts, rum-search.ts and rank.ts (BM25 in SQL).
import {
  type AnalysisState,
  DEFAULT_SEARCH_ROW_BUDGET,
  type KeywordIndex,
  type KeywordIndexWriter,
} from '../../../domain/ports.js';
import { documentAnalyzer, fallbackLanguage, type SearchLanguage } from '../../../domain/search-words.js';
import type { ChunkRow, KeywordHit, SearchQuery, StoredChunk } from '../../../domain/types.js';
import type { PgDatabase, Queryable } from '../database.js';
import { OrgKeys, type PgKeywordContext } from './context.js';
import { PgGinSearch } from './gin-search.js';
import { PgKeywordRanking } from './rank.js';
import { PgKeywordAnalysis } from './reindex.js';
import { PgRumSearch } from './rum-search.js';
import { PgKeywordSearch } from './search.js';
import { PgKeywordWrites } from './writes.js';

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

/** The index and its writes, which the record store makes in its own transactions (`tx`). */
export class PgKeywordIndex implements KeywordIndex, KeywordIndexWriter<Queryable, 'async'> {
  private readonly writes: PgKeywordWrites;
  private readonly analysis: PgKeywordAnalysis;
  private readonly searches: PgKeywordSearch;

  constructor(db: PgDatabase, opts: PgKeywordIndexOptions = {}) {
    const language = opts.language ?? 'auto';
    const context: PgKeywordContext = {
      db,
      searchRowBudget: opts.searchRowBudget ?? DEFAULT_SEARCH_ROW_BUDGET,
      language,
      analyzer: documentAnalyzer(fallbackLanguage(language)),
      rumWanted: opts.rum ?? true,
      orgKeys: new OrgKeys(db),
    };
    this.writes = new PgKeywordWrites(context);
    this.analysis = new PgKeywordAnalysis(context, this.writes);
    const ranking = new PgKeywordRanking(context);
    this.searches = new PgKeywordSearch(
      context,
      this.analysis,
      new PgGinSearch(context, ranking),
      new PgRumSearch(context, ranking),
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

  writeChunks(documentId: string, orgId: string, batch: readonly ChunkRow[], tx: Queryable): Promise<void> {
    return this.writes.writeChunks(documentId, orgId, batch, tx);
  }

  deleteChunks(documentId: string, tx: Queryable): Promise<void> {
    return this.writes.deleteChunks(documentId, tx);
  }

  readChunks(documentId: string, afterIndex: number, limit: number, tx: Queryable): Promise<StoredChunk[]> {
    return this.writes.readChunks(documentId, afterIndex, limit, tx);
  }

  noteLanguage(documentId: string, language: string | null, tx: Queryable): Promise<void> {
    return this.writes.noteLanguage(documentId, language, tx);
  }

  forgetOrg(orgId: string, tx: Queryable): Promise<void> {
    return this.writes.forgetOrg(orgId, tx);
  }
}
