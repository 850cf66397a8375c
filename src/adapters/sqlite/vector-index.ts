// Chunk vectors in the embedded database file (table chunk_vectors, migration 30), searched with
// sqlite-vec's distance function (the extension ships inside the npm package, for this platform,
// and is loaded into this connection only: writes and deletes need no extension, so every other
// process on the file keeps working without it). The search is exact: every vector of the org
// and profile is compared.
import { load as loadSqliteVec } from 'sqlite-vec';
import type { ChunkVector, EmbeddingProfile, VectorHit, VectorIndex } from '../../domain/ports.js';
import type { Database } from './database.js';
import { StatementCache } from './statements.js';

export class SqliteVectorIndex implements VectorIndex {
  private readonly sql: StatementCache;

  constructor(private readonly db: Database) {
    loadSqliteVec(db);
    this.sql = new StatementCache(db);
  }

  async profileId(profile: EmbeddingProfile): Promise<number> {
    this.sql
      .get(
        'INSERT INTO vector_profiles (provider, model, dimensions) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
      )
      .run(profile.provider, profile.model, profile.dimensions);
    const row = this.sql
      .get<[string, string, number], { id: number }>(
        'SELECT id FROM vector_profiles WHERE provider = ? AND model = ? AND dimensions = ?',
      )
      .get(profile.provider, profile.model, profile.dimensions);
    return row!.id;
  }

  async writeVectors(orgId: string, profileId: number, vectors: readonly ChunkVector[]): Promise<boolean> {
    const insert = this.sql.get(
      `INSERT INTO chunk_vectors (document_id, chunk_index, profile_id, org_id, embedding) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (document_id, chunk_index, profile_id) DO UPDATE SET embedding = excluded.embedding`,
    );
    try {
      this.db.transaction(() => {
        for (const v of vectors) insert.run(v.documentId, v.chunkIndex, profileId, orgId, asBlob(v.vector));
      })();
      return true;
    } catch (error) {
      // The chunk is gone (its document deleted or re-chunked meanwhile): nothing was written.
      if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_FOREIGNKEY') return false;
      throw error;
    }
  }

  async countVectors(documentId: string, profileId: number): Promise<number> {
    return this.sql
      .get<[string, number], number>(
        'SELECT count(*) FROM chunk_vectors WHERE document_id = ? AND profile_id = ?',
      )
      .pluck()
      .get(documentId, profileId)!;
  }

  async search(q: {
    orgId: string;
    profileId: number;
    vector: Float32Array;
    limit: number;
    documentIds?: readonly string[];
  }): Promise<VectorHit[]> {
    const byDocument = q.documentIds !== undefined;
    if (byDocument && q.documentIds!.length === 0) return [];
    const rows = this.sql
      .get<unknown[], { document_id: string; chunk_index: number; distance: number }>(
        `SELECT document_id, chunk_index, vec_distance_cosine(embedding, ?) AS distance
         FROM chunk_vectors
         WHERE org_id = ? AND profile_id = ?
           ${byDocument ? 'AND document_id IN (SELECT value FROM json_each(?))' : ''}
         ORDER BY distance, document_id, chunk_index
         LIMIT ?`,
      )
      .all(
        asBlob(q.vector),
        q.orgId,
        q.profileId,
        ...(byDocument ? [JSON.stringify(q.documentIds)] : []),
        q.limit,
      );
    return rows.map((r) => ({ documentId: r.document_id, chunkIndex: r.chunk_index, score: 1 - r.distance }));
  }
}

function asBlob(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}
