// PgDocumentStore's deletes: one document, the rows whose delete was left to an index write
// that died, and a whole org. A delete never waits for an index write holding the row (FOR UPDATE
// NOWAIT): it marks the row deleted instead, and the write, or the reconciler's sweep, removes it.
import { canSee } from '../../../domain/partitions.js';
import type { Clock, KeywordIndexWriter } from '../../../domain/ports.js';
import type { DocumentAccess } from '../../../domain/types.js';
import type { PgDatabase, Queryable } from '../database.js';
import type { PgWebhookOutbox } from '../webhook-store.js';
import { LIVE, type PgDocumentContext, storable } from './context.js';

/** SQLSTATE lock_not_available: a NOWAIT lock found the row held. */
const LOCK_NOT_AVAILABLE = '55P03';

export class PgDocumentPurges {
  private readonly db: PgDatabase;
  private readonly clock: Clock;
  private readonly documents: string;
  private readonly keyword: KeywordIndexWriter<Queryable, 'async'>;
  private readonly outbox: PgWebhookOutbox;

  constructor(context: PgDocumentContext) {
    this.db = context.db;
    this.clock = context.clock;
    this.documents = context.documents;
    this.keyword = context.keyword;
    this.outbox = context.outbox;
  }

  async deleteDocument(
    orgId: string,
    id: string,
    seenBy?: DocumentAccess,
  ): Promise<{ blobKey: string | null; pendingBlobKey: string | null } | null> {
    // The chunks go with the row (ON DELETE CASCADE) in one statement, so they stop matching at the
    // moment the document disappears; its webhook event (the record as it was) commits with it. A
    // pending version's chunks are only ever written in the transaction that swaps them in, so
    // there are none of those to find.
    try {
      return await this.db.transaction(async (tx) => {
        // NOWAIT: an index write holds the row (KEY SHARE) for as long as it writes chunks, and a
        // delete waiting for it would hold a pooled connection until the statement timeout.
        const own = await tx.query<{ partition: string; access: string[] | null }>(
          `SELECT partition, access FROM ${this.documents}
           WHERE id = $1 AND org_id = $2 AND ${LIVE} FOR UPDATE NOWAIT`,
          [storable(id), storable(orgId)],
        );
        const row = own.rows[0];
        if (!row || (seenBy && !canSee(seenBy, row))) return null;
        await this.outbox.emit(tx, 'document.deleted', storable(id), this.clock.now());
        const { rows } = await tx.query<{ blob_key: string | null; pending_blob_key: string | null }>(
          `DELETE FROM ${this.documents} WHERE id = $1 AND org_id = $2
           RETURNING blob_key, pending->>'blob_key' AS pending_blob_key`,
          [storable(id), storable(orgId)],
        );
        return rows[0] ? blobKeysOf(rows[0]) : null;
      });
    } catch (error) {
      if ((error as { code?: unknown }).code !== LOCK_NOT_AVAILABLE) throw error;
    }
    // The row is held: mark it instead. A plain UPDATE of non-key columns does not conflict with
    // KEY SHARE, so this answers at once; from its commit no read finds the document, and its
    // external_id is free again. The write gives up at its next batch and removes the row.
    const marked = await this.db.transaction(async (tx) => {
      if (seenBy) {
        // NO KEY UPDATE does not wait for the write's KEY SHARE; it orders this against a change
        // of the access list, which takes the same lock.
        const held = await tx.query<{ partition: string; access: string[] | null }>(
          `SELECT partition, access FROM ${this.documents}
           WHERE id = $1 AND org_id = $2 AND ${LIVE} FOR NO KEY UPDATE`,
          [storable(id), storable(orgId)],
        );
        const row = held.rows[0];
        if (!row || !canSee(seenBy, row)) return null;
      }
      const { rows } = await tx.query<{ blob_key: string | null; pending_blob_key: string | null }>(
        `UPDATE ${this.documents} SET deleted_at = $3, external_id = NULL
         WHERE id = $1 AND org_id = $2 AND ${LIVE}
         RETURNING blob_key, pending->>'blob_key' AS pending_blob_key`,
        [storable(id), storable(orgId), this.clock.now()],
      );
      if (!rows[0]) return null;
      await this.outbox.emit(tx, 'document.deleted', storable(id), this.clock.now());
      return blobKeysOf(rows[0]);
    });
    // The write may have ended between the NOWAIT and the mark: then no one else removes the row.
    if (marked) await this.removeMarked(this.db, `id = $1`, [storable(id)]);
    return marked;
  }

  /**
   * Rows marked deleted (see deleteDocument) whose index write died with its process or
   * connection: the reconciler calls this now and then. A row still held by a write is passed
   * over; that write removes it itself.
   */
  async finishDeletes(limit: number): Promise<number> {
    return this.removeMarked(this.db, 'deleted_at IS NOT NULL', [], Math.max(0, Math.floor(limit)));
  }

  /**
   * Removes the marked rows that match `where` and no one holds (SKIP LOCKED: never waits). An
   * index write that gave up calls it too (PgJobWrites.saveIndex).
   */
  async removeMarked(db: Queryable, where: string, params: unknown[], limit?: number): Promise<number> {
    const cap = limit === undefined ? '' : ` LIMIT ${limit}`;
    const r = await db.query(
      `DELETE FROM ${this.documents} WHERE id IN (
         SELECT id FROM ${this.documents} WHERE ${where} AND deleted_at IS NOT NULL${cap}
         FOR UPDATE SKIP LOCKED)`,
      params,
    );
    return r.rowCount ?? 0;
  }

  /**
   * One transaction marks every document of the org deleted (at once, whatever index writes hold
   * rows) and removes those no write holds, their chunks with them (ON DELETE CASCADE). A write
   * holding one gives up at its next batch and removes it; a job still queued finds nothing.
   */
  async purgeOrg(orgId: string): Promise<{ documents: number; chunks: number; blobKeys: string[] }> {
    const chunks = this.db.table('chunks');
    const org = storable(orgId);
    return this.db.transaction(async (tx) => {
      const counted = await tx.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${chunks} WHERE org_id = $1`,
        [org],
      );
      const { rows } = await tx.query<{ blob_key: string | null; pending_blob_key: string | null }>(
        `UPDATE ${this.documents} SET deleted_at = $2, external_id = NULL
         WHERE org_id = $1 AND ${LIVE} RETURNING blob_key, pending->>'blob_key' AS pending_blob_key`,
        [org, this.clock.now()],
      );
      await this.removeMarked(tx, 'org_id = $1', [org]);
      await tx.query(`DELETE FROM ${this.db.table('partition_deletions')} WHERE org_id = $1`, [org]);
      await this.keyword.forgetOrg(org, tx);
      const blobKeys = new Set<string>();
      for (const row of rows) {
        if (row.blob_key !== null) blobKeys.add(row.blob_key);
        if (row.pending_blob_key !== null) blobKeys.add(row.pending_blob_key);
      }
      return { documents: rows.length, chunks: counted.rows[0]?.n ?? 0, blobKeys: [...blobKeys] };
    });
  }
}

/** The blob keys a removed row leaves to delete (a pending version's only when it is another file). */
function blobKeysOf(row: { blob_key: string | null; pending_blob_key: string | null }) {
  return {
    blobKey: row.blob_key,
    pendingBlobKey: row.pending_blob_key === row.blob_key ? null : row.pending_blob_key,
  };
}
