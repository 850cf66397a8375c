// The SQLite keyword index's analysis: which analysis its words were written with, and
// `docindex reindex` rewriting them with the configured one, a batch at a time.
import { detectLanguage } from '../../../domain/language-detection.js';
import type { AnalysisState } from '../../../domain/ports.js';
import {
  ANALYSIS,
  documentAnalyzer,
  documentLanguage,
  type SearchLanguage,
  type WrittenAnalysis,
} from '../../../domain/search-words.js';
import type { Database } from '../database.js';
import { indexTerms } from '../fts-terms.js';
import type { StatementCache } from '../statements.js';
import type { SqliteKeywordContext } from './context.js';
import type { SqliteKeywordWrites } from './writes.js';

interface AnalysisRow {
  written: WrittenAnalysis | null;
  reindex_target: WrittenAnalysis | null;
  reindex_after: number | null;
}

export class SqliteKeywordAnalysis {
  private readonly db: Database;
  private readonly sql: StatementCache;
  private readonly language: SearchLanguage;

  constructor(
    context: SqliteKeywordContext,
    private readonly writes: SqliteKeywordWrites,
  ) {
    this.db = context.db;
    this.sql = context.sql;
    this.language = context.language;
  }

  /** The analysis row: what the words were written with, and a rewrite under way. */
  read(): AnalysisRow {
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
    const { written } = this.read();
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
        const state = this.read();
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
    this.writes.noteLanguage(row.document_id, language);
    return language;
  }
}
