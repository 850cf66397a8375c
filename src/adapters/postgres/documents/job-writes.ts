// What PgDocumentStore's jobs read and write of their document: its input, its status as the job
// runs, fails or is retried, its downloaded file, and the index (saveIndex: the chunks, through
// the keyword writer, and the record turned ready, in one transaction); and the counts of
// unfinished work the reconciler reads.
import { chunkBatchesOf } from '../../../domain/chunk-batches.js';
import type { Clock, KeywordIndexWriter } from '../../../domain/ports.js';
import type { ChunkRow, DocumentError, IndexResult, JobInput, JobRef } from '../../../domain/types.js';
import { PENDING_ACTIVE, RECORD_COLUMNS, toJobInput, WORK_VERSION } from '../../sql-rows/document-row.js';
import type { PgDatabase, Queryable } from '../database.js';
import type { PgWebhookOutbox } from '../webhook-store.js';
import {
  type DocumentRow,
  LIVE,
  type PgDocumentContext,
  READ_ROW,
  storable,
  type WorkRow,
} from './context.js';
import type { PgDocumentPurges } from './purges.js';

/** How often, at most, a long index write looks whether its document was deleted meanwhile. */
const DELETED_CHECK_MS = 250;

const pendingActive = (row: WorkRow) =>
  row.pending_version !== null && (row.pending_status === 'queued' || row.pending_status === 'processing');
const workVersion = (row: WorkRow) => (pendingActive(row) ? (row.pending_version as number) : row.version);

interface JobInputRow extends DocumentRow {
  input_text: string | null;
  blob_key: string | null;
  fetch_url: string | null;
}

/**
 * Characters of chunk text and words per INSERT when saving chunks (the chunk that reaches it
 * included). A batch's memory goes with its characters, not its rows: the rows wait for it, its
 * columns take about as many bytes again and node-postgres copies them into its message. 2,000
 * rows were about 1.5 to 50 million characters (chunks of 128 to 4,096 tokens); writes of a 20 MB
 * text took as long with 0.25, 1 or 4 million characters per INSERT.
 */
const CHUNK_BATCH_CHARS = 1_000_000;

export class PgJobWrites {
  private readonly db: PgDatabase;
  private readonly clock: Clock;
  private readonly documents: string;
  private readonly initialJobState: 'pending' | 'done';
  private readonly keyword: KeywordIndexWriter<Queryable, 'async'>;
  private readonly outbox: PgWebhookOutbox;

  constructor(
    context: PgDocumentContext,
    /** Removes what a delete left to an index write that gave up. */
    private readonly purges: PgDocumentPurges,
  ) {
    this.db = context.db;
    this.clock = context.clock;
    this.documents = context.documents;
    this.initialJobState = context.initialJobState;
    this.keyword = context.keyword;
    this.outbox = context.outbox;
  }

  async loadJobInput(id: string): Promise<JobInput | null> {
    const { rows } = await this.db.query<JobInputRow>(
      `SELECT ${RECORD_COLUMNS}, input_text, blob_key, fetch_url FROM ${this.documents} WHERE id = $1 AND ${LIVE}`,
      [storable(id)],
    );
    const row = rows[0];
    return row ? toJobInput(row, READ_ROW) : null;
  }

  /**
   * A job's write: `pendingSet` when a pending version is the work, else `currentSet`; nothing
   * when the document is gone or `version` is no longer the one to produce. The SETs name their
   * parameters `@name` (from `values`, plus @now).
   */
  private async workWrite(
    id: string,
    version: number | undefined,
    pendingSet: string,
    currentSet: string,
    values: Record<string, unknown>,
    /** Runs in the same transaction when the current version's row changed. */
    onCurrent?: (tx: Queryable) => Promise<unknown>,
  ): Promise<boolean> {
    const guard = `${version === undefined ? '' : ` AND ${WORK_VERSION} = @version`} AND ${LIVE}`;
    const all = { ...values, id: storable(id), now: this.clock.now(), version: version ?? null };
    const write = async (q: Queryable) => {
      const run = async (sql: string) => {
        const { text, params } = named(sql, all);
        return ((await q.query(text, params)).rowCount ?? 0) > 0;
      };
      if (
        await run(`UPDATE ${this.documents} SET ${pendingSet} WHERE id = @id AND ${PENDING_ACTIVE}${guard}`)
      ) {
        return true;
      }
      const changed = await run(
        `UPDATE ${this.documents} SET ${currentSet} WHERE id = @id AND NOT (${PENDING_ACTIVE})${guard}`,
      );
      if (changed && onCurrent) await onCurrent(q);
      return changed;
    };
    return onCurrent ? this.db.transaction(write) : write(this.db);
  }

  async markProcessing(id: string, version?: number): Promise<boolean> {
    return this.workWrite(
      id,
      version,
      `pending_status = 'processing', pending = jsonb_set(pending, '{error}', 'null'::jsonb),
       attempts = attempts + 1, updated_at = @now`,
      `status = 'processing', attempts = attempts + 1, error_code = NULL, error_message = NULL, updated_at = @now`,
      {},
    );
  }

  async markRetrying(id: string, error: DocumentError, version?: number): Promise<boolean> {
    return this.workWrite(
      id,
      version,
      `pending_status = 'queued', pending = jsonb_set(pending, '{error}', @error::jsonb), updated_at = @now`,
      `status = 'queued', error_code = @code, error_message = @message, updated_at = @now`,
      errorParams(error),
    );
  }

  async saveIndex(id: string, result: IndexResult): Promise<boolean> {
    const docId = storable(id);
    const { batches, totals } = chunkBatchesOf(result);
    // Chunks that arrive in batches are inserted as they come, inside the one transaction: no one
    // sees the document half-indexed, and they are never all held in memory at once. For a
    // pending version the same transaction removes the current version's chunks: queries see the
    // old chunks until the commit and the new ones after it (never both, never neither).
    const source = batches[Symbol.asyncIterator]();
    const work =
      (lock: string) =>
      async (tx: Queryable): Promise<WorkRow | null> => {
        const { rows } = await tx.query<WorkRow>(
          `SELECT org_id, version, pending_version, pending_status, pending, blob_key
           FROM ${this.documents} WHERE id = $1 AND ${LIVE} ${lock}`,
          [docId],
        );
        const doc = rows[0];
        if (!doc || (result.version !== undefined && workVersion(doc) !== result.version)) return null;
        return doc;
      };
    let saved = false;
    try {
      saved = await this.db.transaction(async (tx) => {
        // Two runs of one document take turns (a retried job beside a lost one): the second
        // replaces what the first wrote, never adds to it.
        await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`docindex:save-index:${docId}`]);
        // KEY SHARE keeps a delete waiting until this commits (then it removes what this wrote),
        // but lets a new version be recorded meanwhile: PUT /content does not wait for a long
        // index write, and the check before the commit below then drops this one.
        const doc = await work('FOR KEY SHARE')(tx);
        if (!doc) return false;
        await this.keyword.deleteChunks(docId, tx);
        // A delete meanwhile marks the row rather than wait for this write (deleteDocument): seen
        // before each insert and every DELETED_CHECK_MS between batches, it ends the write.
        let checkedAt = Date.now();
        const stillWanted = async () => {
          checkedAt = Date.now();
          const { rows } = await tx.query<{ live: boolean }>(
            `SELECT ${LIVE} AS live FROM ${this.documents} WHERE id = $1`,
            [docId],
          );
          if (!rows[0]?.live) throw new WriteAbandoned();
        };
        const insert = async (batch: readonly ChunkRow[]) => {
          await stillWanted();
          await this.keyword.writeChunks(docId, doc.org_id, batch, tx);
        };
        let pending: ChunkRow[] = [];
        let pendingChars = 0;
        let chunkCount = 0;
        for (let next = await source.next(); !next.done; next = await source.next()) {
          for (const chunk of next.value) {
            pending.push(chunk);
            pendingChars += chunk.text.length + (chunk.words?.length ?? 0);
            if (pendingChars >= CHUNK_BATCH_CHARS) {
              await insert(pending);
              pending = [];
              pendingChars = 0;
            }
          }
          chunkCount += next.value.length;
          if (Date.now() - checkedAt >= DELETED_CHECK_MS) await stillWanted();
        }
        if (pending.length > 0) await insert(pending);
        // Still the version to produce, and not deleted? A newer version recorded while the chunks
        // were written wins, and a delete ends the write: everything it wrote is rolled back.
        const latest = await work('FOR UPDATE')(tx);
        if (!latest) throw new WriteAbandoned();
        const { tokenCount, contentSha256, ocrPages, language } = totals();
        const spec = pendingActive(latest) ? latest.pending : null;
        // The pending version (if that is what this is) becomes the current one.
        const promote =
          spec === null
            ? ''
            : `, version = pending_version, pending_version = NULL, pending_status = NULL, pending = NULL,
               source_type = $10, filename = $11, source_url = $12, chunk_size = $13, chunk_overlap = $14,
               blob_key = $15, requested_language = $16`;
        const promoteParams =
          spec === null
            ? []
            : [
                spec.source.type,
                storable(spec.source.filename),
                storable(spec.source.url),
                spec.chunk_size,
                spec.chunk_overlap,
                storable(spec.blob_key),
                spec.language ?? null,
              ];
        await tx.query(
          `UPDATE ${this.documents} SET status = 'ready', chunk_count = $1, token_count = $2, content_sha256 = $3,
             content_type = coalesce($4, ${spec === null ? 'content_type' : "pending->'source'->>'content_type'"}),
             bytes = coalesce($5, ${spec === null ? 'bytes' : "(pending->'source'->>'bytes')::bigint"}),
             input_text = NULL, fetch_url = NULL, error_code = NULL, error_message = NULL, updated_at = $6,
             ocr_pages = $8, language = $9
             ${promote}
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
            language ?? null,
            ...promoteParams,
          ],
        );
        if (language !== undefined) await this.keyword.noteLanguage(docId, language, tx);
        await this.outbox.emit(tx, 'document.ready', docId, this.clock.now()); // webhooks: same transaction
        return true;
      });
      return saved;
    } catch (error) {
      if (error instanceof WriteAbandoned) return false;
      throw error;
    } finally {
      // Left early (deleted meanwhile): the chunks still coming are not wanted.
      await source.return?.();
      // Deleted while this write held the row: the delete only marked it, so this removes it. A
      // failure here leaves it to the reconciler's sweep (finishDeletes).
      if (!saved) await this.purges.removeMarked(this.db, 'id = $1', [docId]).catch(() => {});
    }
  }

  async markFailed(id: string, error: DocumentError, version?: number): Promise<boolean> {
    // A failed pending version leaves the current one answering; its error is the pending one's.
    return this.workWrite(
      id,
      version,
      `pending_status = 'failed', pending = jsonb_set(pending, '{error}', @error::jsonb),
       input_text = NULL, fetch_url = NULL, updated_at = @now`,
      `status = 'failed', error_code = @code, error_message = @message, input_text = NULL,
       fetch_url = NULL, updated_at = @now`,
      errorParams(error),
      // webhooks: the event commits with the status change (a failed pending version changes no status)
      (tx) => this.outbox.emit(tx, 'document.failed', storable(id), this.clock.now()),
    );
  }

  async attachBlob(
    id: string,
    blob: { blobKey: string; contentType: string; bytes: number },
    version?: number,
  ): Promise<boolean> {
    // With PgTableQueue the download lane's job ends here and the same row becomes a fresh job of
    // the process lane, in the same statement (the document stays `processing`: extraction
    // follows). The download consumer's own settle then finds its lease gone and writes nothing.
    const nextJob =
      this.initialJobState === 'pending'
        ? `, job_state = 'pending', run_at = now(), lease_owner = NULL, lease_until = NULL, job_attempts = 0`
        : '';
    return this.workWrite(
      id,
      version,
      `pending = jsonb_set(jsonb_set(jsonb_set(pending, '{blob_key}', to_jsonb(@blobKey::text)),
         '{source,content_type}', to_jsonb(@contentType::text)), '{source,bytes}', to_jsonb(@bytes::bigint)),
       fetch_url = NULL, updated_at = @now ${nextJob}`,
      `blob_key = @blobKey, content_type = @contentType, bytes = @bytes, fetch_url = NULL,
       updated_at = @now ${nextJob}`,
      { blobKey: storable(blob.blobKey), contentType: storable(blob.contentType), bytes: blob.bytes },
    );
  }

  async forgetBlob(id: string, blobKey: string): Promise<boolean> {
    const r = await this.db.query(
      `UPDATE ${this.documents} SET blob_key = NULL WHERE id = $1 AND blob_key = $2`,
      [storable(id), storable(blobKey)],
    );
    return (r.rowCount ?? 0) > 0;
  }

  async countPending(): Promise<number> {
    const { rows } = await this.db.query<{ n: number }>(
      `SELECT ((SELECT count(*) FROM ${this.documents} WHERE status IN ('queued', 'processing') AND ${LIVE})
            + (SELECT count(*) FROM ${this.documents} WHERE pending_status IN ('queued', 'processing') AND ${LIVE}))::int
         AS n`,
    );
    return rows[0]?.n ?? 0;
  }

  async listStaleQueued(olderThan: Date, limit: number): Promise<(JobRef & { needsDownload: boolean })[]> {
    const { rows } = await this.db.query<{ id: string; org_id: string; needs_download: boolean }>(
      `SELECT id, org_id, fetch_url IS NOT NULL AS needs_download FROM ${this.documents}
       WHERE (status IN ('queued', 'processing') OR pending_status IN ('queued', 'processing'))
         AND updated_at < $1 AND ${LIVE}
       ORDER BY updated_at, id LIMIT $2`,
      [olderThan, Math.max(0, Math.floor(limit))],
    );
    return rows.map((r) => ({ documentId: r.id, orgId: r.org_id, needsDownload: r.needs_download }));
  }
}

/** The error's code, message and the two as JSON, as @code, @message and @error. */
function errorParams(error: DocumentError): Record<string, unknown> {
  const message = storable(error.message);
  return { code: error.code, message, error: JSON.stringify({ code: error.code, message }) };
}

/** `@name` placeholders to $n, numbering only the names the statement uses. */
function named(sql: string, values: Record<string, unknown>): { text: string; params: unknown[] } {
  const params: unknown[] = [];
  const numbers = new Map<string, number>();
  const text = sql.replace(/@([a-zA-Z]+)/g, (_, name: string) => {
    let n = numbers.get(name);
    if (n === undefined) {
      if (!(name in values)) throw new Error(`no value for @${name}`);
      params.push(values[name]);
      n = params.length;
      numbers.set(name, n);
    }
    return `$${n}`;
  });
  return { text, params };
}

/** Thrown inside saveIndex's transaction to roll it back: a newer version took over, or a delete. */
class WriteAbandoned extends Error {}
