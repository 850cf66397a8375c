// SqliteDocumentStore's job writes: a job's input, its progress (processing, retrying, failed,
// its download attached), and what the reconciler and the queue's backpressure count. Each write
// names the version the job produces and is refused once a newer one took over.
import type { DocumentError, JobInput, JobRef } from '../../../domain/types.js';
import { PENDING_ACTIVE, RECORD_COLUMNS, toJobInput, WORK_VERSION } from '../../sql-rows/document-row.js';
import type { Database } from '../database.js';
import { startProcessingSet } from '../start-processing.js';
import type { StatementCache } from '../statements.js';
import { storableText } from '../text.js';
import type { SqliteWebhookOutbox } from '../webhook-store.js';
import type { SqliteDocumentContext } from './context.js';
import { type DocumentRow, LIVE, READ_ROW } from './rows.js';

interface JobInputRow extends DocumentRow {
  input_text: string | null;
  blob_key: string | null;
  fetch_url: string | null;
}

export class JobWrites {
  private readonly db: Database;
  private readonly sql: StatementCache;
  private readonly now: () => number;
  private readonly outbox: SqliteWebhookOutbox;

  constructor(context: SqliteDocumentContext) {
    this.db = context.db;
    this.sql = context.sql;
    this.now = context.now;
    this.outbox = context.outbox;
  }

  async loadJobInput(id: string): Promise<JobInput | null> {
    const row = this.sql
      .get<[string], JobInputRow>(
        `SELECT ${RECORD_COLUMNS}, input_text, blob_key, fetch_url FROM documents WHERE id = ? AND ${LIVE}`,
      )
      .get(id);
    if (!row) return null;
    return toJobInput(row, READ_ROW);
  }

  /**
   * A job's write: `pendingSet` when a pending version is the work, else `currentSet`; nothing
   * when the document is gone or `version` is no longer the one to produce. Statements bind
   * @id, @now and @version plus `params`.
   */
  private workWrite(
    version: number | undefined,
    pendingSet: string,
    currentSet: string,
    params: Record<string, string | number | null>,
    /** Runs in the same transaction when the current version's row changed. */
    onCurrent?: () => void,
  ): boolean {
    const guard = version === undefined ? '' : ` AND ${WORK_VERSION} = @version`;
    const bound = { ...params, now: this.now(), version: version ?? null };
    return this.db
      .transaction(() => {
        const pending = this.sql
          .get(`UPDATE documents SET ${pendingSet} WHERE id = @id AND ${LIVE} AND ${PENDING_ACTIVE}${guard}`)
          .run(bound);
        if (pending.changes > 0) return true;
        const changed =
          this.sql
            .get(
              `UPDATE documents SET ${currentSet} WHERE id = @id AND ${LIVE} AND NOT (${PENDING_ACTIVE})${guard}`,
            )
            .run(bound).changes > 0;
        if (changed) onCurrent?.();
        return changed;
      })
      .immediate();
  }

  async markProcessing(id: string, version?: number): Promise<boolean> {
    return this.workWrite(
      version,
      `pending_status = 'processing', pending = json_set(pending, '$.error', json('null')),
       attempts = attempts + 1, updated_at = @now`,
      startProcessingSet(false),
      { id },
    );
  }

  async markRetrying(id: string, error: DocumentError, version?: number): Promise<boolean> {
    return this.workWrite(
      version,
      `pending_status = 'queued', pending = json_set(pending, '$.error', json(@error)), updated_at = @now`,
      `status = 'queued', error_code = @code, error_message = @message, updated_at = @now`,
      { id, ...errorParams(error) },
    );
  }

  async markFailed(id: string, error: DocumentError, version?: number): Promise<boolean> {
    // A failed pending version leaves the current one answering; its error is the pending one's.
    return this.workWrite(
      version,
      `pending_status = 'failed', pending = json_set(pending, '$.error', json(@error)),
       input_text = NULL, fetch_url = NULL, updated_at = @now`,
      `status = 'failed', error_code = @code, error_message = @message,
       input_text = NULL, fetch_url = NULL, updated_at = @now`,
      { id, ...errorParams(error) },
      // webhooks: the event commits with the status change (a failed pending version changes no status)
      () => this.outbox.emit('document.failed', id),
    );
  }

  async attachBlob(
    id: string,
    blob: { blobKey: string; contentType: string; bytes: number },
    version?: number,
  ): Promise<boolean> {
    // The download lane's job ends here; the same row becomes a fresh job of the process lane
    // (the document stays `processing`: extraction follows).
    const nextJob = `fetch_url = NULL, updated_at = @now, job_state = 'pending', run_at = @now,
      lease_owner = NULL, lease_until = NULL, job_attempts = 0`;
    return this.workWrite(
      version,
      `pending = json_set(pending, '$.blob_key', @blobKey, '$.source.content_type', @contentType,
         '$.source.bytes', @bytes), ${nextJob}`,
      `blob_key = @blobKey, content_type = @contentType, bytes = @bytes, ${nextJob}`,
      { id, blobKey: blob.blobKey, contentType: storableText(blob.contentType), bytes: blob.bytes },
    );
  }

  async forgetBlob(id: string, blobKey: string): Promise<boolean> {
    const r = this.sql
      .get(`UPDATE documents SET blob_key = NULL WHERE id = ? AND blob_key = ? AND ${LIVE}`)
      .run(id, blobKey);
    return r.changes > 0;
  }

  async countPending(): Promise<number> {
    const row = this.sql
      .get<[], { n: number }>(
        `SELECT (SELECT count(*) FROM documents WHERE status IN ('queued', 'processing'))
              + (SELECT count(*) FROM documents WHERE pending_status IN ('queued', 'processing')) AS n`,
      )
      .get();
    return row?.n ?? 0;
  }

  async listStaleQueued(olderThan: Date, limit: number): Promise<(JobRef & { needsDownload: boolean })[]> {
    return this.sql
      .get<[number, number, number], { id: string; org_id: string; needs_download: number }>(
        `SELECT id, org_id, needs_download FROM (
           SELECT id, org_id, fetch_url IS NOT NULL AS needs_download, updated_at FROM documents
           WHERE status IN ('queued', 'processing') AND updated_at < ?
           UNION
           SELECT id, org_id, fetch_url IS NOT NULL AS needs_download, updated_at FROM documents
           WHERE pending_status IN ('queued', 'processing') AND updated_at < ?
         ) ORDER BY updated_at, id LIMIT ?`,
      )
      .all(olderThan.getTime(), olderThan.getTime(), Math.max(0, Math.floor(limit)))
      .map((r) => ({ documentId: r.id, orgId: r.org_id, needsDownload: r.needs_download === 1 }));
  }
}

function errorParams(error: DocumentError): { code: string; message: string; error: string } {
  const message = storableText(error.message);
  return { code: error.code, message, error: JSON.stringify({ code: error.code, message }) };
}
