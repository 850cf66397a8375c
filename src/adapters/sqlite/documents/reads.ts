// SqliteDocumentStore's reads: a record, a page of records, a document's chunks, the org's
// partitions, and the marks of partitions being deleted (which ingest checks and the partition
// purge's job sets, finds and drops).

import { prefixedId } from '../../../domain/ids-and-hashes.js';
import type { ChunkPage, SlicedKeywordIndexWriter } from '../../../domain/ports.js';
import type { DocumentRecord, ListQuery, PartitionSummary } from '../../../domain/types.js';
import { RECORD_COLUMNS } from '../../sql-rows/document-row.js';
import type { Database } from '../database.js';
import { sqliteAccessCondition, sqliteFilter } from '../filter-sql.js';
import type { StatementCache } from '../statements.js';
import type { SqliteDocumentContext } from './context.js';
import { type DocumentRow, toRecord } from './rows.js';

export class DocumentReads {
  private readonly db: Database;
  private readonly sql: StatementCache;
  private readonly keyword: SlicedKeywordIndexWriter<void, 'sync'>;

  constructor(context: SqliteDocumentContext) {
    this.db = context.db;
    this.sql = context.sql;
    this.keyword = context.keyword;
  }

  async getDocument(orgId: string, id: string): Promise<DocumentRecord | null> {
    const row = this.sql
      .get<[string, string], DocumentRow>(
        `SELECT ${RECORD_COLUMNS} FROM documents WHERE id = ? AND org_id = ?`,
      )
      .get(id, orgId);
    return row ? toRecord(row) : null;
  }

  async listPartitions(orgId: string): Promise<PartitionSummary[]> {
    const rows = this.sql
      .get<
        [string, string],
        { name: string; documents: number; chunks: number; bytes: number; deleting: number }
      >(
        `SELECT name, sum(documents) AS documents, sum(chunks) AS chunks, sum(bytes) AS bytes, max(deleting) AS deleting
         FROM (
           SELECT partition AS name, count(*) AS documents, coalesce(sum(chunk_count), 0) AS chunks,
                  coalesce(sum(bytes), 0) AS bytes, 0 AS deleting
           FROM documents WHERE org_id = ? GROUP BY partition
           UNION ALL
           SELECT name, 0, 0, 0, 1 FROM partition_deletions WHERE org_id = ?
         ) GROUP BY name ORDER BY name`,
      )
      .all(orgId, orgId);
    return rows.map((r) => ({
      name: r.name,
      documents: r.documents,
      chunks: r.chunks,
      bytes: r.bytes,
      status: r.deleting ? 'deleting' : 'active',
    }));
  }

  async markPartitionDeleting(orgId: string, name: string, at: Date): Promise<void> {
    this.sql
      .get(
        `INSERT INTO partition_deletions (org_id, name, marked_at, id, run_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT DO NOTHING`,
      )
      .run(orgId, name, at.getTime(), prefixedId('pd'), at.getTime());
  }

  async markedPartition(id: string): Promise<{ orgId: string; name: string } | null> {
    return (
      this.sql
        .get<[string], { orgId: string; name: string }>(
          'SELECT org_id AS orgId, name FROM partition_deletions WHERE id = ?',
        )
        .get(id) ?? null
    );
  }

  async unmarkPartitionDeleting(orgId: string, name: string): Promise<void> {
    this.sql.get('DELETE FROM partition_deletions WHERE org_id = ? AND name = ?').run(orgId, name);
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
    if (q.externalId !== undefined && q.externalId !== null) {
      where.push('external_id = ?');
      params.push(q.externalId);
    }
    if (q.externalIds != null) {
      where.push('external_id IN (SELECT value FROM json_each(?))');
      params.push(JSON.stringify(q.externalIds));
    }
    if (q.partitions != null) {
      where.push('partition IN (SELECT value FROM json_each(?))');
      params.push(JSON.stringify(q.partitions));
    }
    if (q.principals != null) {
      const condition = sqliteAccessCondition('documents.access', q.principals);
      where.push(condition.sql);
      params.push(...condition.params);
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

  async listChunks(
    orgId: string,
    id: string,
    page: { afterIndex: number; limit: number },
  ): Promise<ChunkPage | null> {
    // One read transaction: a version swap commits either before both reads or after them.
    return this.db.transaction(() => {
      const version = this.sql
        .get<[string, string], number>('SELECT version FROM documents WHERE id = ? AND org_id = ?')
        .pluck()
        .get(id, orgId);
      if (version === undefined) return null;
      return {
        version,
        chunks: this.keyword.readChunks(id, page.afterIndex, Math.max(0, Math.floor(page.limit))),
      };
    })();
  }
}
