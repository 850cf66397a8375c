// SqliteDocumentStore's deletes and purges. A large document, an org's documents and a run's
// left-over chunks are first handed to no organisation (PURGED_ORG) in one short transaction, so
// no read, job or index run sees them any more; their chunks then go a slice at a time, each in
// its own transaction, and the row last. A purge cut off by a restart resumes at the next start.
import { randomUUID } from 'node:crypto';
import { canSee } from '../../../domain/partitions.js';
import type { SlicedKeywordIndexWriter } from '../../../domain/ports.js';
import type { DocumentAccess } from '../../../domain/types.js';
import type { PendingSpec } from '../../sql-rows/document-row.js';
import type { Database } from '../database.js';
import type { GroupCommit } from '../group-commit.js';
import type { StatementCache } from '../statements.js';
import type { SqliteWebhookOutbox } from '../webhook-store.js';
import type { SqliteDocumentContext } from './context.js';
import { INDEX_DELETE_SLICE, shadowOrg, visibility } from './rows.js';

/**
 * The organisation of a deleted document whose chunks are still being removed: no org has this id
 * (ids are `org_…`), so every org-scoped read passes it by.
 */
const PURGED_ORG = '';

export class DocumentPurges {
  private readonly db: Database;
  private readonly sql: StatementCache;
  private readonly commits: GroupCommit;
  private readonly now: () => number;
  private readonly keyword: SlicedKeywordIndexWriter<void, 'sync'>;
  private readonly outbox: SqliteWebhookOutbox;

  constructor(context: SqliteDocumentContext) {
    this.db = context.db;
    this.sql = context.sql;
    this.commits = context.commits;
    this.now = context.now;
    this.keyword = context.keyword;
    this.outbox = context.outbox;
  }

  /**
   * A document of up to INDEX_DELETE_SLICE chunks goes in one transaction. A larger one (deleting
   * 35k chunks and their index rows takes the event loop over half a second) is first handed to
   * no organisation, in one short transaction: from then on no read of its org finds it, no job
   * runs it and an index run writing it stops. Its chunks then go a slice at a time, and the row
   * last (`purge`); a purge cut off by a restart resumes when the store is next opened.
   */
  async deleteDocument(
    orgId: string,
    id: string,
    seenBy?: DocumentAccess,
  ): Promise<{ blobKey: string | null; pendingBlobKey: string | null } | null> {
    const deleted = this.db
      .transaction(() => {
        const row = this.sql
          .get<
            [string, string],
            { blob_key: string | null; pending: string | null; partition: string; access: string | null }
          >('SELECT blob_key, pending, partition, access FROM documents WHERE id = ? AND org_id = ?')
          .get(id, orgId);
        if (!row || (seenBy && !canSee(seenBy, visibility(row)))) return null;
        this.outbox.emit('document.deleted', id); // webhooks: the record as it was, same transaction
        const pendingBlob = row.pending === null ? null : (JSON.parse(row.pending) as PendingSpec).blob_key;
        const blobs = {
          blobKey: row.blob_key,
          pendingBlobKey: pendingBlob === row.blob_key ? null : pendingBlob,
        };
        // A pending version's chunks written so far go too (the run writing them stops at its
        // next slice: its document is gone).
        const shadows = this.handShadows(id);
        if (this.keyword.countChunks(id, INDEX_DELETE_SLICE + 1) > INDEX_DELETE_SLICE) {
          this.handToPurge('id = ?', id);
          return { ...blobs, purge: [id, ...shadows] };
        }
        // Chunks first and explicitly, rather than relying on the cascade, which a connection
        // opened without foreign_keys would skip.
        this.keyword.deleteChunks(id);
        this.sql.get('DELETE FROM documents WHERE id = ?').run(id);
        return { ...blobs, purge: shadows };
      })
      .immediate();
    if (!deleted) return null;
    for (const handed of deleted.purge) void this.purge(handed);
    return { blobKey: deleted.blobKey, pendingBlobKey: deleted.pendingBlobKey };
  }

  /** Hands the rows `where` selects to no organisation (see PURGED_ORG); inside a transaction. */
  handToPurge(where: string, ...params: string[]): void {
    this.sql
      .get(
        `UPDATE documents SET org_id = '${PURGED_ORG}', external_id = NULL, status = 'failed',
           index_run = NULL, input_text = NULL, fetch_url = NULL, job_state = 'done',
           lease_owner = NULL, lease_until = NULL, pending_version = NULL, pending_status = NULL
         WHERE ${where}`,
      )
      .run(...params);
  }

  /** Hands the document's shadow rows to no organisation; their ids, for purge(). */
  handShadows(id: string): string[] {
    const ids = this.sql
      .get<[string], string>('SELECT id FROM documents WHERE org_id = ?')
      .pluck()
      .all(shadowOrg(id));
    if (ids.length > 0) this.handToPurge('org_id = ?', shadowOrg(id));
    return ids;
  }

  /**
   * Takes the current version's chunks out of the document inside the caller's transaction: a
   * few are deleted at once; more are moved under a row handed to no organisation (moveChunks:
   * their words are not written again) and purged a slice at a time after the commit.
   */
  retireChunks(id: string): void {
    if (this.keyword.countChunks(id, INDEX_DELETE_SLICE + 1) <= INDEX_DELETE_SLICE) {
      this.keyword.deleteChunks(id);
      return;
    }
    const holder = randomUUID();
    this.insertHolder(holder, PURGED_ORG);
    this.keyword.moveChunks(id, holder);
    // After the commit (or, if it rolls back, a purge of a row that never was).
    setImmediate(() => void this.purge(holder));
  }

  /**
   * A row that only holds chunks: of a document being purged, or of a pending version (shadow).
   * `failed` with its job done, so no count of pending work, no reconciler and no claim sees it.
   */
  insertHolder(id: string, orgId: string): void {
    this.sql
      .get(
        `INSERT INTO documents (id, org_id, status, source_type, metadata, chunk_size, chunk_overlap,
           tokenizer, attempts, created_at, updated_at, job_state, run_at)
         VALUES (?, ?, 'failed', 'text', '{}', 1, 0, '', 0, ?, ?, 'done', 0)`,
      )
      .run(id, orgId, this.now(), this.now());
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
          .get<[string], { id: string; blob_key: string | null; pending: string | null }>(
            'SELECT id, blob_key, pending FROM documents WHERE org_id = ?',
          )
          .all(orgId);
        const chunks =
          this.sql
            .get<[string], number>(
              'SELECT count(*) FROM chunks WHERE document_id IN (SELECT id FROM documents WHERE org_id = ?)',
            )
            .pluck()
            .get(orgId) ?? 0;
        const shadows = rows.flatMap((row) => this.handShadows(row.id));
        this.handToPurge('org_id = ?', orgId);
        this.sql.get('DELETE FROM partition_deletions WHERE org_id = ?').run(orgId);
        return { rows, chunks, shadows };
      })
      .immediate();
    for (const { id } of handed.rows) await this.purgeHanded(id);
    for (const id of handed.shadows) await this.purgeHanded(id);
    await this.commits.run(() => this.keyword.forgetOrg(orgId));
    const blobKeys = new Set<string>();
    for (const row of handed.rows) {
      if (row.blob_key !== null) blobKeys.add(row.blob_key);
      const pending = row.pending === null ? null : (JSON.parse(row.pending) as PendingSpec).blob_key;
      if (pending !== null) blobKeys.add(pending);
    }
    return { documents: handed.rows.length, chunks: handed.chunks, blobKeys: [...blobKeys] };
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
  async purgeHanded(id: string): Promise<void> {
    while (
      (await this.commits.run(
        () => this.keyword.deleteChunkSlice(id, INDEX_DELETE_SLICE),
        INDEX_DELETE_SLICE,
      )) > 0
    ) {
      // Each slice is its own transaction; the event loop runs between them.
    }
    await this.commits.run(() =>
      this.sql.get('DELETE FROM documents WHERE id = ? AND org_id = ?').run(id, PURGED_ORG),
    );
  }

  /** Resumes the purges a restart cut off. */
  async resumePurges(): Promise<void> {
    try {
      // Shadows of a pending version no run works on any more (a crash cut the run off, and no
      // newer version came to clear them): nothing will swap them in.
      this.db
        .transaction(() =>
          this.handToPurge(
            `org_id LIKE 'shadow:%' AND NOT EXISTS (SELECT 1 FROM documents AS d
               WHERE 'shadow:' || d.id = documents.org_id AND d.pending_status IN ('queued', 'processing'))`,
          ),
        )
        .immediate();
      const ids = this.sql
        .get<[string], string>('SELECT id FROM documents WHERE org_id = ?')
        .pluck()
        .all(PURGED_ORG);
      for (const id of ids) await this.purge(id);
    } catch {
      // As in purge: the database went away; nothing visible is left behind.
    }
  }
}
