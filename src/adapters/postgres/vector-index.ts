// Chunk vectors in the scale-out database (table chunk_vectors, migration 30), without needing
// any extension: each vector also keeps its sign bits, the Hamming distance between sign bits
// picks the nearest candidates cheaply, and the exact cosine over the stored float vectors ranks
// those. The sign bits are scanned in this process's memory (sign-index.ts, fed by migration
// 100's change feed); when the filters let too few of those candidates through, or document_ids
// are given, PostgreSQL scans the sign bits of the vectors that pass (bit_count(a # b)). When no
// more vectors pass than the candidate budget the answer is exact. One class is both ports: the
// search queries use (VectorSearch), written here, and the vector stage's store
// (VectorStageStore), which both SQL backends share (sql-rows/vector-stage.ts) and this one gives
// its driver, its chunk_vectors writes and its transaction.
import type { ChunkVector, VectorHit, VectorSearch, VectorSearchQuery } from '../../domain/ports.js';
import { cleanText } from '../../domain/text.js';
import type { Metadata } from '../../domain/types.js';
import { candidateCount, type PrefilterOptions } from '../sign-scan/candidates.js';
import { SqlVectorStageStore, type StageWrite, type Statement } from '../sql-rows/vector-stage.js';
import type { PgDatabase, Queryable } from './database.js';
import { postgresAccessCondition, postgresFilter } from './filter-sql.js';
import { type ChunkKey, PgSignIndex } from './sign-index.js';
import { PgWebhookOutbox } from './webhook-store.js';

export interface VectorCandidateOptions extends PrefilterOptions {
  /** More changes than this since a node's last read and it reads the org's sign bits whole again. */
  feedLimit?: number;
  /** Writes document.vectors_ready in the vectors' transaction (default: one on the same database). */
  outbox?: PgWebhookOutbox;
}
/** $1–$4 of either ranking statement; a filter's own parameters follow. */
const BASE_PARAMS = 4;

export class PgVectorIndex extends SqlVectorStageStore implements VectorSearch {
  private readonly vectors: string;
  private readonly documents: string;
  private readonly chunks: string;

  private readonly outbox: PgWebhookOutbox;

  private readonly signs: PgSignIndex;

  constructor(
    private readonly db: PgDatabase,
    private readonly options: VectorCandidateOptions = {},
  ) {
    super({
      table: (name) => db.table(name),
      param: (n) => `$${n}`,
      time: (at) => at,
      beforeAll: "'-infinity'",
      inList: (column, n) => `${column} = ANY($${n}::text[])`,
      list: (values) => values,
      // A delete that finds the row being written marks it and leaves its removal to the writer.
      deletionMark: 'deleted_at',
    });
    this.signs = new PgSignIndex(db, options.scanThreadFrom, options.feedLimit, options.prefilterMaxBytes);
    this.outbox = options.outbox ?? new PgWebhookOutbox(db);
    this.vectors = db.table('chunk_vectors');
    this.documents = db.table('documents');
    this.chunks = db.table('chunks');
  }

  heldMemory(): { partitions: number; bytes: number } {
    const { keys, bytes } = this.signs.held();
    return { partitions: keys.length, bytes };
  }

  protected async rows<R extends object>(statement: Statement): Promise<R[]> {
    return (await this.db.query<R & Record<string, unknown>>(statement.text, statement.values)).rows;
  }

  protected async run(statement: Statement): Promise<number> {
    return (await this.db.query(statement.text, statement.values)).rowCount ?? 0;
  }

  protected async write(work: StageWrite): Promise<boolean> {
    try {
      await this.db.transaction(async (tx) => {
        await this.insertVectors(tx, work.orgId, work.profileId, work.vectors);
        if (work.state !== null) await tx.query(work.state.text, work.state.values);
        if (work.vectorsReady !== null) {
          const { documentId, at } = work.vectorsReady;
          await this.outbox.emit(tx, 'document.vectors_ready', documentId, at);
        }
      });
      return true;
    } catch (error) {
      // foreign_key_violation: the document or chunk is gone (deleted or re-chunked meanwhile).
      if ((error as { code?: string }).code === '23503') return false;
      throw error;
    }
  }

  private async insertVectors(
    tx: Queryable,
    orgId: string,
    profileId: number,
    vectors: readonly ChunkVector[],
  ): Promise<void> {
    if (vectors.length === 0) return;
    await tx.query(
      `INSERT INTO ${this.vectors} (document_id, chunk_index, profile_id, org_id, embedding, signs)
       SELECT d, i, $3, $4, e, s::bit varying
       FROM unnest($1::text[], $2::int[], $5::bytea[], $6::text[]) AS v(d, i, e, s)
       ON CONFLICT (document_id, chunk_index, profile_id)
         DO UPDATE SET embedding = excluded.embedding, signs = excluded.signs, tx = DEFAULT`,
      [
        vectors.map((v) => v.documentId),
        vectors.map((v) => v.chunkIndex),
        profileId,
        orgId,
        vectors.map((v) => float32Bytes(v.vector)),
        vectors.map((v) => signBits(v.vector)),
      ],
    );
  }

  async search(q: VectorSearchQuery): Promise<VectorHit[]> {
    const documentIds = q.documentIds ?? null;
    const partitions = q.partitions ?? null;
    if (documentIds !== null && documentIds.length === 0) return [];
    if (partitions !== null && partitions.length === 0) return [];
    const params: unknown[] = [];
    const param = (value: unknown) => {
      params.push(value);
      return `$${params.length + BASE_PARAMS}`;
    };
    // Only chunks of ready documents, as the keyword index shows (none being deleted).
    const where: string[] = ["d.status = 'ready'", 'd.deleted_at IS NULL', 'd.org_id = v.org_id'];
    // The partitions restrict as the filter does: candidates that fail either are passed over
    // before the cut to `limit`, and too few passing ranks among those that pass instead.
    if (partitions !== null) where.push(`d.partition = ANY(${param(partitions.map(cleanText))}::text[])`);
    // So does the access list.
    if (q.principals != null) where.push(postgresAccessCondition('d.access', q.principals, param));
    if (q.filter) where.push(postgresFilter(q.filter, 'd.metadata', param));
    if (documentIds === null) {
      // Candidates from this process's sign bits (sign-index.ts), ranked with the filters applied.
      const candidates = await this.signs.candidates(
        q.orgId,
        q.profileId,
        q.vector,
        candidateCount(this.options, q.limit),
      );
      if (candidates !== null) {
        const hits = await this.rankCandidates(q, candidates, where, params);
        if (hits.length >= q.limit) return hits;
        // The filters let too few candidates through: the prefilter below runs on what passes them.
      }
    }
    if (documentIds !== null) where.push(`v.document_id = ANY(${param(documentIds.map(cleanText))}::text[])`);
    return this.rank(q, where, params);
  }

  /** The exact cosine of the given candidates that pass `where`, best first. */
  private async rankCandidates(
    q: VectorSearchQuery,
    candidates: ChunkKey[],
    where: string[],
    extra: unknown[],
  ): Promise<VectorHit[]> {
    const { rows } = await this.db.query<VectorRow>(
      `SELECT v.document_id, v.chunk_index, v.embedding
       FROM unnest($1::text[], $2::int[]) AS c(document_id, chunk_index)
         JOIN ${this.vectors} AS v
           ON v.document_id = c.document_id AND v.chunk_index = c.chunk_index AND v.profile_id = $3
         JOIN ${this.documents} AS d ON d.id = v.document_id
       WHERE v.org_id = $4 AND ${where.join(' AND ')}`,
      [
        candidates.map((c) => c.documentId),
        candidates.map((c) => c.chunkIndex),
        q.profileId,
        q.orgId,
        ...extra,
      ],
    );
    return this.withChunks(nearestOf(rows, q.vector, q.limit));
  }

  /**
   * Within the vectors that pass `where`: candidates by Hamming distance over sign bits, then the
   * exact cosine of each (exact outright when no more vectors pass than the candidate budget).
   */
  private async rank(q: VectorSearchQuery, where: string[], extra: unknown[]): Promise<VectorHit[]> {
    const candidates = candidateCount(this.options, q.limit);
    const { rows } = await this.db.query<VectorRow>(
      `WITH candidates AS MATERIALIZED (
         SELECT v.document_id, v.chunk_index, v.profile_id
         FROM ${this.vectors} AS v JOIN ${this.documents} AS d ON d.id = v.document_id
         WHERE v.org_id = $1 AND v.profile_id = $2 AND ${where.join(' AND ')}
         ORDER BY bit_count(v.signs # $3::bit varying)
         LIMIT $4
       )
       SELECT c.document_id, c.chunk_index, v.embedding
       FROM candidates AS c JOIN ${this.vectors} AS v USING (document_id, chunk_index, profile_id)`,
      [q.orgId, q.profileId, signBits(q.vector), candidates, ...extra],
    );
    return this.withChunks(nearestOf(rows, q.vector, q.limit));
  }

  /** The ranked chunks with their text and their document's metadata (a chunk gone meanwhile is left out). */
  private async withChunks(ranked: ScoredChunk[]): Promise<VectorHit[]> {
    if (ranked.length === 0) return [];
    const { rows } = await this.db.query<ChunkTextRow>(
      `SELECT c.document_id, c.chunk_index, c.text, c.page_start, c.page_end, d.metadata
       FROM unnest($1::text[], $2::int[]) AS k(document_id, chunk_index)
         JOIN ${this.chunks} AS c ON c.document_id = k.document_id AND c.chunk_index = k.chunk_index
         JOIN ${this.documents} AS d ON d.id = c.document_id AND d.deleted_at IS NULL`,
      [ranked.map((r) => r.documentId), ranked.map((r) => r.chunkIndex)],
    );
    const byKey = new Map(rows.map((r) => [`${r.document_id}\u0000${r.chunk_index}`, r]));
    const hits: VectorHit[] = [];
    for (const r of ranked) {
      const row = byKey.get(`${r.documentId}\u0000${r.chunkIndex}`);
      if (row === undefined) continue;
      hits.push({
        documentId: r.documentId,
        chunkIndex: r.chunkIndex,
        score: r.score,
        text: row.text,
        metadata: row.metadata,
        pageStart: row.page_start,
        pageEnd: row.page_end,
      });
    }
    return hits;
  }
}

interface VectorRow {
  document_id: string;
  chunk_index: number;
  /** float4send's bytes of each element, in order (migration 110). */
  embedding: Buffer;
}

interface ChunkTextRow {
  document_id: string;
  chunk_index: number;
  text: string;
  page_start: number | null;
  page_end: number | null;
  metadata: Metadata;
}

interface ScoredChunk {
  documentId: string;
  chunkIndex: number;
  score: number;
}

/**
 * The `limit` rows nearest to `query` by cosine (the dot product: stored and query vectors are
 * unit length), ties by document and chunk. Computed here rather than in SQL: reading the
 * candidates' float32 bytes and multiplying them here is cheaper than PostgreSQL's unnest-and-sum
 * over arrays of reals (measured in bench/RESULTS.md, section 18).
 */
function nearestOf(rows: readonly VectorRow[], query: Float32Array, limit: number): ScoredChunk[] {
  const scored: ScoredChunk[] = [];
  for (const r of rows) {
    const bytes = r.embedding;
    const n = Math.min(query.length, bytes.length >> 2);
    let dot = 0;
    for (let j = 0; j < n; j++) dot += bytes.readFloatBE(j * 4) * query[j]!;
    scored.push({ documentId: r.document_id, chunkIndex: r.chunk_index, score: dot });
  }
  scored.sort(
    (a, b) =>
      b.score - a.score ||
      (a.documentId < b.documentId ? -1 : a.documentId > b.documentId ? 1 : a.chunkIndex - b.chunkIndex),
  );
  return scored.slice(0, limit);
}

/** A vector as float4send writes it: each element's 4 bytes, big-endian. */
function float32Bytes(vector: Float32Array): Buffer {
  const bytes = Buffer.alloc(vector.length * 4);
  for (let j = 0; j < vector.length; j++) bytes.writeFloatBE(vector[j]!, j * 4);
  return bytes;
}

/** One character per dimension: '1' where the value is positive. */
function signBits(vector: Float32Array): string {
  let bits = '';
  for (const v of vector) bits += v > 0 ? '1' : '0';
  return bits;
}
