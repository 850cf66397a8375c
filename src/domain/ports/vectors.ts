// Chunk vectors in the records' database: the search that queries use and the vector stage's writes.
import type { Filter } from '../filter.js';
import type { Metadata } from '../types.js';
import type { EmbeddingProfile } from './embeddings.js';

/** A chunk's vector, addressed as the chunk is: by its document and its place in it. */
export interface ChunkVector {
  documentId: string;
  chunkIndex: number;
  vector: Float32Array;
}

export interface VectorStageState {
  status: 'pending' | 'ready' | 'failed';
  error: { code: string; message: string } | null;
  attempts: number;
}

/** A nearest-chunks search: the same filters as a keyword query, within one org and profile. */
export interface VectorSearchQuery {
  orgId: string;
  profileId: number;
  vector: Float32Array;
  limit: number;
  documentIds?: readonly string[] | null;
  filter?: Filter | null;
  /** Only documents of these partitions; null or absent: every partition of the org. */
  partitions?: readonly string[] | null;
  /** Only documents without an access list or whose list shares one of these; null or absent: any. */
  principals?: readonly string[] | null;
}

export interface VectorHit {
  documentId: string;
  chunkIndex: number;
  /** Cosine similarity to the query vector, in [-1, 1]; higher is nearer. */
  score: number;
  text: string;
  metadata: Metadata;
  pageStart: number | null;
  pageEnd: number | null;
}

/**
 * Chunk vectors, searched: what queries use (domain/query.ts). The vectors live in the records'
 * database, written through VectorStageStore; each backend's vector index
 * (adapters/sqlite/vector-index.ts, postgres/…) implements both ports in one class, and a search
 * kept elsewhere would follow that table (docs/ARCHITECTURE.md, "Adding a backend"). Vectors of
 * different profiles live side by side and are never compared.
 */
export interface VectorSearch {
  /**
   * The profile's number, the one VectorStageStore.profileId gives it (the profiles are registered
   * in the records' database, on first use): the stage writes vectors under it, queries name it.
   */
  profileId(profile: EmbeddingProfile): Promise<number>;
  /**
   * The org's chunks nearest to `vector` among those with a vector of the profile, best first,
   * at most `limit`: only chunks of `ready` documents, of `documentIds` when given and passing
   * `filter` when given (the keyword index's filters, so both lists of a hybrid query hold the
   * same documents). A vector written, replaced or removed with its chunk is seen by the next search.
   */
  search(q: VectorSearchQuery): Promise<VectorHit[]>;
  /**
   * What this process holds in memory to search faster (the sign-bit prefilter): how many
   * (org, profile) partitions and their bytes, within VECTOR_PREFILTER_MAX_MB.
   */
  heldMemory(): { partitions: number; bytes: number };
}

/**
 * The vector stage's side (domain/vector-stage.ts, vector-status.ts): which documents need
 * vectors, their chunks' texts, writing the vectors, and each document's state per profile
 * (`document_vectors`). In the records' database: a vector row belongs to its chunk, so deleting
 * or replacing a document's chunks removes their vectors in the same transaction (a foreign key
 * with ON DELETE CASCADE) and makes the document due again; a deleted document can never be
 * found by its vectors.
 */
export interface VectorStageStore {
  /** The profile's number in this database, registered on first use. */
  profileId(profile: EmbeddingProfile): Promise<number>;
  /** The newest registered profile of this provider and model (any length); null when none. */
  findProfile(provider: string, model: string): Promise<number | null>;
  /**
   * One transaction: stores the vectors (replacing any of the same chunk and profile). Returns
   * false, writing nothing, when one of the chunks does not exist (its document was deleted or
   * re-chunked meanwhile).
   */
  writeVectors(orgId: string, profileId: number, vectors: readonly ChunkVector[]): Promise<boolean>;
  /**
   * One transaction: stores the document's vectors and marks its vector stage `ready` for the
   * profile. The one place a document's vectors turn ready (a `document.vectors_ready` event
   * belongs in this transaction). false, writing nothing, when the document or one of the chunks
   * is gone.
   */
  completeDocument(
    documentId: string,
    orgId: string,
    profileId: number,
    vectors: readonly ChunkVector[],
    now: Date,
  ): Promise<boolean>;
  /** Records a failed try: `pending` until nextAttemptAt (an outage) or `failed` (for good). */
  recordFailure(
    documentId: string,
    orgId: string,
    profileId: number,
    failure: { status: 'pending' | 'failed'; code: string; message: string; nextAttemptAt: Date; now: Date },
  ): Promise<void>;
  /**
   * Ready documents whose vectors of the profile are due, oldest first: never tried, or pending
   * with their next attempt at or before `now`.
   */
  dueDocuments(
    profileId: number,
    now: Date,
    limit: number,
  ): Promise<Array<{ documentId: string; orgId: string }>>;
  /** A ready document's chunk texts in order; null when it is not ready (deleted, being re-processed). */
  chunkTexts(documentId: string): Promise<Array<{ chunkIndex: number; text: string }> | null>;
  /** The recorded vector states of these documents for the profile (absent: never tried). */
  vectorStates(documentIds: readonly string[], profileId: number): Promise<Map<string, VectorStageState>>;
  /** Makes every `failed` document of the profile due again; how many. */
  retryFailed(profileId: number): Promise<number>;
  /**
   * Makes every document of the profile due again (`docindex reindex --vectors`): the stage
   * re-embeds them in the background, each new vector replacing the old one; how many were ready
   * or failed before.
   */
  requeueProfile(profileId: number): Promise<number>;
  /** How many vectors of the profile the document has. */
  countVectors(documentId: string, profileId: number): Promise<number>;
}
