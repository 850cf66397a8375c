// PgDocumentStore's reads: a record, a page of records, a document's chunks, and the org's
// partitions with the marks of those being deleted (which the partition list shows, and which
// refuse new documents in them).

import { prefixedId } from '../../../domain/ids-and-hashes.js';
import type { ChunkPage, KeywordIndexWriter } from '../../../domain/ports.js';
import { cleanText } from '../../../domain/text.js';
import type { DocumentRecord, ListQuery, PartitionSummary } from '../../../domain/types.js';
import { RECORD_COLUMNS } from '../../sql-rows/document-row.js';
import type { PgDatabase, Queryable } from '../database.js';
import { postgresAccessCondition, postgresFilter } from '../filter-sql.js';
import { type DocumentRow, LIVE, type PgDocumentContext, storable, toRecord } from './context.js';

export class PgDocumentReads {
  private readonly db: PgDatabase;
  private readonly documents: string;
  private readonly keyword: KeywordIndexWriter<Queryable, 'async'>;

  constructor(context: PgDocumentContext) {
    this.db = context.db;
    this.documents = context.documents;
    this.keyword = context.keyword;
  }

  async getDocument(orgId: string, id: string): Promise<DocumentRecord | null> {
    const { rows } = await this.db.query<DocumentRow>(
      `SELECT ${RECORD_COLUMNS} FROM ${this.documents} WHERE id = $1 AND org_id = $2 AND ${LIVE}`,
      [storable(id), storable(orgId)],
    );
    return rows[0] ? toRecord(rows[0]) : null;
  }

  async listPartitions(orgId: string): Promise<PartitionSummary[]> {
    const { rows } = await this.db.query<{
      name: string;
      documents: string;
      chunks: string;
      bytes: string;
      deleting: boolean;
    }>(
      `SELECT name, sum(documents) AS documents, sum(chunks) AS chunks, sum(bytes) AS bytes, bool_or(deleting) AS deleting
       FROM (
         SELECT partition AS name, count(*) AS documents, coalesce(sum(chunk_count), 0) AS chunks,
                coalesce(sum(bytes), 0) AS bytes, false AS deleting
         FROM ${this.documents} WHERE org_id = $1 AND ${LIVE} GROUP BY partition
         UNION ALL
         SELECT name, 0, 0, 0, true FROM ${this.db.table('partition_deletions')} WHERE org_id = $1
       ) AS p GROUP BY name ORDER BY name COLLATE "C"`,
      [storable(orgId)],
    );
    return rows.map((r) => ({
      name: r.name,
      documents: Number(r.documents),
      chunks: Number(r.chunks),
      bytes: Number(r.bytes),
      status: r.deleting ? 'deleting' : 'active',
    }));
  }

  async markPartitionDeleting(orgId: string, name: string, at: Date): Promise<void> {
    await this.db.query(
      `INSERT INTO ${this.db.table('partition_deletions')} (org_id, name, marked_at, id) VALUES ($1, $2, $3, $4)
       ON CONFLICT DO NOTHING`,
      [storable(orgId), storable(name), at, prefixedId('pd')],
    );
  }

  async markedPartition(id: string): Promise<{ orgId: string; name: string } | null> {
    const { rows } = await this.db.query<{ orgId: string; name: string }>(
      `SELECT org_id AS "orgId", name FROM ${this.db.table('partition_deletions')} WHERE id = $1`,
      [storable(id)],
    );
    return rows[0] ?? null;
  }

  async unmarkPartitionDeleting(orgId: string, name: string): Promise<void> {
    await this.db.query(
      `DELETE FROM ${this.db.table('partition_deletions')} WHERE org_id = $1 AND name = $2`,
      [storable(orgId), storable(name)],
    );
  }

  async listDocuments(q: ListQuery): Promise<DocumentRecord[]> {
    const params: unknown[] = [storable(q.orgId)];
    const where = ['org_id = $1', LIVE];
    const param = (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    };
    if (q.status !== null) where.push(`status = ${param(q.status)}`);
    if (q.ids !== null) where.push(`id = ANY(${param(q.ids.map((id) => cleanText(id)))}::text[])`);
    if (q.contentSha256 !== null) where.push(`content_sha256 = ${param(storable(q.contentSha256))}`);
    if (q.externalId !== undefined && q.externalId !== null) {
      where.push(`external_id = ${param(storable(q.externalId))}`);
    }
    if (q.externalIds != null) {
      where.push(`external_id = ANY(${param(q.externalIds.map((id) => storable(id)))}::text[])`);
    }
    if (q.partitions != null)
      where.push(`partition = ANY(${param(q.partitions.map((p) => storable(p)))}::text[])`);
    if (q.principals != null) where.push(postgresAccessCondition('access', q.principals, param));
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

  async listChunks(
    orgId: string,
    id: string,
    page: { afterIndex: number; limit: number },
  ): Promise<ChunkPage | null> {
    // One snapshot for both reads: a version swap commits either before both or after them.
    return this.db.transaction(async (tx) => {
      await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
      const { rows } = await tx.query<{ version: number }>(
        `SELECT version FROM ${this.documents} WHERE id = $1 AND org_id = $2 AND ${LIVE}`,
        [storable(id), storable(orgId)],
      );
      const version = rows[0]?.version;
      if (version === undefined) return null;
      const chunks = await this.keyword.readChunks(
        storable(id),
        page.afterIndex,
        Math.max(0, Math.floor(page.limit)),
        tx,
      );
      return { version, chunks };
    });
  }
}
