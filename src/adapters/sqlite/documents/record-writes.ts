// SqliteDocumentStore's record writes: new documents (an ingest, or a new version of a known
// external_id), new versions of a document, and metadata edits. A new document's row is also its
// job (the table queue leases the job columns), so creating one is enqueuing it.
import { ERRORS } from '../../../domain/errors.js';
import { canSee, DEFAULT_PARTITION } from '../../../domain/partitions.js';
import type { DocumentChange, IdempotentAnswer } from '../../../domain/ports.js';
import type {
  DocumentRecord,
  Metadata,
  NewDocument,
  NewVersion,
  StartedVersion,
  VersionsAsRead,
} from '../../../domain/types.js';
import {
  mayStartVersion,
  type PendingSpec,
  pendingSpecOf,
  RECORD_COLUMNS,
  versionOfIngest,
} from '../../sql-rows/document-row.js';
import type { Database } from '../database.js';
import type { GroupCommit } from '../group-commit.js';
import { completeAnswer } from '../idempotency-store.js';
import type { StatementCache } from '../statements.js';
import { storableMetadata, storableNullable } from '../text.js';
import type { SqliteDocumentContext } from './context.js';
import { accessColumn, type DocumentRow, toRecord, visibility, type WorkRow } from './rows.js';

export class RecordWrites {
  private readonly db: Database;
  private readonly sql: StatementCache;
  private readonly commits: GroupCommit;
  private readonly now: () => number;

  constructor(context: SqliteDocumentContext) {
    this.db = context.db;
    this.sql = context.sql;
    this.commits = context.commits;
    this.now = context.now;
  }

  /**
   * Ingests made during one event-loop turn share one transaction (see GroupCommit); each call
   * still lands or fails alone.
   */
  createDocuments(
    docs: NewDocument[],
    answer?: IdempotentAnswer<StartedVersion[]>,
  ): Promise<StartedVersion[]> {
    if (docs.length === 0 && answer === undefined) return Promise.resolve([]);
    return this.commits.run(() => {
      // One writer at a time (SQLite): an external_id's lookup and insert cannot interleave with
      // another's, nor a partition's mark for deletion with an ingest into it.
      this.refuseDeletingPartitions(docs);
      const started = docs.map((doc) =>
        doc.externalId ? this.createOrVersionNow(doc, doc.externalId) : this.insertDocument(doc),
      );
      if (answer) this.storeAnswer(answer, started);
      return started;
    }, docs.length);
  }

  /** partition_deleting when a row's partition is marked for deletion (before anything is written). */
  private refuseDeletingPartitions(docs: NewDocument[]): void {
    const marked = this.sql.get<[string, string], number>(
      'SELECT 1 FROM partition_deletions WHERE org_id = ? AND name = ?',
    );
    const seen = new Set<string>();
    for (const doc of docs) {
      const partition = doc.partition ?? DEFAULT_PARTITION;
      const key = `${doc.orgId}\u0000${partition}`;
      if (seen.has(key)) continue;
      seen.add(key);
      if (marked.pluck().get(doc.orgId, partition) !== undefined) throw ERRORS.partitionDeleting(partition);
    }
  }

  private insertDocument(d: NewDocument): StartedVersion {
    const at = d.createdAt.getTime();
    this.sql
      .get(`INSERT INTO documents (
        id, org_id, status, source_type, filename, source_url, content_type, bytes, metadata,
        chunk_size, chunk_overlap, tokenizer, attempts, created_at, updated_at,
        input_text, blob_key, fetch_url, job_state, run_at, job_attempts, external_id, requested_language,
        job_traceparent, partition, access
      ) VALUES (?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, 'pending', ?, 0, ?, ?, ?, ?, ?)`)
      .run(
        d.id,
        d.orgId,
        d.source.type,
        storableNullable(d.source.filename),
        storableNullable(d.source.url),
        storableNullable(d.source.content_type),
        d.source.bytes,
        JSON.stringify(storableMetadata(d.metadata)),
        d.chunkSize,
        d.chunkOverlap,
        d.tokenizer,
        at,
        at,
        storableNullable(d.text),
        d.blobKey,
        d.fetchUrl,
        at,
        d.externalId ?? null,
        d.language ?? null,
        d.traceparent ?? null,
        d.partition ?? DEFAULT_PARTITION,
        accessColumn(d.access ?? null),
      );
    return { id: d.id, version: 1, created: true, discardedBlobKeys: [] };
  }

  private createOrVersionNow(doc: NewDocument, externalId: string): StartedVersion {
    const found = this.sql
      .get<[string, string], { id: string; partition: string; access: string | null }>(
        'SELECT id, partition, access FROM documents WHERE org_id = ? AND external_id = ?',
      )
      .get(doc.orgId, externalId);
    const existing = found?.id;
    if (found !== undefined && found.partition !== (doc.partition ?? DEFAULT_PARTITION)) {
      throw ERRORS.partitionMismatch(externalId, doc.partition ?? DEFAULT_PARTITION);
    }
    if (found !== undefined && doc.seenBy && !canSee(doc.seenBy, visibility(found))) {
      throw ERRORS.externalIdNotVisible(externalId);
    }
    if (existing !== undefined) {
      const started = this.startVersionNow(doc.orgId, existing, versionOfIngest(doc));
      if (started && started !== 'in_flight') return started;
    }
    return this.insertDocument(doc);
  }

  private storeAnswer<T>(answer: IdempotentAnswer<T>, outcome: T): void {
    completeAnswer(this.sql, answer.orgId, answer.key, answer.status, answer.body(outcome));
  }

  async startVersion(
    orgId: string,
    id: string,
    version: NewVersion,
    answer?: IdempotentAnswer<StartedVersion>,
  ): Promise<StartedVersion | null> {
    const started = await this.commits.run(() => this.startAnswered(orgId, id, version, undefined, answer));
    return started === 'in_flight' ? null : started;
  }

  startVersionIfSettled(
    orgId: string,
    id: string,
    version: NewVersion,
    asRead: VersionsAsRead,
    answer?: IdempotentAnswer<StartedVersion>,
  ): Promise<StartedVersion | 'in_flight' | null> {
    // One writer at a time: nothing can start a version between the check and the write.
    return this.commits.run(() => this.startAnswered(orgId, id, version, asRead, answer));
  }

  private startAnswered(
    orgId: string,
    id: string,
    version: NewVersion,
    asRead: VersionsAsRead | undefined,
    answer: IdempotentAnswer<StartedVersion> | undefined,
  ): StartedVersion | 'in_flight' | null {
    const started = this.startVersionNow(orgId, id, version, asRead);
    if (answer && started && started !== 'in_flight') this.storeAnswer(answer, started);
    return started;
  }

  private startVersionNow(
    orgId: string,
    id: string,
    v: NewVersion,
    asRead?: VersionsAsRead,
  ): StartedVersion | 'in_flight' | null {
    const row = this.sql
      .get<[string, string], WorkRow & { status: string; partition: string; access: string | null }>(
        `SELECT org_id, status, version, pending_version, pending_status, pending, blob_key, partition, access
         FROM documents WHERE id = ? AND org_id = ?`,
      )
      .get(id, orgId);
    if (!row || (v.seenBy && !canSee(v.seenBy, visibility(row)))) return null;
    if (!mayStartVersion(row, asRead)) return 'in_flight';
    const at = v.at.getTime();
    const metadata = v.metadata === null ? null : JSON.stringify(storableMetadata(v.metadata));
    // The access list changes at once, as the metadata does; absent keeps the document's.
    const setAccess = v.access === undefined ? '' : ', access = @access';
    const discarded: string[] = [];
    // The job starts afresh; a run still going for an older version loses its lease and its
    // index_run, so it writes nothing more.
    const freshJob = `index_run = NULL, job_state = 'pending', run_at = @at, lease_owner = NULL,
      lease_until = NULL, job_attempts = 0, attempts = 0, updated_at = @at,
      metadata = coalesce(@metadata, metadata), input_text = @text, fetch_url = @fetchUrl,
      job_traceparent = @traceparent${setAccess}`;
    const common = {
      id,
      at,
      metadata,
      ...(v.access === undefined ? {} : { access: accessColumn(v.access) }),
      text: storableNullable(v.text),
      fetchUrl: v.fetchUrl,
      traceparent: v.traceparent ?? null,
    };
    if (row.status === 'ready') {
      const version = Math.max(row.version, row.pending_version ?? 0) + 1;
      const superseded = row.pending === null ? null : (JSON.parse(row.pending) as PendingSpec).blob_key;
      if (superseded !== null && superseded !== row.blob_key && superseded !== v.blobKey) {
        discarded.push(superseded);
      }
      this.sql
        .get(
          `UPDATE documents SET pending_version = @version, pending_status = 'queued', pending = @pending,
             ${freshJob}
           WHERE id = @id`,
        )
        .run({ ...common, version, pending: JSON.stringify(pendingSpecOf(v)) });
      return { id, version, created: false, discardedBlobKeys: discarded };
    }
    // Nothing answers yet (queued, processing or failed): the new version takes the old one's place.
    const version = row.version + 1;
    if (row.blob_key !== null && row.blob_key !== v.blobKey) discarded.push(row.blob_key);
    this.sql
      .get(
        `UPDATE documents SET version = @version, status = 'queued', source_type = @type,
           filename = @filename, source_url = @url, content_type = @contentType, bytes = @bytes,
           chunk_size = @chunkSize, chunk_overlap = @chunkOverlap, blob_key = @blobKey,
           requested_language = @language, chunk_count = NULL, token_count = NULL, content_sha256 = NULL, error_code = NULL,
           error_message = NULL, pending_version = NULL, pending_status = NULL, pending = NULL,
           ${freshJob}
         WHERE id = @id`,
      )
      .run({
        ...common,
        version,
        type: v.source.type,
        filename: storableNullable(v.source.filename),
        url: storableNullable(v.source.url),
        contentType: storableNullable(v.source.content_type),
        bytes: v.source.bytes,
        chunkSize: v.chunkSize,
        chunkOverlap: v.chunkOverlap,
        blobKey: v.blobKey,
        language: v.language ?? null,
      });
    return { id, version, created: false, discardedBlobKeys: discarded };
  }

  async updateMetadata(
    orgId: string,
    id: string,
    update: (current: Metadata) => Metadata,
    change: DocumentChange = {},
  ): Promise<DocumentRecord | null> {
    return this.db
      .transaction(() => {
        const current = this.sql
          .get<[string, string], { metadata: string; partition: string; access: string | null }>(
            'SELECT metadata, partition, access FROM documents WHERE id = ? AND org_id = ?',
          )
          .get(id, orgId);
        if (current === undefined) return null;
        if (change.seenBy && !canSee(change.seenBy, visibility(current))) {
          return null;
        }
        const metadata = update(JSON.parse(current.metadata) as Metadata);
        const access = change.access === undefined ? current.access : accessColumn(change.access);
        this.sql
          .get('UPDATE documents SET metadata = ?, access = ?, updated_at = ? WHERE id = ?')
          .run(JSON.stringify(storableMetadata(metadata)), access, this.now(), id);
        const row = this.sql
          .get<[string], DocumentRow>(`SELECT ${RECORD_COLUMNS} FROM documents WHERE id = ?`)
          .get(id);
        return row ? toRecord(row) : null;
      })
      .immediate();
  }
}
