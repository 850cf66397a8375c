// DocumentStore on PostgreSQL: document records and their lifecycle. Chunks are the keyword
// index's (keyword-index.ts), written here inside the records' transaction. The documents table also carries the job columns
// PgTableQueue leases, so with that queue creating a document is enqueuing its job in the same
// statement.
import { chunkBatchesOf } from '../../domain/chunk-batches.js';
import type { Clock, DocumentStore } from '../../domain/ports.js';
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
  StoredChunk,
} from '../../domain/types.js';
import {
  RECORD_COLUMNS,
  type RowReaders,
  type DocumentRow as SharedDocumentRow,
  toDocumentRecord,
} from '../records/document-row.js';
import type { PgDatabase } from './database.js';
import { postgresFilter } from './filter-sql.js';
import { PgKeywordIndex } from './keyword-index.js';
import { PgWebhookOutbox } from './webhook-store.js';

const systemClock: Clock = { now: () => new Date() };

export interface PgDocumentStoreOptions {
  /**
   * Whether PgTableQueue runs the jobs (a new document is then a pending job). With BullMQ the job
   * columns start 'done' so the table queue's partial indexes stay empty; if the deployment later
   * drops Redis, the reconciler finds those queued documents and revives their rows as jobs.
   */
  tableQueue?: boolean;
  /** The keyword index saveIndex writes (default: one on the same database). */
  index?: PgKeywordIndex;
  /** Writes webhook events in the transactions of the status changes (default: one on the same database). */
  outbox?: PgWebhookOutbox;
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
  private readonly initialJobState: 'pending' | 'done';
  readonly index: PgKeywordIndex;
  private readonly outbox: PgWebhookOutbox;

  constructor(
    private readonly db: PgDatabase,
    private readonly clock: Clock = systemClock,
    opts: PgDocumentStoreOptions = {},
  ) {
    this.documents = db.table('documents');
    this.initialJobState = (opts.tableQueue ?? true) ? 'pending' : 'done';
    this.index = opts.index ?? new PgKeywordIndex(db);
    this.outbox = opts.outbox ?? new PgWebhookOutbox(db);
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
    if (q.filter !== null) where.push(postgresFilter(q.filter, 'metadata', param));
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
    // The chunks go with the row (ON DELETE CASCADE) in one statement, so they stop matching at the
    // moment the document disappears; its webhook event (the record as it was) commits with it.
    return this.db.transaction(async (tx) => {
      // Locked first: an index run finishing meanwhile commits before, and the event shows its result.
      const own = await tx.query(`SELECT 1 FROM ${this.documents} WHERE id = $1 AND org_id = $2 FOR UPDATE`, [
        storable(id),
        storable(orgId),
      ]);
      if (!own.rowCount) return null;
      await this.outbox.emit(tx, 'document.deleted', storable(id), this.clock.now());
      const { rows } = await tx.query<{ blob_key: string | null }>(
        `DELETE FROM ${this.documents} WHERE id = $1 AND org_id = $2 RETURNING blob_key`,
        [storable(id), storable(orgId)],
      );
      return rows[0] ? { blobKey: rows[0].blob_key } : null;
    });
  }

  /**
   * One transaction: the org's chunks are counted, then its documents deleted (their chunks with
   * them, ON DELETE CASCADE). A worker indexing one of them holds its row (FOR UPDATE in saveIndex)
   * until it commits, and then finds it gone; a job still queued finds nothing to load.
   */
  async purgeOrg(orgId: string): Promise<{ documents: number; chunks: number; blobKeys: string[] }> {
    const chunks = this.db.table('chunks');
    return this.db.transaction(async (tx) => {
      const counted = await tx.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${chunks} WHERE org_id = $1`,
        [storable(orgId)],
      );
      const { rows } = await tx.query<{ blob_key: string | null }>(
        `DELETE FROM ${this.documents} WHERE org_id = $1 RETURNING blob_key`,
        [storable(orgId)],
      );
      await this.index.forgetOrg(tx, storable(orgId));
      return {
        documents: rows.length,
        chunks: counted.rows[0]?.n ?? 0,
        blobKeys: rows.flatMap((row) => (row.blob_key === null ? [] : [row.blob_key])),
      };
    });
  }

  async listChunks(
    orgId: string,
    id: string,
    page: { afterIndex: number; limit: number },
  ): Promise<StoredChunk[] | null> {
    const { rows } = await this.db.query(`SELECT 1 FROM ${this.documents} WHERE id = $1 AND org_id = $2`, [
      storable(id),
      storable(orgId),
    ]);
    if (rows.length === 0) return null;
    return this.index.readChunks(storable(id), page.afterIndex, Math.max(0, Math.floor(page.limit)));
  }

  async updateMetadata(
    orgId: string,
    id: string,
    update: (current: Metadata) => Metadata,
  ): Promise<DocumentRecord | null> {
    return this.db.transaction(async (tx) => {
      // The row lock makes concurrent updates of one document apply one after the other.
      const { rows } = await tx.query<{ metadata: Metadata }>(
        `SELECT metadata FROM ${this.documents} WHERE id = $1 AND org_id = $2 FOR UPDATE`,
        [storable(id), storable(orgId)],
      );
      const current = rows[0];
      if (!current) return null;
      const metadata = cleanMetadata(update(current.metadata));
      const updated = await tx.query<DocumentRow>(
        `UPDATE ${this.documents} SET metadata = $1, updated_at = $2 WHERE id = $3 RETURNING ${RECORD_COLUMNS}`,
        [JSON.stringify(metadata), this.clock.now(), storable(id)],
      );
      return updated.rows[0] ? toRecord(updated.rows[0]) : null;
    });
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
        await this.index.deleteChunks(tx, docId);
        const insert = (batch: readonly ChunkRow[]) => this.index.writeChunks(tx, docId, doc.org_id, batch);
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
        const { tokenCount, contentSha256, ocrPages } = totals();
        await tx.query(
          `UPDATE ${this.documents} SET status = 'ready', chunk_count = $1, token_count = $2, content_sha256 = $3,
             content_type = coalesce($4, content_type), bytes = coalesce($5, bytes),
             input_text = NULL, fetch_url = NULL, error_code = NULL, error_message = NULL, updated_at = $6,
             ocr_pages = $8
           WHERE id = $7`,
          [
            chunkCount,
            tokenCount,
            storable(contentSha256),
            storable(result.contentType),
            result.bytes,
            this.clock.now(),
            docId,
            ocrPages ?? null,
          ],
        );
        await this.outbox.emit(tx, 'document.ready', docId, this.clock.now()); // webhooks: same transaction
        return true;
      });
    } finally {
      // Left early (deleted meanwhile): the chunks still coming are not wanted.
      await source.return?.();
    }
  }

  async markFailed(id: string, error: DocumentError): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const r = await tx.query(
        `UPDATE ${this.documents} SET status = 'failed', error_code = $1, error_message = $2,
           input_text = NULL, fetch_url = NULL, updated_at = $3
         WHERE id = $4`,
        [error.code, storable(error.message), this.clock.now(), storable(id)],
      );
      const changed = (r.rowCount ?? 0) > 0;
      if (changed) await this.outbox.emit(tx, 'document.failed', storable(id), this.clock.now()); // webhooks
      return changed;
    });
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
}
