// The keyword index: the search the domain sees, and the writes a record store makes to it inside its
// own transactions.
import type { SearchLanguage } from '../search-words.js';
import type { ChunkRow, KeywordHit, SearchQuery, StoredChunk } from '../types.js';

/**
 * The keyword index over chunks. It finds only chunks of `ready` documents of the query's org.
 * A keyword index lives in the records' database: its writes are part of DocumentStore.saveIndex
 * and deleteDocument (a document turns ready with its last chunk, and stops matching the moment
 * it is deleted), made through KeywordIndexWriter inside the record store's transactions, so the
 * port the domain sees is the search. docs/ARCHITECTURE.md has why.
 */
export interface KeywordIndex {
  /**
   * BM25 hits, best first, each scored as a fraction of the most its query could score
   * (KeywordHit); each query ranks at most the index's row budget of matching chunks (planned by
   * domain/search-plan.ts), filters and document_ids choosing inside it.
   */
  search(q: SearchQuery): Promise<KeywordHit[]>;
  /**
   * Records the configured analysis as the index's own when the index has none yet (a new
   * database); every process calls it at start.
   */
  adoptAnalysis(): Promise<void>;
  /** Which analysis the index's words were written with, and any rewrite under way. */
  analysisState(): Promise<AnalysisState>;
  /**
   * Rewrites the words of up to `limit` chunks, the next ones in the index's order, with the
   * configured analysis, in one short transaction; its progress is kept, so a rewrite cut off
   * resumes where it stopped. `done` once no chunk is left, when the configured analysis becomes
   * the index's own. Searches run meanwhile find words written either way.
   */
  reindexBatch(limit: number): Promise<{ rewritten: number; done: boolean }>;
}

/** The analyses of a keyword index (domain/search-words.ts). */
export interface AnalysisState {
  /** SEARCH_LANGUAGE of this process. */
  configured: SearchLanguage;
  /**
   * The analysis the index's words were written with: null before any process recorded one,
   * 'legacy' for PostgreSQL chunks written before docindex computed the words itself.
   */
  written: SearchLanguage | 'legacy' | null;
  /** Whether the index's words must be rewritten (`docindex reindex`) for `configured`. */
  reindexNeeded: boolean;
}

/**
 * How a record store's transaction runs a step: `sync` where the backend's transactions are
 * synchronous (better-sqlite3 runs one as a single call, with nothing awaited inside), `async`
 * where each statement is awaited (node-postgres).
 */
export type TxMode = 'sync' | 'async';

/** What a step inside a transaction of that mode gives back: the value, or a promise of it. */
export type TxResult<Mode extends TxMode, T> = Mode extends 'sync' ? T : Promise<T>;

/**
 * The keyword index's writes, which a record store makes inside its own transactions (a document
 * turns ready with its last chunk, and stops matching the moment it is deleted): each call joins
 * the caller's transaction `tx`, whose type is the backend's (a PostgreSQL client; `void` on
 * SQLite, whose statements join the connection's open transaction, so there is nothing to pass).
 * start/ hands the record store the index as this port, so a store never names the index behind
 * it; the domain never sees it.
 */
export interface KeywordIndexWriter<Tx, Mode extends TxMode> {
  /**
   * Writes chunks of the document with their words (those the pipeline computed, else the index's
   * analysis of the text). They are found once the document is `ready`.
   */
  writeChunks(documentId: string, orgId: string, chunks: readonly ChunkRow[], tx: Tx): TxResult<Mode, void>;
  /** Deletes every chunk of the document. */
  deleteChunks(documentId: string, tx: Tx): TxResult<Mode, void>;
  /** Up to `limit` of the document's chunks after index `afterIndex`, in index order. */
  readChunks(documentId: string, afterIndex: number, limit: number, tx: Tx): TxResult<Mode, StoredChunk[]>;
  /**
   * Records that the document's org has documents analysed in this language (search_languages,
   * which the org's queries are read with).
   */
  noteLanguage(documentId: string, language: string | null, tx: Tx): TxResult<Mode, void>;
  /**
   * Forgets what the index keeps of a purged org (its key inside terms, its languages), once
   * none of its chunks are left.
   */
  forgetOrg(orgId: string, tx: Tx): TxResult<Mode, void>;
}

/**
 * A keyword index whose record store writes and removes a large document a slice at a time, each
 * slice a transaction of its own (SQLite: one long transaction would hold the event loop), and
 * moves chunk rows from one document row to another instead of writing them again.
 */
export interface SlicedKeywordIndexWriter<Tx, Mode extends TxMode> extends KeywordIndexWriter<Tx, Mode> {
  /** How many chunks the document has, counted up to `cap`. */
  countChunks(documentId: string, cap: number, tx: Tx): TxResult<Mode, number>;
  /** Deletes up to `limit` of the document's chunks; how many it deleted. */
  deleteChunkSlice(documentId: string, limit: number, tx: Tx): TxResult<Mode, number>;
  /** Hands every chunk of document `from` to document `to`, their words as they were written. */
  moveChunks(from: string, to: string, tx: Tx): TxResult<Mode, void>;
}

/**
 * How many matching chunks one query may rank, in every store: words are taken rarest first while
 * their matches fit, so a common word cannot make a query rank an org's every chunk. Orgs with
 * fewer matches than this get exact ranking over every query word. Ranking costs per matching
 * row (SQLite's bm25(), PostgreSQL's BM25 reading each tsvector once from TOAST) set the size:
 * a budget's worth of rows keeps a query's ranking within its latency goal (bench/RESULTS.md,
 * section 4).
 */
export const DEFAULT_SEARCH_ROW_BUDGET = 20_000;
