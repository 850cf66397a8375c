// The VectorStageStore as both SQL backends keep it: the embedding profiles (vector_profiles),
// each document's vector state per profile (document_vectors), the stage's reads of documents and
// chunks, and completing a document. Every method and statement is written once here; a backend's
// vector index extends SqlVectorStageStore with what differs: a dialect (how it names tables and
// parameters, stores times and lists, and marks a document being deleted), how its driver runs a
// statement, and its write transaction (the chunk_vectors rows in its own form, then the state,
// then the webhook event through its own outbox).
import type {
  ChunkVector,
  EmbeddingProfile,
  VectorStageState,
  VectorStageStore,
} from '../../domain/ports.js';

/** A statement and its values, one for each parameter, in the order they appear in the text. */
export interface Statement {
  text: string;
  values: unknown[];
}

/** What differs between the SQL backends in these statements. */
export interface VectorStageDialect {
  /** A table's name as the backend's statements write it (PostgreSQL: schema-qualified). */
  table(name: 'vector_profiles' | 'document_vectors' | 'documents' | 'chunks' | 'chunk_vectors'): string;
  /**
   * The n-th parameter, from 1: `$n` on PostgreSQL, `?` on SQLite, which binds in order of
   * appearance (so every statement here names its parameters in order, each once).
   */
  param(n: number): string;
  /** A time as the backend stores it: epoch milliseconds (SQLite), a timestamptz (PostgreSQL). */
  time(at: Date): unknown;
  /** SQL: a time before any other, so a document given it is due at once. */
  readonly beforeAll: string;
  /** SQL: `column` is one of the list given as parameter n (its value from `list`). */
  inList(column: string, n: number): string;
  list(values: readonly string[]): unknown;
  /**
   * The documents' column that marks one being deleted, which every read skips (PostgreSQL's
   * `deleted_at`); null where a delete takes its turn as any write does (SQLite).
   */
  readonly deletionMark: string | null;
}

/** A document_vectors row as vectorStates reads it. */
interface VectorStateRow {
  document_id: string;
  status: VectorStageState['status'];
  error_code: string | null;
  error_message: string | null;
  attempts: number;
}

/** A failed try, as VectorStageStore.recordFailure is told it. */
interface VectorFailure {
  status: 'pending' | 'failed';
  code: string;
  message: string;
  nextAttemptAt: Date;
  now: Date;
}

/**
 * One transaction of the stage: the vectors (replacing any of the same chunk and profile), then
 * the document's state, then its `document.vectors_ready` event when `vectorsReady` is given.
 */
export interface StageWrite {
  orgId: string;
  profileId: number;
  vectors: readonly ChunkVector[];
  state: Statement | null;
  vectorsReady: { documentId: string; at: Date } | null;
}

/** The vector stage's store on a SQL backend; the backend's vector index extends it. */
export abstract class SqlVectorStageStore implements VectorStageStore {
  private readonly statements: VectorStageStatements;

  protected constructor(dialect: VectorStageDialect) {
    this.statements = new VectorStageStatements(dialect);
  }

  /** Runs a read; its rows. */
  protected abstract rows<R extends object>(statement: Statement): Promise<R[]>;

  /** Runs a write on its own; how many rows it changed. */
  protected abstract run(statement: Statement): Promise<number>;

  /** Runs `work` in one transaction; false, with nothing written, when a row it names is gone. */
  protected abstract write(work: StageWrite): Promise<boolean>;

  async profileId(profile: EmbeddingProfile): Promise<number> {
    await this.run(this.statements.registerProfile(profile));
    return (await this.rows<{ id: number }>(this.statements.profileNumber(profile)))[0]!.id;
  }

  async findProfile(provider: string, model: string): Promise<number | null> {
    return (await this.rows<{ id: number }>(this.statements.newestProfile(provider, model)))[0]?.id ?? null;
  }

  writeVectors(orgId: string, profileId: number, vectors: readonly ChunkVector[]): Promise<boolean> {
    return this.write({ orgId, profileId, vectors, state: null, vectorsReady: null });
  }

  completeDocument(
    documentId: string,
    orgId: string,
    profileId: number,
    vectors: readonly ChunkVector[],
    now: Date,
  ): Promise<boolean> {
    return this.write({
      orgId,
      profileId,
      vectors,
      state: this.statements.markReady(documentId, orgId, profileId, now),
      // webhooks: the event commits with the vectors
      vectorsReady: { documentId, at: now },
    });
  }

  async recordFailure(documentId: string, orgId: string, profileId: number, f: VectorFailure): Promise<void> {
    await this.write({
      orgId,
      profileId,
      vectors: [],
      state: this.statements.recordFailure(documentId, orgId, profileId, f),
      vectorsReady: null,
    });
  }

  async dueDocuments(
    profileId: number,
    now: Date,
    limit: number,
  ): Promise<Array<{ documentId: string; orgId: string }>> {
    const rows = await this.rows<{ id: string; org_id: string }>(
      this.statements.dueDocuments(profileId, now, limit),
    );
    return rows.map((r) => ({ documentId: r.id, orgId: r.org_id }));
  }

  async chunkTexts(documentId: string): Promise<Array<{ chunkIndex: number; text: string }> | null> {
    if ((await this.rows(this.statements.readyDocument(documentId))).length === 0) return null;
    const rows = await this.rows<{ chunk_index: number; text: string }>(
      this.statements.chunkTexts(documentId),
    );
    return rows.map((r) => ({ chunkIndex: r.chunk_index, text: r.text }));
  }

  async vectorStates(
    documentIds: readonly string[],
    profileId: number,
  ): Promise<Map<string, VectorStageState>> {
    const rows = await this.rows<VectorStateRow>(this.statements.vectorStates(documentIds, profileId));
    return new Map(
      rows.map((r) => [
        r.document_id,
        {
          status: r.status,
          error: r.error_code === null ? null : { code: r.error_code, message: r.error_message ?? '' },
          attempts: r.attempts,
        },
      ]),
    );
  }

  retryFailed(profileId: number): Promise<number> {
    return this.run(this.statements.retryFailed(profileId));
  }

  requeueProfile(profileId: number): Promise<number> {
    return this.run(this.statements.requeueProfile(profileId));
  }

  async countVectors(documentId: string, profileId: number): Promise<number> {
    // count(*): a number on SQLite, a bigint as text on PostgreSQL.
    const rows = await this.rows<{ n: number | string }>(this.statements.countVectors(documentId, profileId));
    return Number(rows[0]!.n);
  }
}

/** The stage's statements for one backend. */
class VectorStageStatements {
  private readonly profiles: string;
  private readonly states: string;
  private readonly documents: string;
  private readonly chunks: string;
  private readonly vectors: string;

  constructor(private readonly d: VectorStageDialect) {
    this.profiles = d.table('vector_profiles');
    this.states = d.table('document_vectors');
    this.documents = d.table('documents');
    this.chunks = d.table('chunks');
    this.vectors = d.table('chunk_vectors');
  }

  /** `AND <alias>.<mark> IS NULL`, or nothing where documents carry no deletion mark. */
  private notDeleted(alias: string): string {
    return this.d.deletionMark === null ? '' : ` AND ${alias}.${this.d.deletionMark} IS NULL`;
  }

  /** Registers the profile (nothing when it is known): profileId's first step. */
  registerProfile(profile: EmbeddingProfile): Statement {
    const p = (n: number) => this.d.param(n);
    return {
      text: `INSERT INTO ${this.profiles} (provider, model, dimensions) VALUES (${p(1)}, ${p(2)}, ${p(3)}) ON CONFLICT DO NOTHING`,
      values: [profile.provider, profile.model, profile.dimensions],
    };
  }

  /** The registered profile's `id`. */
  profileNumber(profile: EmbeddingProfile): Statement {
    const p = (n: number) => this.d.param(n);
    return {
      text: `SELECT id FROM ${this.profiles} WHERE provider = ${p(1)} AND model = ${p(2)} AND dimensions = ${p(3)}`,
      values: [profile.provider, profile.model, profile.dimensions],
    };
  }

  /** The `id` of the newest profile of this provider and model, of any length. */
  newestProfile(provider: string, model: string): Statement {
    const p = (n: number) => this.d.param(n);
    return {
      text: `SELECT id FROM ${this.profiles} WHERE provider = ${p(1)} AND model = ${p(2)} ORDER BY id DESC LIMIT 1`,
      values: [provider, model],
    };
  }

  /**
   * completeDocument's state write, in the transaction that writes the vectors: the document's
   * state for the profile turns `ready`, its error cleared, one more attempt counted.
   */
  markReady(documentId: string, orgId: string, profileId: number, now: Date): Statement {
    const p = (n: number) => this.d.param(n);
    return {
      text: `INSERT INTO ${this.states} (document_id, profile_id, org_id, status, attempts, updated_at)
         VALUES (${p(1)}, ${p(2)}, ${p(3)}, 'ready', 1, ${p(4)})
         ON CONFLICT (document_id, profile_id) DO UPDATE SET status = 'ready', error_code = NULL,
           error_message = NULL, attempts = ${this.states}.attempts + 1, updated_at = excluded.updated_at`,
      values: [documentId, profileId, orgId, this.d.time(now)],
    };
  }

  /** recordFailure's write: the state `pending` until the next attempt, or `failed`, with the error. */
  recordFailure(documentId: string, orgId: string, profileId: number, f: VectorFailure): Statement {
    const p = (n: number) => this.d.param(n);
    return {
      text: `INSERT INTO ${this.states} (document_id, profile_id, org_id, status, error_code, error_message,
           attempts, next_attempt_at, updated_at)
         VALUES (${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)}, ${p(6)}, 1, ${p(7)}, ${p(8)})
         ON CONFLICT (document_id, profile_id) DO UPDATE SET status = excluded.status,
           error_code = excluded.error_code, error_message = excluded.error_message,
           attempts = ${this.states}.attempts + 1, next_attempt_at = excluded.next_attempt_at,
           updated_at = excluded.updated_at`,
      values: [
        documentId,
        profileId,
        orgId,
        f.status,
        f.code,
        f.message,
        this.d.time(f.nextAttemptAt),
        this.d.time(f.now),
      ],
    };
  }

  /**
   * Ready documents (`id`, `org_id`) whose vectors of the profile are due, oldest first: no state
   * yet, or pending with the next attempt at or before `now`.
   */
  dueDocuments(profileId: number, now: Date, limit: number): Statement {
    const p = (n: number) => this.d.param(n);
    return {
      text: `SELECT d.id, d.org_id FROM ${this.documents} d
         LEFT JOIN ${this.states} v ON v.document_id = d.id AND v.profile_id = ${p(1)}
         WHERE d.status = 'ready'${this.notDeleted('d')}
           AND (v.document_id IS NULL OR (v.status = 'pending' AND v.next_attempt_at <= ${p(2)}))
         ORDER BY d.updated_at, d.id
         LIMIT ${p(3)}`,
      values: [profileId, this.d.time(now), limit],
    };
  }

  /** One row when the document is ready (and not being deleted): chunkTexts' first step. */
  readyDocument(documentId: string): Statement {
    return {
      text: `SELECT 1 FROM ${this.documents} d WHERE d.id = ${this.d.param(1)} AND d.status = 'ready'${this.notDeleted('d')}`,
      values: [documentId],
    };
  }

  /** The document's chunks (`chunk_index`, `text`), in order. */
  chunkTexts(documentId: string): Statement {
    return {
      text: `SELECT chunk_index, text FROM ${this.chunks} WHERE document_id = ${this.d.param(1)} ORDER BY chunk_index`,
      values: [documentId],
    };
  }

  /** The recorded states (VectorStateRow) of these documents for the profile. */
  vectorStates(documentIds: readonly string[], profileId: number): Statement {
    return {
      text: `SELECT document_id, status, error_code, error_message, attempts FROM ${this.states}
         WHERE profile_id = ${this.d.param(1)} AND ${this.d.inList('document_id', 2)}`,
      values: [profileId, this.d.list(documentIds)],
    };
  }

  /** Every `failed` state of the profile pending again, due at once. */
  retryFailed(profileId: number): Statement {
    return {
      text: `UPDATE ${this.states} SET status = 'pending', next_attempt_at = ${this.d.beforeAll}
         WHERE profile_id = ${this.d.param(1)} AND status = 'failed'`,
      values: [profileId],
    };
  }

  /** Every state of the profile forgotten: each document due again, its vectors kept meanwhile. */
  requeueProfile(profileId: number): Statement {
    return {
      text: `DELETE FROM ${this.states} WHERE profile_id = ${this.d.param(1)}`,
      values: [profileId],
    };
  }

  /** How many vectors of the profile the document has (`n`). */
  countVectors(documentId: string, profileId: number): Statement {
    const p = (n: number) => this.d.param(n);
    return {
      text: `SELECT count(*) AS n FROM ${this.vectors} WHERE document_id = ${p(1)} AND profile_id = ${p(2)}`,
      values: [documentId, profileId],
    };
  }
}
