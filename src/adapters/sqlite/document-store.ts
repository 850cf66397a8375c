// DocumentStore on SQLite: document records and their lifecycle. Chunks and their FTS5 rows are
// the keyword index's (keyword-index.ts), written here inside the records' transactions. The
// documents table also carries the job columns that SqliteTableQueue leases, so creating a
// document is enqueuing its job in the same transaction.
import { randomUUID } from 'node:crypto';
import { chunkBatchesOf } from '../../domain/chunk-batches.js';
import type { Clock, DocumentStore } from '../../domain/ports.js';
import type {
  ChunkRow,
  DocumentError,
  DocumentRecord,
  IndexResult,
  IndexTotals,
  JobInput,
  JobRef,
  ListQuery,
  Metadata,
  NewDocument,
  StoredChunk,
} from '../../domain/types.js';
import {
  RECORD_COLUMNS,
  type RowReaders,
  type DocumentRow as SharedDocumentRow,
  toDocumentRecord,
} from '../records/document-row.js';
import type { Database } from './database.js';
import { sqliteFilter } from './filter-sql.js';
import { GroupCommit } from './group-commit.js';
import { SqliteKeywordIndex } from './keyword-index.js';
import { startProcessingSet } from './start-processing.js';
import { StatementCache } from './statements.js';
import { storableMetadata, storableNullable, storableText } from './text.js';
import { SqliteWebhookOutbox } from './webhook-store.js';

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
  /** The keyword index that saveIndex writes (default: one on the same database). */
  index?: SqliteKeywordIndex;
  /** Writes webhook events in the transactions of the status changes (default: one on the same database). */
  outbox?: SqliteWebhookOutbox;
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

export class SqliteDocumentStore implements DocumentStore {
  private readonly sql: StatementCache;
  private readonly commits: GroupCommit;
  private readonly clock: Clock;
  readonly index: SqliteKeywordIndex;
  private readonly outbox: SqliteWebhookOutbox;

  constructor(
    private readonly db: Database,
    opts: SqliteDocumentStoreOptions = {},
  ) {
    this.sql = new StatementCache(db);
    this.commits = new GroupCommit(db);
    this.clock = opts.clock ?? systemClock;
    this.index = opts.index ?? new SqliteKeywordIndex(db);
    this.outbox = opts.outbox ?? new SqliteWebhookOutbox(db, this.clock);
    setImmediate(() => void this.resumePurges());
  }

  private now(): number {
    return this.clock.now().getTime();
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
    if (q.filter !== null) {
      const condition = sqliteFilter(q.filter, 'documents.metadata');
      where.push(condition.sql);
      params.push(...condition.params);
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
        this.outbox.emit('document.deleted', id); // webhooks: the record as it was, same transaction
        if (this.index.countChunks(id, INDEX_DELETE_SLICE + 1) > INDEX_DELETE_SLICE) {
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
        this.index.deleteChunks(id);
        this.sql.get('DELETE FROM documents WHERE id = ?').run(id);
        return { blobKey: row.blob_key, purge: false };
      })
      .immediate();
    if (!deleted) return null;
    if (deleted.purge) void this.purge(id);
    return { blobKey: deleted.blobKey };
  }

  async listChunks(
    orgId: string,
    id: string,
    page: { afterIndex: number; limit: number },
  ): Promise<StoredChunk[] | null> {
    const exists = this.sql
      .get<[string, string], number>('SELECT 1 FROM documents WHERE id = ? AND org_id = ?')
      .pluck()
      .get(id, orgId);
    if (exists === undefined) return null;
    return this.index.readChunks(id, page.afterIndex, Math.max(0, Math.floor(page.limit)));
  }

  async updateMetadata(
    orgId: string,
    id: string,
    update: (current: Metadata) => Metadata,
  ): Promise<DocumentRecord | null> {
    return this.db
      .transaction(() => {
        const current = this.sql
          .get<[string, string], string>('SELECT metadata FROM documents WHERE id = ? AND org_id = ?')
          .pluck()
          .get(id, orgId);
        if (current === undefined) return null;
        const metadata = update(JSON.parse(current) as Metadata);
        this.sql
          .get('UPDATE documents SET metadata = ?, updated_at = ? WHERE id = ?')
          .run(JSON.stringify(storableMetadata(metadata)), this.now(), id);
        const row = this.sql
          .get<[string], DocumentRow>(`SELECT ${RECORD_COLUMNS} FROM documents WHERE id = ?`)
          .get(id);
        return row ? toRecord(row) : null;
      })
      .immediate();
  }

  /**
   * Every document of the org is first handed to PURGED_ORG in one transaction (as deleteDocument
   * does with a large one): from then on no read finds them, no job runs them and no index run
   * writes them. Their chunks then go a slice at a time, each document's row after its chunks.
   */
  async purgeOrg(orgId: string): Promise<{ documents: number; chunks: number; blobKeys: string[] }> {
    const handed = this.db
      .transaction(() => {
        const rows = this.sql
          .get<[string], { id: string; blob_key: string | null }>(
            'SELECT id, blob_key FROM documents WHERE org_id = ?',
          )
          .all(orgId);
        const chunks =
          this.sql
            .get<[string], number>(
              'SELECT count(*) FROM chunks WHERE document_id IN (SELECT id FROM documents WHERE org_id = ?)',
            )
            .pluck()
            .get(orgId) ?? 0;
        this.sql
          .get(
            `UPDATE documents SET org_id = ?, status = 'failed', index_run = NULL, input_text = NULL,
               fetch_url = NULL, job_state = 'done', lease_owner = NULL, lease_until = NULL
             WHERE org_id = ?`,
          )
          .run(PURGED_ORG, orgId);
        return { rows, chunks };
      })
      .immediate();
    for (const { id } of handed.rows) await this.purgeHanded(id);
    await this.commits.run(() => this.index.forgetOrg(orgId));
    return {
      documents: handed.rows.length,
      chunks: handed.chunks,
      blobKeys: handed.rows.flatMap((row) => (row.blob_key === null ? [] : [row.blob_key])),
    };
  }

  /** Deletes a document handed to PURGED_ORG, in the background: a failure is resumed at the next start. */
  private async purge(id: string): Promise<void> {
    try {
      await this.purgeHanded(id);
    } catch {
      // The database was closed (shutdown) or failed: what is left is invisible, and the next
      // start resumes it.
    }
  }

  /** Deletes a document handed to PURGED_ORG: its chunks a slice at a time, then its row. */
  private async purgeHanded(id: string): Promise<void> {
    while (
      (await this.commits.run(() => this.index.deleteChunks(id, INDEX_DELETE_SLICE), INDEX_DELETE_SLICE)) > 0
    ) {
      // Each slice is its own transaction; the event loop runs between them.
    }
    await this.commits.run(() =>
      this.sql.get('DELETE FROM documents WHERE id = ? AND org_id = ?').run(id, PURGED_ORG),
    );
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
        const removed = await this.commits.run(() =>
          this.inRun(id, run, () => this.index.deleteChunks(id, INDEX_DELETE_SLICE)),
        );
        if (removed === null) return false;
        if (removed === 0) break;
      }
      const write = async (slice: ChunkRow[]) =>
        (await this.commits.run(
          () => this.inRun(id, run, (orgId) => this.index.writeChunks(id, orgId, slice)),
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
  private inRun<T>(id: string, run: string, write: (orgId: string) => T): T | null {
    const doc = this.sql
      .get<[string], { org_id: string; index_run: string | null }>(
        'SELECT org_id, index_run FROM documents WHERE id = ?',
      )
      .get(id);
    if (!doc || doc.index_run !== run) return null;
    return write(doc.org_id);
  }

  private writeIndex(id: string, chunks: readonly ChunkRow[], ready: ReadyIndex): boolean {
    const doc = this.sql
      .get<[string], { org_id: string }>(`SELECT org_id FROM documents WHERE id = ? AND ${LIVE}`)
      .get(id);
    // Deleted while the worker ran: writing anything now would resurrect its chunks.
    if (!doc) return false;
    this.index.deleteChunks(id);
    this.index.writeChunks(id, doc.org_id, chunks);
    this.markReady(id, ready);
    return true;
  }

  private markReady(
    id: string,
    { chunkCount, tokenCount, contentSha256, ocrPages, result }: ReadyIndex,
  ): void {
    // A ready document has no job left to run, and in SQLite its job is this row: ending it here
    // leaves the queue's settle nothing to write (one commit per document fewer).
    this.sql
      .get(
        `UPDATE documents SET status = 'ready', chunk_count = ?, token_count = ?, content_sha256 = ?, ocr_pages = ?,
           content_type = coalesce(?, content_type), bytes = coalesce(?, bytes),
           input_text = NULL, fetch_url = NULL, error_code = NULL, error_message = NULL, updated_at = ?,
           job_state = 'done', lease_owner = NULL, lease_until = NULL, index_run = NULL
         WHERE id = ?`,
      )
      .run(
        chunkCount,
        tokenCount,
        contentSha256,
        ocrPages ?? null,
        storableNullable(result.contentType),
        result.bytes,
        this.now(),
        id,
      );
    this.outbox.emit('document.ready', id); // webhooks: same transaction as the status change
  }

  async markFailed(id: string, error: DocumentError): Promise<boolean> {
    return this.db
      .transaction(() => {
        const r = this.sql
          .get(
            `UPDATE documents SET status = 'failed', error_code = ?, error_message = ?,
               input_text = NULL, fetch_url = NULL, updated_at = ?
             WHERE id = ? AND ${LIVE}`,
          )
          .run(error.code, storableText(error.message), this.now(), id);
        if (r.changes > 0) this.outbox.emit('document.failed', id); // webhooks: same transaction
        return r.changes > 0;
      })
      .immediate();
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
}
