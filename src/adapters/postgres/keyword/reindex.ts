// The PostgreSQL keyword index's analysis: which analysis its words were written with, whether
// every chunk has its RUM terms, and `docindex reindex` rewriting the words (then building the RUM
// index) a batch at a time.
import { detectLanguage } from '../../../domain/language-detection.js';
import type { AnalysisState } from '../../../domain/ports.js';
import {
  ANALYSIS,
  documentAnalyzer,
  documentLanguage,
  type WrittenAnalysis,
} from '../../../domain/search-words.js';
import { BinaryArray, TEXT } from '../binary-array.js';
import type { Queryable } from '../database.js';
import { ensureRum, RUM_INDEX, rumIndexStatement } from '../rum-index.js';
import { writeTsvectorLiterals } from '../tsvector.js';
import { type PgKeywordContext, PgKeywordPart, termPrefix } from './context.js';
import type { PgKeywordWrites } from './writes.js';

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

export class PgKeywordAnalysis extends PgKeywordPart {
  private written: { value: Written; termsReady: boolean; at: number } | null = null;

  constructor(
    context: PgKeywordContext,
    private readonly writes: PgKeywordWrites,
  ) {
    super(context);
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

  async writtenAnalysis(): Promise<Written> {
    return (await this.readAnalysis()).value;
  }

  /** Whether searches take the RUM path: wanted, and every chunk's terms indexed. */
  async rumReady(): Promise<boolean> {
    return this.rumWanted && (await this.readAnalysis()).termsReady;
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
    await this.writes.noteLanguage(row.document_id, language, tx);
    return language;
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
          const key = (await this.orgKeys.key(tx, r.org_id, true)) as number;
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
}
