// DocumentStore on SQLite: document records, their chunks and the FTS5 index used for BM25
// retrieval. The documents table also carries the job columns that SqliteTableQueue leases, so
// creating a document is enqueuing its job in the same transaction.
import { randomUUID } from 'node:crypto';
import { chunkBatchesOf } from '../../domain/chunk-batches.js';
import { type Clock, DEFAULT_SEARCH_ROW_BUDGET, type DocumentStore } from '../../domain/ports.js';
import {
  candidateBudget,
  LOOSE_FILTER_SCAN_FACTOR,
  MAX_FILTER_DOCUMENTS,
  MAX_QUERY_TERMS,
  RAREST_PRECOUNT,
} from '../../domain/search-limits.js';
import { searchWords } from '../../domain/search-words.js';
import type {
  ChunkRow,
  DocumentError,
  DocumentRecord,
  DocumentStatus,
  IndexResult,
  IndexTotals,
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
import type { Database } from './database.js';
import { indexTerms, queryTerms } from './fts-terms.js';
import { GroupCommit } from './group-commit.js';
import { startProcessingSet } from './start-processing.js';
import { StatementCache } from './statements.js';
import { storableMetadata, storableNullable, storableText } from './text.js';

const systemClock: Clock = { now: () => new Date() };

/**
 * Chunk text written per transaction when a large document is indexed in slices: a few
 * milliseconds of inserts, so the event loop is never held long (bench/neighbour.bench.ts).
 */
export const INDEX_SLICE_CHARS = 128 * 1024;
/** Chunks deleted per transaction when a large document or its earlier chunks are cleared. */
const INDEX_DELETE_SLICE = 500;
/**
 * The organisation of a deleted document whose chunks are still being removed: no org has this id
 * (ids are `org_…`), so every org-scoped read passes it by.
 */
const PURGED_ORG = '';
/** SQL: the row is a live document, not one being purged. */
const LIVE = "org_id <> ''";

/** The chunks again, in runs of about `chars` of text each (at least one chunk per run). */
async function* reslice(
  batches: AsyncIterable<readonly ChunkRow[]>,
  chars: number,
): AsyncGenerator<ChunkRow[], undefined, undefined> {
  let slice: ChunkRow[] = [];
  let size = 0;
  for await (const batch of batches) {
    for (const chunk of batch) {
      if (slice.length > 0 && size + chunk.text.length > chars) {
        yield slice;
        slice = [];
        size = 0;
      }
      slice.push(chunk);
      size += chunk.text.length;
    }
  }
  if (slice.length > 0) yield slice;
  return undefined;
}

/** What marking a document ready writes. */
interface ReadyIndex extends IndexTotals {
  chunkCount: number;
  result: IndexResult;
}

export interface SqliteDocumentStoreOptions {
  clock?: Clock;
  searchRowBudget?: number;
}

/** A record row as better-sqlite3 returns it: integers, epoch milliseconds, JSON text. */
type DocumentRow = SharedDocumentRow<number, number, string>;

const READ_ROW: RowReaders<number, number, string> = {
  number: (value) => value,
  date: (value) => new Date(value),
  metadata: (value) => JSON.parse(value) as Metadata,
};

const toRecord = (row: DocumentRow): DocumentRecord => toDocumentRecord(row, READ_ROW);

interface JobInputRow extends DocumentRow {
  input_text: string | null;
  blob_key: string | null;
  fetch_url: string | null;
}

interface HitRow {
  document_id: string;
  chunk_index: number;
  text: string;
  page_start: number | null;
  page_end: number | null;
  metadata: string;
  org_id: string;
  status: DocumentStatus;
  score: number;
}

export class SqliteDocumentStore implements DocumentStore {
  private readonly sql: StatementCache;
  private readonly commits: GroupCommit;
  private readonly orgKeys = new Map<string, number>();

  private readonly clock: Clock;
  private readonly searchRowBudget: number;

  constructor(
    private readonly db: Database,
    opts: SqliteDocumentStoreOptions = {},
  ) {
    this.sql = new StatementCache(db);
    this.commits = new GroupCommit(db);
    this.clock = opts.clock ?? systemClock;
    this.searchRowBudget = opts.searchRowBudget ?? DEFAULT_SEARCH_ROW_BUDGET;
    setImmediate(() => void this.resumePurges());
  }

  private now(): number {
    return this.clock.now().getTime();
  }

  /**
   * The org's key inside FTS terms; with `create`, assigns one inside the caller's transaction.
   * Only keys read outside a transaction are cached: a key assigned in a transaction that then
   * rolls back could be handed to another org, and a stale cache would mix the two orgs' terms.
   */
  private orgKey(orgId: string, create: boolean): number | null {
    const cached = this.orgKeys.get(orgId);
    if (cached !== undefined) return cached;
    if (create) {
      this.sql.get('INSERT INTO fts_orgs (org_id) VALUES (?) ON CONFLICT (org_id) DO NOTHING').run(orgId);
    }
    const key = this.sql.get<[string], number>('SELECT id FROM fts_orgs WHERE org_id = ?').pluck().get(orgId);
    if (key === undefined) return null;
    if (!this.db.inTransaction) this.orgKeys.set(orgId, key);
    return key;
  }

  /**
   * Ingests made during one event-loop turn share one transaction (see GroupCommit); each call
   * still lands or fails alone.
   */
  createDocuments(docs: NewDocument[]): Promise<void> {
    if (docs.length === 0) return Promise.resolve();
    return this.commits.run(() => this.insertDocuments(docs), docs.length);
  }

  private insertDocuments(docs: NewDocument[]): void {
    const insert = this.sql.get(`INSERT INTO documents (
        id, org_id, status, source_type, filename, source_url, content_type, bytes, metadata,
        chunk_size, chunk_overlap, tokenizer, attempts, created_at, updated_at,
        input_text, blob_key, fetch_url, job_state, run_at, job_attempts
      ) VALUES (?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, 'pending', ?, 0)`);
    for (const d of docs) {
      const at = d.createdAt.getTime();
      insert.run(
        d.id,
        d.orgId,
        d.source.type,
        storableNullable(d.source.filename),
        storableNullable(d.source.url),
        storableNullable(d.source.content_type),
        d.source.bytes,
        JSON.stringify(storableMetadata(d.metadata)),
        d.chunkSize,
        d.chunkOverlap,
        d.tokenizer,
        at,
        at,
        storableNullable(d.text),
        d.blobKey,
        d.fetchUrl,
        at,
      );
    }
  }

  async getDocument(orgId: string, id: string): Promise<DocumentRecord | null> {
    const row = this.sql
      .get<[string, string], DocumentRow>(
        `SELECT ${RECORD_COLUMNS} FROM documents WHERE id = ? AND org_id = ?`,
      )
      .get(id, orgId);
    return row ? toRecord(row) : null;
  }

  async listDocuments(q: ListQuery): Promise<DocumentRecord[]> {
    // With an id list (batch status), look the ids up by primary key and sort the few rows found:
    // `+org_id` keeps SQLite from walking the org's whole created_at index instead, which costs
    // tens of milliseconds in an org of 100k documents.
    const where = [q.ids !== null ? '+org_id = ?' : 'org_id = ?'];
    const params: (string | number)[] = [q.orgId];
    if (q.status !== null) {
      where.push('status = ?');
      params.push(q.status);
    }
    if (q.ids !== null) {
      where.push('id IN (SELECT value FROM json_each(?))');
      params.push(JSON.stringify(q.ids));
    }
    if (q.contentSha256 !== null) {
      where.push('content_sha256 = ?');
      params.push(q.contentSha256);
    }
    if (q.after !== null) {
      where.push('(created_at, id) < (?, ?)');
      params.push(q.after.createdAt.getTime(), q.after.id);
    }
    params.push(Math.max(0, Math.floor(q.limit)));
    const sql = `SELECT ${RECORD_COLUMNS} FROM documents WHERE ${where.join(' AND ')}
      ORDER BY created_at DESC, id DESC LIMIT ?`;
    return this.sql
      .get<(string | number)[], DocumentRow>(sql)
      .all(...params)
      .map(toRecord);
  }

  /**
   * A document of up to INDEX_DELETE_SLICE chunks goes in one transaction. A larger one (deleting
   * 35k chunks and their index rows takes the event loop over half a second) is first handed to
   * no organisation, in one short transaction: from then on no read of its org finds it, no job
   * runs it and an index run writing it stops. Its chunks then go a slice at a time, and the row
   * last (`purge`); a purge cut off by a restart resumes when the store is next opened.
   */
  async deleteDocument(orgId: string, id: string): Promise<{ blobKey: string | null } | null> {
    const deleted = this.db
      .transaction(() => {
        const row = this.sql
          .get<[string, string], { blob_key: string | null }>(
            'SELECT blob_key FROM documents WHERE id = ? AND org_id = ?',
          )
          .get(id, orgId);
        if (!row) return null;
        const chunks = this.sql
          .get<[string, number], number>(
            'SELECT count(*) FROM (SELECT 1 FROM chunks WHERE document_id = ? LIMIT ?)',
          )
          .pluck()
          .get(id, INDEX_DELETE_SLICE + 1);
        if ((chunks ?? 0) > INDEX_DELETE_SLICE) {
          this.sql
            .get(
              `UPDATE documents SET org_id = ?, status = 'failed', index_run = NULL, input_text = NULL,
                 fetch_url = NULL, job_state = 'done', lease_owner = NULL, lease_until = NULL
               WHERE id = ?`,
            )
            .run(PURGED_ORG, id);
          return { blobKey: row.blob_key, purge: true };
        }
        // Chunks first and explicitly (their trigger drops the FTS rows), rather than relying on
        // the cascade, which a connection opened without foreign_keys would skip.
        this.sql.get('DELETE FROM chunks WHERE document_id = ?').run(id);
        this.sql.get('DELETE FROM documents WHERE id = ?').run(id);
        return { blobKey: row.blob_key, purge: false };
      })
      .immediate();
    if (!deleted) return null;
    if (deleted.purge) void this.purge(id);
    return { blobKey: deleted.blobKey };
  }

  /** Deletes a document handed to PURGED_ORG: its chunks a slice at a time, then its row. */
  private async purge(id: string): Promise<void> {
    try {
      while ((await this.commits.run(() => this.deleteChunkSlice(id), INDEX_DELETE_SLICE)) > 0) {
        // Each slice is its own transaction; the event loop runs between them.
      }
      await this.commits.run(() =>
        this.sql.get('DELETE FROM documents WHERE id = ? AND org_id = ?').run(id, PURGED_ORG),
      );
    } catch {
      // The database was closed (shutdown) or failed: what is left is invisible, and the next
      // start resumes it.
    }
  }

  /** Resumes the purges a restart cut off. */
  private async resumePurges(): Promise<void> {
    try {
      const ids = this.sql
        .get<[string], string>('SELECT id FROM documents WHERE org_id = ?')
        .pluck()
        .all(PURGED_ORG);
      for (const id of ids) await this.purge(id);
    } catch {
      // As in purge: the database went away; nothing visible is left behind.
    }
  }

  async loadJobInput(id: string): Promise<JobInput | null> {
    const row = this.sql
      .get<[string], JobInputRow>(
        `SELECT ${RECORD_COLUMNS}, input_text, blob_key, fetch_url FROM documents WHERE id = ? AND ${LIVE}`,
      )
      .get(id);
    if (!row) return null;
    return { record: toRecord(row), text: row.input_text, blobKey: row.blob_key, fetchUrl: row.fetch_url };
  }

  async markProcessing(id: string): Promise<boolean> {
    const r = this.sql
      .get(`UPDATE documents SET ${startProcessingSet(false)} WHERE id = @id AND ${LIVE}`)
      .run({ now: this.now(), id });
    return r.changes > 0;
  }

  async markRetrying(id: string, error: DocumentError): Promise<boolean> {
    const r = this.sql
      .get(
        `UPDATE documents SET status = 'queued', error_code = ?, error_message = ?, updated_at = ? WHERE id = ? AND ${LIVE}`,
      )
      .run(error.code, storableText(error.message), this.now(), id);
    return r.changes > 0;
  }

  /**
   * A document of up to INDEX_SLICE_CHARS of chunk text is written in one transaction, shared
   * with the index writes finishing in the same event-loop turn (see GroupCommit): FTS5 then
   * writes one index segment for all of them, not one per document.
   *
   * A larger one is written in slices of about that size, each its own short transaction, with
   * the event loop free between them: one 84 MB text is ~35k chunks, seconds of inserts that
   * would otherwise stall every other request. Meanwhile the document stays `processing`, and
   * search shows only chunks of `ready` documents, so no one sees it half-indexed. The run stamps
   * the document (`index_run`) and every slice checks the stamp: a run that lost its job to a
   * newer one, or whose document was deleted, stops at its next slice and writes nothing more.
   */
  async saveIndex(id: string, result: IndexResult): Promise<boolean> {
    const { batches, totals } = chunkBatchesOf(result);
    const slices = reslice(batches, INDEX_SLICE_CHARS);
    try {
      // Up to one slice in all: the whole document in one shared transaction.
      const first = await slices.next();
      const second = first.done ? null : await slices.next();
      if (first.done || !second || second.done) {
        const chunks = first.done ? [] : first.value;
        const ready = { ...totals(), chunkCount: chunks.length, result };
        return await this.commits.run(() => this.writeIndex(id, chunks, ready), Math.max(1, chunks.length));
      }
      const run = randomUUID();
      const began = await this.commits.run(() => {
        const r = this.sql.get(`UPDATE documents SET index_run = ? WHERE id = ? AND ${LIVE}`).run(run, id);
        return r.changes > 0;
      });
      if (!began) return false;
      // An earlier run's chunks (one that crashed part-way) go first, also a slice at a time.
      for (;;) {
        const removed = await this.commits.run(() => this.inRun(id, run, () => this.deleteChunkSlice(id)));
        if (removed === null) return false;
        if (removed === 0) break;
      }
      const write = async (slice: ChunkRow[]) =>
        (await this.commits.run(
          () => this.inRun(id, run, (orgKey) => this.insertChunks(id, orgKey, slice)),
          slice.length,
        )) !== null;
      let chunkCount = 0;
      // The two slices read ahead first, then the rest as it comes.
      for (const slice of [first.value, second.value]) {
        if (!(await write(slice))) return false;
        chunkCount += slice.length;
      }
      for await (const slice of slices) {
        if (!(await write(slice))) return false;
        chunkCount += slice.length;
      }
      const ready = { ...totals(), chunkCount, result };
      const finished = await this.commits.run(() => this.inRun(id, run, () => this.markReady(id, ready)));
      return finished !== null;
    } finally {
      // Left early (deleted, or a newer run took over): the chunks still coming are not wanted.
      await slices.return(undefined);
    }
  }

  /** Runs `write` if the document still exists and `run` is still the run indexing it; else null. */
  private inRun<T>(id: string, run: string, write: (orgKey: number) => T): T | null {
    const doc = this.sql
      .get<[string], { org_id: string; index_run: string | null }>(
        'SELECT org_id, index_run FROM documents WHERE id = ?',
      )
      .get(id);
    if (!doc || doc.index_run !== run) return null;
    return write(this.orgKey(doc.org_id, true) as number);
  }

  /** Deletes up to INDEX_DELETE_SLICE of the document's chunks; how many it deleted. */
  private deleteChunkSlice(id: string): number {
    return this.sql
      .get('DELETE FROM chunks WHERE id IN (SELECT id FROM chunks WHERE document_id = ? LIMIT ?)')
      .run(id, INDEX_DELETE_SLICE).changes;
  }

  private writeIndex(id: string, chunks: readonly ChunkRow[], ready: ReadyIndex): boolean {
    const doc = this.sql
      .get<[string], { org_id: string }>(`SELECT org_id FROM documents WHERE id = ? AND ${LIVE}`)
      .get(id);
    // Deleted while the worker ran: writing anything now would resurrect its chunks.
    if (!doc) return false;
    this.sql.get('DELETE FROM chunks WHERE document_id = ?').run(id);
    this.insertChunks(id, this.orgKey(doc.org_id, true) as number, chunks);
    this.markReady(id, ready);
    return true;
  }

  private insertChunks(id: string, orgKey: number, chunks: readonly ChunkRow[]): void {
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
      insertFts.run(lastInsertRowid, indexTerms(orgKey, c.words ?? searchWords(text)));
    }
  }

  private markReady(id: string, { chunkCount, tokenCount, contentSha256, result }: ReadyIndex): void {
    // A ready document has no job left to run, and in SQLite its job is this row: ending it here
    // leaves the queue's settle nothing to write (one commit per document fewer).
    this.sql
      .get(
        `UPDATE documents SET status = 'ready', chunk_count = ?, token_count = ?, content_sha256 = ?,
           content_type = coalesce(?, content_type), bytes = coalesce(?, bytes),
           input_text = NULL, fetch_url = NULL, error_code = NULL, error_message = NULL, updated_at = ?,
           job_state = 'done', lease_owner = NULL, lease_until = NULL, index_run = NULL
         WHERE id = ?`,
      )
      .run(
        chunkCount,
        tokenCount,
        contentSha256,
        storableNullable(result.contentType),
        result.bytes,
        this.now(),
        id,
      );
  }

  async markFailed(id: string, error: DocumentError): Promise<boolean> {
    const r = this.sql
      .get(
        `UPDATE documents SET status = 'failed', error_code = ?, error_message = ?,
           input_text = NULL, fetch_url = NULL, updated_at = ?
         WHERE id = ? AND ${LIVE}`,
      )
      .run(error.code, storableText(error.message), this.now(), id);
    return r.changes > 0;
  }

  async attachBlob(
    id: string,
    blob: { blobKey: string; contentType: string; bytes: number },
  ): Promise<boolean> {
    const r = this.sql
      .get(
        // The download lane's job ends here; the same row becomes a fresh job of the process lane
        // (the document stays `processing`: extraction follows).
        `UPDATE documents SET blob_key = ?, content_type = ?, bytes = ?, fetch_url = NULL, updated_at = ?,
           job_state = 'pending', run_at = ?, lease_owner = NULL, lease_until = NULL,
           job_attempts = 0
         WHERE id = ? AND ${LIVE}`,
      )
      .run(blob.blobKey, storableText(blob.contentType), blob.bytes, this.now(), this.now(), id);
    return r.changes > 0;
  }

  async countPending(): Promise<number> {
    const row = this.sql
      .get<[], { n: number }>(`SELECT count(*) AS n FROM documents WHERE status IN ('queued', 'processing')`)
      .get();
    return row?.n ?? 0;
  }

  async listStaleQueued(olderThan: Date, limit: number): Promise<(JobRef & { needsDownload: boolean })[]> {
    return this.sql
      .get<[number, number], { id: string; org_id: string; needs_download: number }>(
        `SELECT id, org_id, fetch_url IS NOT NULL AS needs_download FROM documents
         WHERE status IN ('queued', 'processing') AND updated_at < ?
         ORDER BY updated_at, id LIMIT ?`,
      )
      .all(olderThan.getTime(), Math.max(0, Math.floor(limit)))
      .map((r) => ({ documentId: r.id, orgId: r.org_id, needsDownload: r.needs_download === 1 }));
  }

  /**
   * A query's terms cut to MAX_QUERY_TERMS, keeping the rarest: each term is first counted up to
   * RAREST_PRECOUNT matches only (a few thousand terms cost milliseconds), those that match
   * nothing are dropped, and the fewest-matching come first; ties keep query order.
   */
  private rarestTerms(terms: string[]): string[] {
    if (terms.length <= MAX_QUERY_TERMS) return terms;
    const countCapped = this.countCapped();
    return terms
      .map((term, position) => ({ term, position, rows: countCapped.get(term, RAREST_PRECOUNT) ?? 0 }))
      .filter((t) => t.rows > 0)
      .sort((a, b) => a.rows - b.rows || a.position - b.position)
      .slice(0, MAX_QUERY_TERMS)
      .map((t) => t.term);
  }

  private countCapped() {
    return this.sql
      .get<[string, number], number>(
        'SELECT count(*) FROM (SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT ?)',
      )
      .pluck();
  }

  /**
   * Chooses which query terms to rank with, so one query ranks at most searchRowBudget rows (the
   * idea of Elasticsearch's cutoff_frequency): terms are taken rarest first while their matches
   * fit the budget; a term too common to fit is dropped — in a large org it would cost hundreds
   * of milliseconds and, being that common, barely moves BM25 scores. A query whose rarest term
   * alone exceeds the budget (only very common words) is ranked among that term's newest matches.
   * `every` ORs all the terms that match anything; `exact` says whether `match` is all of them,
   * every match counted (no term dropped, no cut). null when no term matches anything.
   */
  private planMatch(
    terms: string[],
  ): { match: string; minRowid: number; every: string; exact: boolean } | null {
    const cap = this.searchRowBudget + 1;
    const countCapped = this.countCapped();
    const counted = terms
      .map((term) => ({ term, rows: countCapped.get(term, cap) ?? 0 }))
      .filter((t) => t.rows > 0)
      .sort((a, b) => a.rows - b.rows);
    const first = counted[0];
    if (!first) return null;
    const chosen = [first.term];
    let rows = first.rows;
    for (const t of counted.slice(1)) {
      if (rows + t.rows > this.searchRowBudget) break;
      chosen.push(t.term);
      rows += t.rows;
    }
    const match = chosen.join(' OR ');
    const every = counted.map((t) => t.term).join(' OR ');
    if (rows <= this.searchRowBudget) {
      return { match, minRowid: 0, every, exact: chosen.length === counted.length };
    }
    const edge = this.sql
      .get<[string, number], number>(
        'SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?',
      )
      .pluck()
      .get(match, this.searchRowBudget - 1);
    return { match, minRowid: edge ?? 0, every, exact: false };
  }

  /**
   * The documents a filtered query may answer from, found from the documents side: null when
   * they are too many to rank all their chunks (more than MAX_FILTER_DOCUMENTS documents, or
   * more chunks than candidateBudget), so the query must start from the index instead. The scan
   * stops as soon as either bound is passed; a filter that few documents pass reads the org's
   * document rows once (no chunk, no posting), a twentieth of what the index side would.
   */
  private allowedDocuments(q: SearchQuery, where: string[], params: (string | number)[]): string[] | null {
    // With document ids, `+org_id` makes SQLite look the ids up by primary key rather than walk
    // the org's index (as in listDocuments).
    const org = q.documentIds !== null ? '+d.org_id' : 'd.org_id';
    const rows = this.sql
      .get<(string | number)[], { id: string; chunk_count: number | null }>(
        `SELECT d.id, d.chunk_count FROM documents AS d
         WHERE ${org} = ? AND d.chunk_count > 0 ${where.map((w) => `AND ${w}`).join(' ')}`,
      )
      .iterate(q.orgId, ...params);
    const budget = candidateBudget(q, this.searchRowBudget);
    const ids: string[] = [];
    let chunks = 0;
    for (const row of rows) {
      ids.push(row.id);
      chunks += row.chunk_count ?? 0;
      if (ids.length > MAX_FILTER_DOCUMENTS || chunks > budget) return null;
    }
    return ids;
  }

  /**
   * The rowids of chunks a filtered query over budget ranks, at most candidateBudget of them:
   * from few documents, all their chunks (every match among them is ranked, so the answer is
   * exact); otherwise the newest matches that pass the filters, among at most
   * LOOSE_FILTER_SCAN_FACTOR × budget newest matches, so a loose filter still bounds the work.
   */
  private filteredCandidates(
    q: SearchQuery,
    plan: { match: string; every: string },
    where: string[],
    params: (string | number)[],
  ): { match: string; rowids: number[] } {
    const allowed = this.allowedDocuments(q, where, params);
    if (allowed !== null) {
      const rowids = this.sql
        .get<[string, number], number>(
          'SELECT id FROM chunks WHERE document_id IN (SELECT value FROM json_each(?)) LIMIT ?',
        )
        .pluck()
        .all(JSON.stringify(allowed), candidateBudget(q, this.searchRowBudget));
      return { match: plan.every, rowids };
    }
    // CROSS JOIN pins the order: newest matches first, then their chunk and document by key.
    const rowids = this.sql
      .get<(string | number)[], number>(
        `SELECT c.id FROM (SELECT rowid AS id FROM chunks_fts WHERE chunks_fts MATCH ?
                           ORDER BY rowid DESC LIMIT ?) AS f
         CROSS JOIN chunks AS c ON c.id = f.id CROSS JOIN documents AS d ON d.id = c.document_id
         WHERE d.org_id = ? ${where.map((w) => `AND ${w}`).join(' ')}
         LIMIT ?`,
      )
      .pluck()
      .all(
        plan.match,
        this.searchRowBudget * LOOSE_FILTER_SCAN_FACTOR,
        q.orgId,
        ...params,
        this.searchRowBudget,
      );
    return { match: plan.match, rowids };
  }

  async search(q: SearchQuery): Promise<SearchHit[]> {
    const topK = Math.floor(q.topK);
    const orgKey = this.orgKey(q.orgId, false);
    // An org that has never indexed a chunk has no terms to match.
    if (orgKey === null || topK <= 0 || q.documentIds?.length === 0) return [];
    const plan = this.planMatch(this.rarestTerms(queryTerms(orgKey, q.query)));
    if (plan === null) return [];
    const { match, minRowid } = plan;

    // Only chunks of ready documents are found: a large document being indexed in slices, or
    // one whose indexing was cut off, has some of its chunks in the index already.
    const where: string[] = ["d.status = 'ready'"];
    const params: (string | number)[] = [];
    if (q.documentIds !== null) {
      where.push('d.id IN (SELECT value FROM json_each(?))');
      params.push(JSON.stringify(q.documentIds));
    }
    for (const [key, values] of Object.entries(q.filter)) {
      // json_each compares keys as plain strings: no JSON-path parsing, so a key may hold
      // '.', '"', '$' or '[' without changing what is matched.
      where.push(`EXISTS (SELECT 1 FROM json_each(d.metadata) AS m
        WHERE m.key = ? AND m.type = 'text' AND m.value IN (SELECT value FROM json_each(?)))`);
      params.push(storableText(key), JSON.stringify(values.map(storableText)));
    }
    const filtered = q.documentIds !== null || Object.keys(q.filter).length > 0;

    // bm25() rather than FTS5's `rank` column: its sorter is several times slower on large match
    // sets. CROSS JOIN pins the join order (matches → chunk → document, by primary key): left to
    // itself the planner may walk every chunk of a large org and probe the index per chunk.
    // Ties are broken by chunk rowid so equal scores come back in a stable order.
    const joined = `SELECT c.document_id, c.chunk_index, c.text, c.page_start, c.page_end, d.metadata,
        d.org_id, d.status, -f.bm25_score AS score
      FROM f CROSS JOIN chunks AS c ON c.id = f.chunk_id CROSS JOIN documents AS d ON d.id = c.document_id`;
    // The plan's matches (from minRowid on), materialised in score order; the outer ORDER BY is
    // the same, so SQLite walks them best first and stops once topK rows pass the conditions.
    const rankAndFilter = () =>
      this.sql
        .get<(string | number)[], HitRow>(
          `WITH f AS MATERIALIZED (
             SELECT rowid AS chunk_id, bm25(chunks_fts) AS bm25_score FROM chunks_fts
             WHERE chunks_fts MATCH ? AND rowid >= ? ORDER BY bm25_score, rowid)
           ${joined}
           WHERE d.org_id = ? AND ${where.join(' AND ')}
           ORDER BY f.bm25_score, f.chunk_id
           LIMIT ?`,
        )
        .all(match, minRowid, q.orgId, ...params, topK);
    let rows: HitRow[];
    if (!filtered) {
      // Terms are org-scoped, so every match is this org's: top-k is taken in the index before
      // any join.
      rows = this.sql
        .get<(string | number)[], HitRow>(
          `WITH f AS MATERIALIZED (
             SELECT rowid AS chunk_id, bm25(chunks_fts) AS bm25_score FROM chunks_fts
             WHERE chunks_fts MATCH ? AND rowid >= ? ORDER BY bm25_score, rowid LIMIT ?)
           ${joined}
           ORDER BY f.bm25_score, f.chunk_id`,
        )
        .all(match, minRowid, topK);
      // Unless that top-k held chunks not to be shown: of a document not ready yet, or of one
      // deleted whose chunks are still being removed.
      if (rows.some((r) => r.status !== 'ready' || r.org_id !== q.orgId)) rows = rankAndFilter();
    } else if (plan.exact) {
      // Every match of every term is within the budget (minRowid is 0): all are ranked and the
      // filters applied to them.
      rows = rankAndFilter();
    } else {
      // Over the budget the filters choose the candidates, so they never come after the cut.
      // One FTS scan over the candidates' rowid span ranks them: bm25() counts each term's
      // matches once per scan, so one scan per document would cost that count per document.
      // `+rowid` keeps the IN list out of the FTS query plan for the same reason.
      const candidates = this.filteredCandidates(q, plan, where, params);
      if (candidates.rowids.length === 0) return [];
      let lo = Number.POSITIVE_INFINITY;
      let hi = 0;
      for (const id of candidates.rowids) {
        if (id < lo) lo = id;
        if (id > hi) hi = id;
      }
      rows = this.sql
        .get<(string | number)[], HitRow>(
          `WITH f AS MATERIALIZED (
             SELECT rowid AS chunk_id, bm25(chunks_fts) AS bm25_score FROM chunks_fts
             WHERE chunks_fts MATCH ? AND rowid BETWEEN ? AND ?
               AND +rowid IN (SELECT value FROM json_each(?))
             ORDER BY bm25_score, rowid LIMIT ?)
           ${joined}
           WHERE d.org_id = ? AND ${where.join(' AND ')}
           ORDER BY f.bm25_score, f.chunk_id`,
        )
        .all(candidates.match, lo, hi, JSON.stringify(candidates.rowids), topK, q.orgId, ...params);
    }
    return rows.map((r) => ({
      documentId: r.document_id,
      chunkIndex: r.chunk_index,
      text: r.text,
      score: r.score,
      metadata: JSON.parse(r.metadata) as Metadata,
      pageStart: r.page_start,
      pageEnd: r.page_end,
    }));
  }
}
