// Chunk vectors in the embedded database file (table chunk_vectors, migrations 30 and 90), ranked
// with sqlite-vec's distance function (the extension ships inside the npm package, for this
// platform, and is loaded into this connection only: writes and deletes need no extension, so
// every other process on the file keeps working without it). One class is both ports: the
// search queries use (VectorSearch), written here, and the vector stage's store
// (VectorStageStore), which both SQL backends share (sql-rows/vector-stage.ts) and this one
// gives its driver, its chunk_vectors writes and its transaction.
//
// An org and profile with more vectors than the candidate budget are searched in two steps, as on
// PostgreSQL: the in-process sign index (sign-index.ts) picks the candidates nearest by Hamming
// distance over sign bits, and the exact cosine ranks those, filters applied. When fewer than the
// asked-for number pass the filters (a filter few documents pass), or document_ids are given, the
// search is exact over the matching vectors instead; an org within the budget is always exact.
import { load as loadSqliteVec } from 'sqlite-vec';
import type { ChunkVector, VectorHit, VectorSearch, VectorSearchQuery } from '../../domain/ports.js';
import type { Metadata } from '../../domain/types.js';
import { candidateCount, type PrefilterOptions } from '../sign-scan/candidates.js';
import {
  SqlVectorStageStore,
  type StageWrite,
  type Statement,
  type VectorStageDialect,
} from '../sql-rows/vector-stage.js';
import type { Database } from './database.js';
import { sqliteAccessCondition, sqliteFilter } from './filter-sql.js';
import { SignIndex, signBytes } from './sign-index.js';
import { StatementCache } from './statements.js';
import { SqliteWebhookOutbox } from './webhook-store.js';

/** Rows signed per transaction when back-filling vectors written before migration 90. */
const BACKFILL_BATCH = 2_000;

/** The vector stage's statements as SQLite takes them. */
const SQLITE_DIALECT: VectorStageDialect = {
  table: (name) => name,
  param: () => '?',
  time: (at) => at.getTime(),
  beforeAll: '0',
  inList: (column) => `${column} IN (SELECT value FROM json_each(?))`,
  list: (values) => JSON.stringify(values),
  // No deletion mark: a delete takes its turn as any write does.
  deletionMark: null,
};

export interface SqliteVectorIndexOptions extends PrefilterOptions {
  /** Writes document.vectors_ready in the vectors' transaction (default: one on the same database). */
  outbox?: SqliteWebhookOutbox;
}

export class SqliteVectorIndex extends SqlVectorStageStore implements VectorSearch {
  private readonly sql: StatementCache;

  private readonly outbox: SqliteWebhookOutbox;

  private readonly signs: SignIndex;

  constructor(
    private readonly db: Database,
    private readonly options: SqliteVectorIndexOptions = {},
  ) {
    super(SQLITE_DIALECT);
    loadSqliteVec(db);
    this.sql = new StatementCache(db);
    this.outbox = options.outbox ?? new SqliteWebhookOutbox(db);
    this.signs = new SignIndex(db, options.scanThreadFrom, options.prefilterMaxBytes);
    this.signUnsigned();
  }

  /** Vectors copied by migration 90 have no sign bits yet: give them theirs, a batch at a time. */
  private signUnsigned(): void {
    const next = this.sql.get<[number, number], { id: number; embedding: Buffer }>(
      'SELECT id, embedding FROM chunk_vectors WHERE signs IS NULL AND id > ? ORDER BY id LIMIT ?',
    );
    const sign = this.sql.get('UPDATE chunk_vectors SET signs = ? WHERE id = ?');
    let after = 0;
    for (;;) {
      const rows = next.all(after, BACKFILL_BATCH);
      if (rows.length === 0) return;
      this.db.transaction(() => {
        for (const r of rows) {
          const floats = new Float32Array(
            r.embedding.buffer,
            r.embedding.byteOffset,
            r.embedding.byteLength / 4,
          );
          sign.run(signBytes(floats), r.id);
        }
      })();
      after = rows[rows.length - 1]!.id;
    }
  }

  heldMemory(): { partitions: number; bytes: number } {
    const { keys, bytes } = this.signs.held();
    return { partitions: keys.length, bytes };
  }

  protected async rows<R extends object>(statement: Statement): Promise<R[]> {
    return this.sql.get<unknown[], R>(statement.text).all(...statement.values);
  }

  protected async run(statement: Statement): Promise<number> {
    return this.sql.get(statement.text).run(...statement.values).changes;
  }

  protected async write(work: StageWrite): Promise<boolean> {
    try {
      this.db.transaction(() => {
        this.insertVectors(work.orgId, work.profileId, work.vectors);
        if (work.state !== null) this.sql.get(work.state.text).run(...work.state.values);
        if (work.vectorsReady !== null)
          this.outbox.emit('document.vectors_ready', work.vectorsReady.documentId);
      })();
      return true;
    } catch (error) {
      // The document or chunk is gone (deleted or re-chunked meanwhile).
      if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_FOREIGNKEY') return false;
      throw error;
    }
  }

  private insertVectors(orgId: string, profileId: number, vectors: readonly ChunkVector[]): void {
    // A replaced vector is deleted and inserted, never updated in place: its new row gets a new id,
    // which is how sign indexes in every process learn of it (the delete is logged by a trigger).
    const remove = this.sql.get(
      'DELETE FROM chunk_vectors WHERE document_id = ? AND chunk_index = ? AND profile_id = ?',
    );
    const insert = this.sql.get(
      `INSERT INTO chunk_vectors (document_id, chunk_index, profile_id, org_id, embedding, signs)
       VALUES (?, ?, ?, ?, ?, ?)`,
    );
    for (const v of vectors) {
      remove.run(v.documentId, v.chunkIndex, profileId);
      insert.run(v.documentId, v.chunkIndex, profileId, orgId, asBlob(v.vector), signBytes(v.vector));
    }
  }

  async search(q: VectorSearchQuery): Promise<VectorHit[]> {
    const documentIds = q.documentIds ?? null;
    const partitions = q.partitions ?? null;
    if (documentIds !== null && documentIds.length === 0) return [];
    if (partitions !== null && partitions.length === 0) return [];
    // Only chunks of ready documents: a document whose new chunks are being written, or one
    // being deleted, is not shown (as the keyword index does).
    const where: string[] = ["d.status = 'ready'"];
    const params: string[] = [];
    // The partitions restrict as the filter does: candidates that fail either are passed over
    // before the cut to `limit`, and too few passing makes the ranking exact over those that pass.
    if (partitions !== null) {
      where.push('d.partition IN (SELECT value FROM json_each(?))');
      params.push(JSON.stringify(partitions));
    }
    // So does the access list.
    if (q.principals != null) {
      const condition = sqliteAccessCondition('d.access', q.principals);
      where.push(condition.sql);
      params.push(...condition.params);
    }
    if (documentIds !== null) {
      where.push('v.document_id IN (SELECT value FROM json_each(?))');
      params.push(JSON.stringify(documentIds));
    }
    if (q.filter) {
      const condition = sqliteFilter(q.filter, 'd.metadata');
      where.push(condition.sql);
      params.push(...condition.params);
    }
    const candidates =
      documentIds === null
        ? await this.signs.candidates(q.orgId, q.profileId, q.vector, candidateCount(this.options, q.limit))
        : null;
    if (candidates !== null) {
      const hits = this.rank(
        q,
        'v.id IN (SELECT value FROM json_each(?))',
        [JSON.stringify(candidates)],
        where,
        params,
      );
      if (hits.length >= q.limit) return hits;
      // The filters let too few candidates through: rank every vector that passes them.
    }
    return this.rank(q, '1', [], where, params);
  }

  /** The exact cosine ranking of the org's and profile's vectors that `source` picks and pass `where`. */
  private rank(
    q: VectorSearchQuery,
    source: string,
    sourceParams: unknown[],
    where: string[],
    params: string[],
  ): VectorHit[] {
    const rows = this.sql
      .get<unknown[], VectorRow>(
        `WITH nearest AS MATERIALIZED (
           SELECT v.document_id, v.chunk_index, vec_distance_cosine(v.embedding, ?) AS distance
           FROM chunk_vectors AS v CROSS JOIN documents AS d ON d.id = v.document_id
           WHERE ${source} AND v.org_id = ? AND v.profile_id = ? AND d.org_id = v.org_id AND ${where.join(' AND ')}
           ORDER BY distance, v.document_id, v.chunk_index
           LIMIT ?)
         SELECT n.document_id, n.chunk_index, n.distance, c.text, c.page_start, c.page_end, d.metadata
         FROM nearest AS n
           CROSS JOIN chunks AS c ON c.document_id = n.document_id AND c.chunk_index = n.chunk_index
           CROSS JOIN documents AS d ON d.id = n.document_id
         ORDER BY n.distance, n.document_id, n.chunk_index`,
      )
      .all(asBlob(q.vector), ...sourceParams, q.orgId, q.profileId, ...params, q.limit);
    return rows.map((r) => ({
      documentId: r.document_id,
      chunkIndex: r.chunk_index,
      score: 1 - r.distance,
      text: r.text,
      metadata: JSON.parse(r.metadata) as Metadata,
      pageStart: r.page_start,
      pageEnd: r.page_end,
    }));
  }
}

interface VectorRow {
  document_id: string;
  chunk_index: number;
  distance: number;
  text: string;
  page_start: number | null;
  page_end: number | null;
  metadata: string;
}

function asBlob(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}
