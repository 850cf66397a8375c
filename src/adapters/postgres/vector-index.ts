// Chunk vectors in the scale-out database (table chunk_vectors, migration 30), without needing
// any extension: each vector also keeps its sign bits, the Hamming distance between sign bits
// (bit_count(a # b)) picks the nearest candidates cheaply, and the exact cosine over the stored
// float vectors ranks those. When the org has no more vectors than the candidate budget the
// answer is exact.
import type { ChunkVector, EmbeddingProfile, VectorHit, VectorIndex } from '../../domain/ports.js';
import type { PgDatabase } from './database.js';

/** Candidates the sign prefilter keeps for the exact ranking: at least this many, or 10 per hit asked. */
const MIN_CANDIDATES = 1_000;

export class PgVectorIndex implements VectorIndex {
  private readonly profiles: string;
  private readonly vectors: string;

  constructor(private readonly db: PgDatabase) {
    this.profiles = db.table('vector_profiles');
    this.vectors = db.table('chunk_vectors');
  }

  async profileId(profile: EmbeddingProfile): Promise<number> {
    await this.db.query(
      `INSERT INTO ${this.profiles} (provider, model, dimensions) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
      [profile.provider, profile.model, profile.dimensions],
    );
    const result = await this.db.query<{ id: number }>(
      `SELECT id FROM ${this.profiles} WHERE provider = $1 AND model = $2 AND dimensions = $3`,
      [profile.provider, profile.model, profile.dimensions],
    );
    return result.rows[0]!.id;
  }

  async writeVectors(orgId: string, profileId: number, vectors: readonly ChunkVector[]): Promise<boolean> {
    if (vectors.length === 0) return true;
    try {
      await this.db.transaction(async (tx) => {
        await tx.query(
          `INSERT INTO ${this.vectors} (document_id, chunk_index, profile_id, org_id, embedding, signs)
           SELECT d, i, $3, $4, e::real[], s::bit varying
           FROM unnest($1::text[], $2::int[], $5::text[], $6::text[]) AS v(d, i, e, s)
           ON CONFLICT (document_id, chunk_index, profile_id)
             DO UPDATE SET embedding = excluded.embedding, signs = excluded.signs`,
          [
            vectors.map((v) => v.documentId),
            vectors.map((v) => v.chunkIndex),
            profileId,
            orgId,
            vectors.map((v) => `{${Array.from(v.vector).join(',')}}`),
            vectors.map((v) => signBits(v.vector)),
          ],
        );
      });
      return true;
    } catch (error) {
      // foreign_key_violation: the chunk is gone (its document deleted or re-chunked meanwhile).
      if ((error as { code?: string }).code === '23503') return false;
      throw error;
    }
  }

  async countVectors(documentId: string, profileId: number): Promise<number> {
    const result = await this.db.query<{ n: string }>(
      `SELECT count(*) AS n FROM ${this.vectors} WHERE document_id = $1 AND profile_id = $2`,
      [documentId, profileId],
    );
    return Number(result.rows[0]!.n);
  }

  async search(q: {
    orgId: string;
    profileId: number;
    vector: Float32Array;
    limit: number;
    documentIds?: readonly string[];
  }): Promise<VectorHit[]> {
    if (q.documentIds !== undefined && q.documentIds.length === 0) return [];
    const candidates = Math.max(MIN_CANDIDATES, q.limit * 10);
    const result = await this.db.query<{ document_id: string; chunk_index: number; score: number }>(
      `WITH candidates AS (
         SELECT document_id, chunk_index, embedding
         FROM ${this.vectors}
         WHERE org_id = $1 AND profile_id = $2 AND ($6::text[] IS NULL OR document_id = ANY($6::text[]))
         ORDER BY bit_count(signs # $3::bit varying)
         LIMIT $4
       )
       SELECT document_id, chunk_index,
              (SELECT sum(a * b) FROM unnest(embedding, $5::real[]) AS u(a, b))::float8 AS score
       FROM candidates
       ORDER BY score DESC, document_id, chunk_index
       LIMIT $7`,
      [
        q.orgId,
        q.profileId,
        signBits(q.vector),
        candidates,
        `{${Array.from(q.vector).join(',')}}`,
        q.documentIds ?? null,
        q.limit,
      ],
    );
    return result.rows.map((r) => ({ documentId: r.document_id, chunkIndex: r.chunk_index, score: r.score }));
  }
}

/** One character per dimension: '1' where the value is positive. */
function signBits(vector: Float32Array): string {
  let bits = '';
  for (const v of vector) bits += v > 0 ? '1' : '0';
  return bits;
}
