// DocumentStore on PostgreSQL: document records, their chunks, and full-text retrieval over a
// generated tsvector column with a GIN index. The documents table also carries the job columns
// PgTableQueue leases, so with that queue creating a document is enqueuing its job in the same
// statement.
import { chunkBatchesOf } from '../../domain/chunk-batches.js';
import { type Clock, DEFAULT_SEARCH_ROW_BUDGET, type DocumentStore } from '../../domain/ports.js';
import {
  candidateBudget,
  LOOSE_FILTER_SCAN_FACTOR,
  MAX_FILTER_DOCUMENTS,
  MAX_QUERY_TERMS,
  RAREST_PRECOUNT,
} from '../../domain/search-limits.js';
import { cleanMetadata, cleanText } from '../../domain/text.js';
import type {
  ChunkRow,
  DocumentError,
  DocumentRecord,
  IndexResult,
  JobInput,
  JobRef,
  ListQuery,
  Metadata,
  NewDocument,
  SearchHit,
  SearchQuery,
} from '../../domain/types.js';
import {
  RECORD_COLUMNS,
  type RowReaders,
  type DocumentRow as SharedDocumentRow,
  toDocumentRecord,
} from '../records/document-row.js';
import type { PgDatabase } from './database.js';

const systemClock: Clock = { now: () => new Date() };

export interface PgDocumentStoreOptions {
  /**
   * Whether PgTableQueue runs the jobs (a new document is then a pending job). With BullMQ the job
   * columns start 'done' so the table queue's partial indexes stay empty; if the deployment later
   * drops Redis, the reconciler finds those queued documents and revives their rows as jobs.
   */
  tableQueue?: boolean;
  /** How many matching chunks one query may rank (see DEFAULT_SEARCH_ROW_BUDGET). */
  searchRowBudget?: number;
}

/** A record row as node-postgres returns it: bigints as strings, Dates, parsed JSON. */
type DocumentRow = SharedDocumentRow<string, Date, Metadata>;

const READ_ROW: RowReaders<string, Date, Metadata> = {
  number: (value) => Number(value),
  date: (value) => value,
  metadata: (value) => value,
};

const toRecord = (row: DocumentRow): DocumentRecord => toDocumentRecord(row, READ_ROW);

interface JobInputRow extends DocumentRow {
  input_text: string | null;
  blob_key: string | null;
  fetch_url: string | null;
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

/** Rows per INSERT when saving chunks: bounds the size of one statement's parameters. */
const CHUNK_BATCH = 2000;

/** Text as stored: NUL removed (PostgreSQL refuses it), lone surrogates replaced by U+FFFD. */
function storable(s: string): string;
function storable(s: string | null): string | null;
function storable(s: string | null): string | null {
  return s === null ? null : cleanText(s);
}

export class PgDocumentStore implements DocumentStore {
  private readonly documents: string;
  private readonly chunks: string;
  private readonly initialJobState: 'pending' | 'done';
  private readonly searchRowBudget: number;

  constructor(
    private readonly db: PgDatabase,
    private readonly clock: Clock = systemClock,
    opts: PgDocumentStoreOptions = {},
  ) {
    this.documents = db.table('documents');
    this.chunks = db.table('chunks');
    this.initialJobState = (opts.tableQueue ?? true) ? 'pending' : 'done';
    this.searchRowBudget = opts.searchRowBudget ?? DEFAULT_SEARCH_ROW_BUDGET;
  }

  async createDocuments(docs: NewDocument[]): Promise<void> {
    if (docs.length === 0) return;
    // One multi-row INSERT is one atomic statement: the batch commits whole or not at all.
    const PER_ROW = 16;
    const values: string[] = [];
    const params: unknown[] = [];
    docs.forEach((d, i) => {
      const p = (n: number) => `$${i * PER_ROW + n}`;
      values.push(
        `(${p(1)}, ${p(2)}, 'queued', ${p(3)}, ${p(4)}, ${p(5)}, ${p(6)}, ${p(7)}, ${p(8)}::jsonb, ${p(9)}, ${p(10)},
          ${p(11)}, 0, ${p(12)}, ${p(12)}, ${p(13)}, ${p(14)}, ${p(15)}, ${p(16)}, clock_timestamp(), 0)`,
      );
      params.push(
        d.id,
        d.orgId,
        d.source.type,
        storable(d.source.filename),
        storable(d.source.url),
        storable(d.source.content_type),
        d.source.bytes,
        JSON.stringify(cleanMetadata(d.metadata)),
        d.chunkSize,
        d.chunkOverlap,
        storable(d.tokenizer),
        d.createdAt,
        storable(d.text),
        storable(d.blobKey),
        storable(d.fetchUrl),
        this.initialJobState,
      );
    });
    await this.db.query(
      `INSERT INTO ${this.documents} (
         id, org_id, status, source_type, filename, source_url, content_type, bytes, metadata,
         chunk_size, chunk_overlap, tokenizer, attempts, created_at, updated_at,
         input_text, blob_key, fetch_url, job_state, run_at, job_attempts
       ) VALUES ${values.join(', ')}`,
      params,
    );
  }

  async getDocument(orgId: string, id: string): Promise<DocumentRecord | null> {
    const { rows } = await this.db.query<DocumentRow>(
      `SELECT ${RECORD_COLUMNS} FROM ${this.documents} WHERE id = $1 AND org_id = $2`,
      [storable(id), storable(orgId)],
    );
    return rows[0] ? toRecord(rows[0]) : null;
  }

  async listDocuments(q: ListQuery): Promise<DocumentRecord[]> {
    const params: unknown[] = [storable(q.orgId)];
    const where = ['org_id = $1'];
    const param = (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    };
    if (q.status !== null) where.push(`status = ${param(q.status)}`);
    if (q.ids !== null) where.push(`id = ANY(${param(q.ids.map((id) => cleanText(id)))}::text[])`);
    if (q.contentSha256 !== null) where.push(`content_sha256 = ${param(storable(q.contentSha256))}`);
    if (q.after !== null) {
      where.push(
        `(created_at, id) < (${param(q.after.createdAt)}::timestamptz, ${param(storable(q.after.id))})`,
      );
    }
    const limit = param(Math.max(0, Math.floor(q.limit)));
    const { rows } = await this.db.query<DocumentRow>(
      `SELECT ${RECORD_COLUMNS} FROM ${this.documents} WHERE ${where.join(' AND ')}
       ORDER BY created_at DESC, id DESC LIMIT ${limit}`,
      params,
    );
    return rows.map(toRecord);
  }

  async deleteDocument(orgId: string, id: string): Promise<{ blobKey: string | null } | null> {
    // The chunks go with the row (ON DELETE CASCADE) in this one statement, so they stop matching
    // at the moment the document disappears.
    const { rows } = await this.db.query<{ blob_key: string | null }>(
      `DELETE FROM ${this.documents} WHERE id = $1 AND org_id = $2 RETURNING blob_key`,
      [storable(id), storable(orgId)],
    );
    return rows[0] ? { blobKey: rows[0].blob_key } : null;
  }

  async loadJobInput(id: string): Promise<JobInput | null> {
    const { rows } = await this.db.query<JobInputRow>(
      `SELECT ${RECORD_COLUMNS}, input_text, blob_key, fetch_url FROM ${this.documents} WHERE id = $1`,
      [storable(id)],
    );
    const row = rows[0];
    if (!row) return null;
    return { record: toRecord(row), text: row.input_text, blobKey: row.blob_key, fetchUrl: row.fetch_url };
  }

  async markProcessing(id: string): Promise<boolean> {
    const r = await this.db.query(
      `UPDATE ${this.documents} SET status = 'processing', attempts = attempts + 1, error_code = NULL,
         error_message = NULL, updated_at = $1 WHERE id = $2`,
      [this.clock.now(), storable(id)],
    );
    return (r.rowCount ?? 0) > 0;
  }

  async markRetrying(id: string, error: DocumentError): Promise<boolean> {
    const r = await this.db.query(
      `UPDATE ${this.documents} SET status = 'queued', error_code = $1, error_message = $2, updated_at = $3
       WHERE id = $4`,
      [error.code, storable(error.message), this.clock.now(), storable(id)],
    );
    return (r.rowCount ?? 0) > 0;
  }

  async saveIndex(id: string, result: IndexResult): Promise<boolean> {
    const docId = storable(id);
    const { batches, totals } = chunkBatchesOf(result);
    // Chunks that arrive in batches are inserted as they come, inside the one transaction: no one
    // sees the document half-indexed, and they are never all held in memory at once.
    const source = batches[Symbol.asyncIterator]();
    try {
      return await this.db.transaction(async (tx) => {
        // The row lock orders this against a concurrent delete: either the delete waits and then
        // removes the new chunks with the row, or it went first and there is nothing to write to.
        const { rows } = await tx.query<{ org_id: string }>(
          `SELECT org_id FROM ${this.documents} WHERE id = $1 FOR UPDATE`,
          [docId],
        );
        const doc = rows[0];
        if (!doc) return false;
        await tx.query(`DELETE FROM ${this.chunks} WHERE document_id = $1`, [docId]);
        const insert = (batch: readonly ChunkRow[]) =>
          tx.query(
            `INSERT INTO ${this.chunks}
               (document_id, org_id, chunk_index, text, token_count, char_start, char_end, page_start, page_end)
             SELECT $1, $2, * FROM unnest($3::int[], $4::text[], $5::int[], $6::int[], $7::int[], $8::int[], $9::int[])`,
            [
              docId,
              doc.org_id,
              batch.map((c) => c.index),
              batch.map((c) => cleanText(c.text)),
              batch.map((c) => c.tokenCount),
              batch.map((c) => c.charStart),
              batch.map((c) => c.charEnd),
              batch.map((c) => c.pageStart),
              batch.map((c) => c.pageEnd),
            ],
          );
        let pending: ChunkRow[] = [];
        let chunkCount = 0;
        for (let next = await source.next(); !next.done; next = await source.next()) {
          for (const chunk of next.value) {
            pending.push(chunk);
            if (pending.length === CHUNK_BATCH) {
              await insert(pending);
              pending = [];
            }
          }
          chunkCount += next.value.length;
        }
        if (pending.length > 0) await insert(pending);
        const { tokenCount, contentSha256 } = totals();
        await tx.query(
          `UPDATE ${this.documents} SET status = 'ready', chunk_count = $1, token_count = $2, content_sha256 = $3,
             content_type = coalesce($4, content_type), bytes = coalesce($5, bytes),
             input_text = NULL, fetch_url = NULL, error_code = NULL, error_message = NULL, updated_at = $6
           WHERE id = $7`,
          [
            chunkCount,
            tokenCount,
            storable(contentSha256),
            storable(result.contentType),
            result.bytes,
            this.clock.now(),
            docId,
          ],
        );
        return true;
      });
    } finally {
      // Left early (deleted meanwhile): the chunks still coming are not wanted.
      await source.return?.();
    }
  }

  async markFailed(id: string, error: DocumentError): Promise<boolean> {
    const r = await this.db.query(
      `UPDATE ${this.documents} SET status = 'failed', error_code = $1, error_message = $2,
         input_text = NULL, fetch_url = NULL, updated_at = $3
       WHERE id = $4`,
      [error.code, storable(error.message), this.clock.now(), storable(id)],
    );
    return (r.rowCount ?? 0) > 0;
  }

  async attachBlob(
    id: string,
    blob: { blobKey: string; contentType: string; bytes: number },
  ): Promise<boolean> {
    // With PgTableQueue the download lane's job ends here and the same row becomes a fresh job of
    // the process lane, in the same statement (the document stays `processing`: extraction
    // follows). The download consumer's own settle then finds its lease gone and writes nothing.
    const nextJob =
      this.initialJobState === 'pending'
        ? `, job_state = 'pending', run_at = now(), lease_owner = NULL, lease_until = NULL, job_attempts = 0`
        : '';
    const r = await this.db.query(
      `UPDATE ${this.documents} SET blob_key = $1, content_type = $2, bytes = $3, fetch_url = NULL, updated_at = $4
         ${nextJob}
       WHERE id = $5`,
      [storable(blob.blobKey), storable(blob.contentType), blob.bytes, this.clock.now(), storable(id)],
    );
    return (r.rowCount ?? 0) > 0;
  }

  async countPending(): Promise<number> {
    const { rows } = await this.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${this.documents} WHERE status IN ('queued', 'processing')`,
    );
    return rows[0]?.n ?? 0;
  }

  async listStaleQueued(olderThan: Date, limit: number): Promise<(JobRef & { needsDownload: boolean })[]> {
    const { rows } = await this.db.query<{ id: string; org_id: string; needs_download: boolean }>(
      `SELECT id, org_id, fetch_url IS NOT NULL AS needs_download FROM ${this.documents}
       WHERE status IN ('queued', 'processing') AND updated_at < $1
       ORDER BY updated_at, id LIMIT $2`,
      [olderThan, Math.max(0, Math.floor(limit))],
    );
    return rows.map((r) => ({ documentId: r.id, orgId: r.org_id, needsDownload: r.needs_download }));
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
      [storable(orgId), text, MAX_QUERY_TERMS, this.searchRowBudget + 1, countOne, RAREST_PRECOUNT],
    );
    return rows;
  }

  /**
   * Chooses the words to rank with, so one query ranks at most searchRowBudget rows (as the SQLite
   * store does, after Elasticsearch's cutoff_frequency): words are taken rarest first while their
   * matches fit the budget; a word too common to fit is dropped — in a large org it would cost
   * seconds of ranking and, being that common, barely moves the scores. A query whose rarest word
   * alone exceeds the budget (only very common words) is ranked among a bounded subset of that
   * word's matches. `query` is the tsquery to rank with, `every` ORs every word that matches
   * anything, and `exact` says whether `query` is all of them with every match within the
   * budget. null when no word matches anything.
   */
  private planSearch(words: WordCount[]): { query: string; every: string; exact: boolean } | null {
    const [only] = words;
    if (words.length === 1 && only && only.rows === null) {
      return { query: only.literal, every: only.literal, exact: false };
    }
    const counted = words
      .map((w) => ({ literal: w.literal, rows: w.rows ?? 0 }))
      .filter((w) => w.rows > 0)
      .sort((a, b) => a.rows - b.rows);
    const first = counted[0];
    if (!first) return null;
    const chosen = [first.literal];
    let rows = first.rows;
    for (const w of counted.slice(1)) {
      if (rows + w.rows > this.searchRowBudget) break;
      chosen.push(w.literal);
      rows += w.rows;
    }
    return {
      query: chosen.join(' | '),
      every: counted.map((w) => w.literal).join(' | '),
      exact: rows <= this.searchRowBudget && chosen.length === counted.length,
    };
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
      [storable(orgId), ...params],
    );
    const chunks = rows.reduce((n, r) => n + r.chunk_count, 0);
    if (rows.length > MAX_FILTER_DOCUMENTS || chunks > budget) return null;
    return rows.map((r) => r.id);
  }

  async search(q: SearchQuery): Promise<SearchHit[]> {
    const topK = Math.floor(q.topK);
    const text = cleanText(q.query);
    if (topK <= 0 || q.documentIds?.length === 0 || text.trim() === '') return [];
    const filtered = q.documentIds !== null || Object.keys(q.filter).length > 0;
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
    for (const [key, values] of Object.entries(q.filter)) {
      // ->> takes the key as a plain string (no JSON-path parsing), so a key may hold '.', '"',
      // '$' or '[' without changing what is matched; string equality is exact and case-sensitive.
      filters.push(
        `(d.metadata ->> ${filterParam(cleanText(key))}) = ANY(${filterParam(values.map((v) => cleanText(v)))}::text[])`,
      );
    }
    const overBudget = filtered && !plan.exact;
    // Named documents may hold more chunks than the budget and still be ranked whole; a metadata
    // filter alone may not.
    const budgetOfCandidates = candidateBudget(q, this.searchRowBudget);
    const allowed = overBudget
      ? await this.allowedDocuments(q.orgId, filters, filterParams, budgetOfCandidates)
      : null;

    const params: unknown[] = [storable(q.orgId), allowed !== null ? plan.every : plan.query];
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
