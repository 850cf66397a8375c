// The SQLite keyword index's writes: chunks and their FTS rows, made inside the record store's
// transactions (SqliteDocumentStore, through SlicedKeywordIndexWriter), so a document turns ready
// with its last chunk and stops matching the moment it is deleted.
import { documentAnalyzer } from '../../../domain/search-words.js';
import type { ChunkRow, StoredChunk } from '../../../domain/types.js';
import { indexTerms } from '../fts-terms.js';
import type { StatementCache } from '../statements.js';
import { storableText } from '../text.js';
import type { OrgKeys, SqliteKeywordContext } from './context.js';

export class SqliteKeywordWrites {
  private readonly sql: StatementCache;
  private readonly orgKeys: OrgKeys;
  /** The analysis of chunks that come without their words. */
  private readonly analyzer: SqliteKeywordContext['analyzer'];

  constructor(context: SqliteKeywordContext) {
    this.sql = context.sql;
    this.orgKeys = context.orgKeys;
    this.analyzer = context.analyzer;
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

  /**
   * Writes the document's chunks and their FTS rows, inside the caller's transaction (the record
   * store's: a document turns ready with its last chunk). They are found once it is `ready`.
   */
  writeChunks(id: string, orgId: string, chunks: readonly ChunkRow[]): void {
    const orgKey = this.orgKeys.key(orgId, true) as number;
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
    // Looked for first: a DELETE whose trigger could write the FTS table opens a statement
    // savepoint even when it finds no row, and FTS5 writes out every pending term at a savepoint,
    // so a shared transaction would get one index segment per document instead of one in all.
    const any = this.sql.get('SELECT EXISTS (SELECT 1 FROM chunks WHERE document_id = ?)').pluck().get(id);
    if (any) this.sql.get('DELETE FROM chunks WHERE document_id = ?').run(id);
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
    this.orgKeys.forget(orgId);
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
}
