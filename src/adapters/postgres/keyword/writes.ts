// The PostgreSQL keyword index's writes: chunks with their tsvectors, made inside the record
// store's transactions (PgDocumentStore, through KeywordIndexWriter), so a document turns ready
// with its last chunk; a delete cascades from the document row.
import { documentAnalyzer } from '../../../domain/search-words.js';
import { cleanText } from '../../../domain/text.js';
import type { ChunkRow, StoredChunk } from '../../../domain/types.js';
import { BinaryArray, int4Array, TEXT } from '../binary-array.js';
import type { Queryable } from '../database.js';
import { writeTsvectorLiterals } from '../tsvector.js';
import { PgKeywordPart, termPrefix } from './context.js';

export class PgKeywordWrites extends PgKeywordPart {
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
    this.orgKeys.forget(cleanText(orgId));
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
    const prefix = termPrefix((await this.orgKeys.key(tx, orgId, true)) as number);
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
}
