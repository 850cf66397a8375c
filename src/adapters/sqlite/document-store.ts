// DocumentStore on SQLite: document records and their lifecycle. Chunks and their words are the
// keyword index's, written through its writer port (SlicedKeywordIndexWriter, which start/ hands
// over) inside the records' transactions. The documents table also carries the job columns that
// SqliteTableQueue leases, so creating a document is enqueuing its job in the same transaction.
import { randomUUID } from 'node:crypto';
import { chunkBatchesOf } from '../../domain/chunk-batches.js';
import { ERRORS } from '../../domain/errors.js';
import { canSee, DEFAULT_PARTITION } from '../../domain/partitions.js';
import {
  type ChunkPage,
  type Clock,
  type DocumentChange,
  type DocumentStore,
  type IdempotentAnswer,
  type SlicedKeywordIndexWriter,
  systemClock,
} from '../../domain/ports.js';
import type {
  ChunkRow,
  DocumentAccess,
  DocumentError,
  DocumentRecord,
  IndexResult,
  IndexTotals,
  JobInput,
  JobRef,
  ListQuery,
  Metadata,
  NewDocument,
  NewVersion,
  PartitionSummary,
  StartedVersion,
  VersionsAsRead,
} from '../../domain/types.js';
import {
  accessOfColumn,
  mayStartVersion,
  PENDING_ACTIVE,
  type PendingSpec,
  pendingSpecOf,
  RECORD_COLUMNS,
  type RowReaders,
  type DocumentRow as SharedDocumentRow,
  toDocumentRecord,
  toJobInput,
  versionOfIngest,
  WORK_VERSION,
} from '../sql-rows/document-row.js';
import type { Database } from './database.js';
import { sqliteAccessCondition, sqliteFilter } from './filter-sql.js';
import { GroupCommit } from './group-commit.js';
import { completeAnswer } from './idempotency-store.js';
import { startProcessingSet } from './start-processing.js';
import { StatementCache } from './statements.js';
import { storableMetadata, storableNullable, storableText } from './text.js';
import { SqliteWebhookOutbox } from './webhook-store.js';

/**
 * Chunk text written per transaction when a large document is indexed in slices: a few
 * milliseconds of inserts, so the event loop is never held long (bench/neighbour.bench.ts).
 */
export const INDEX_SLICE_CHARS = 128 * 1024;
/** Chunks deleted per transaction when a large document or its earlier chunks are cleared. */
const INDEX_DELETE_SLICE = 500;
/**
 * The organisation of a deleted document whose chunks are still being removed: no org has this id
 * (ids are `org_…`), so every org-scoped read passes it by.
 */
const PURGED_ORG = '';
/** SQL: the row is a live document, not one being purged. */
const LIVE = "org_id <> ''";
/**
 * The organisation of a shadow row: the chunks of a large pending version are written under it,
 * a slice at a time, while the current version answers; the swap moves them to the document in
 * one transaction. No org has this id, so search and reads pass shadow rows by.
 */
const shadowOrg = (documentId: string) => `shadow:${documentId}`;

/** The chunks again, in runs of about `chars` of text each (at least one chunk per run). */
async function* reslice(
  batches: AsyncIterable<readonly ChunkRow[]>,
  chars: number,
): AsyncGenerator<ChunkRow[], undefined, undefined> {
  let slice: ChunkRow[] = [];
  let size = 0;
  for await (const batch of batches) {
    for (const chunk of batch) {
      if (slice.length > 0 && size + chunk.text.length > chars) {
        yield slice;
        slice = [];
        size = 0;
      }
      slice.push(chunk);
      size += chunk.text.length;
    }
  }
  if (slice.length > 0) yield slice;
  return undefined;
}

/** What marking a document ready writes. */
interface ReadyIndex extends IndexTotals {
  chunkCount: number;
  result: IndexResult;
}

export interface SqliteDocumentStoreOptions {
  clock?: Clock;
  /**
   * The keyword index saveIndex writes, on the same database: its statements join this store's
   * transactions.
   */
  keyword: SlicedKeywordIndexWriter<void, 'sync'>;
  /** Writes webhook events in the transactions of the status changes (default: one on the same database). */
  outbox?: SqliteWebhookOutbox;
}

/** A record row as better-sqlite3 returns it: integers, epoch milliseconds, JSON text. */
type DocumentRow = SharedDocumentRow<number, number, string>;

const READ_ROW: RowReaders<number, number, string> = {
  number: (value) => value,
  date: (value) => new Date(value),
  metadata: (value) => JSON.parse(value) as Metadata,
  json: (value) => JSON.parse(value) as unknown,
};

const toRecord = (row: DocumentRow): DocumentRecord => toDocumentRecord(row, READ_ROW);

/** What a write of a job reads of its document to check it is still wanted. */
interface WorkRow {
  org_id: string;
  version: number;
  pending_version: number | null;
  pending_status: string | null;
  pending: string | null;
  blob_key: string | null;
}

const pendingActive = (row: WorkRow) =>
  row.pending_version !== null && (row.pending_status === 'queued' || row.pending_status === 'processing');
const workVersion = (row: WorkRow) => (pendingActive(row) ? (row.pending_version as number) : row.version);

interface JobInputRow extends DocumentRow {
  input_text: string | null;
  blob_key: string | null;
  fetch_url: string | null;
}

export class SqliteDocumentStore implements DocumentStore {
  private readonly sql: StatementCache;
  private readonly commits: GroupCommit;
  private readonly clock: Clock;
  private readonly keyword: SlicedKeywordIndexWriter<void, 'sync'>;
  private readonly outbox: SqliteWebhookOutbox;

  constructor(
    private readonly db: Database,
    opts: SqliteDocumentStoreOptions,
  ) {
    this.sql = new StatementCache(db);
    this.commits = new GroupCommit(db);
    this.clock = opts.clock ?? systemClock;
    this.keyword = opts.keyword;
    this.outbox = opts.outbox ?? new SqliteWebhookOutbox(db, this.clock);
    setImmediate(() => void this.resumePurges());
  }

  private now(): number {
    return this.clock.now().getTime();
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
      .run(orgId, name, at.getTime(), `pd_${randomUUID().replaceAll('-', '')}`, at.getTime());
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

  /**
   * A document of up to INDEX_DELETE_SLICE chunks goes in one transaction. A larger one (deleting
   * 35k chunks and their index rows takes the event loop over half a second) is first handed to
   * no organisation, in one short transaction: from then on no read of its org finds it, no job
   * runs it and an index run writing it stops. Its chunks then go a slice at a time, and the row
   * last (`purge`); a purge cut off by a restart resumes when the store is next opened.
   */
  async deleteDocument(
    orgId: string,
    id: string,
    seenBy?: DocumentAccess,
  ): Promise<{ blobKey: string | null; pendingBlobKey: string | null } | null> {
    const deleted = this.db
      .transaction(() => {
        const row = this.sql
          .get<
            [string, string],
            { blob_key: string | null; pending: string | null; partition: string; access: string | null }
          >('SELECT blob_key, pending, partition, access FROM documents WHERE id = ? AND org_id = ?')
          .get(id, orgId);
        if (!row || (seenBy && !canSee(seenBy, visibility(row)))) return null;
        this.outbox.emit('document.deleted', id); // webhooks: the record as it was, same transaction
        const pendingBlob = row.pending === null ? null : (JSON.parse(row.pending) as PendingSpec).blob_key;
        const blobs = {
          blobKey: row.blob_key,
          pendingBlobKey: pendingBlob === row.blob_key ? null : pendingBlob,
        };
        // A pending version's chunks written so far go too (the run writing them stops at its
        // next slice: its document is gone).
        const shadows = this.handShadows(id);
        if (this.keyword.countChunks(id, INDEX_DELETE_SLICE + 1) > INDEX_DELETE_SLICE) {
          this.handToPurge('id = ?', id);
          return { ...blobs, purge: [id, ...shadows] };
        }
        // Chunks first and explicitly, rather than relying on the cascade, which a connection
        // opened without foreign_keys would skip.
        this.keyword.deleteChunks(id);
        this.sql.get('DELETE FROM documents WHERE id = ?').run(id);
        return { ...blobs, purge: shadows };
      })
      .immediate();
    if (!deleted) return null;
    for (const handed of deleted.purge) void this.purge(handed);
    return { blobKey: deleted.blobKey, pendingBlobKey: deleted.pendingBlobKey };
  }

  /** Hands the rows `where` selects to no organisation (see PURGED_ORG); inside a transaction. */
  private handToPurge(where: string, ...params: string[]): void {
    this.sql
      .get(
        `UPDATE documents SET org_id = '${PURGED_ORG}', external_id = NULL, status = 'failed',
           index_run = NULL, input_text = NULL, fetch_url = NULL, job_state = 'done',
           lease_owner = NULL, lease_until = NULL, pending_version = NULL, pending_status = NULL
         WHERE ${where}`,
      )
      .run(...params);
  }

  /** Hands the document's shadow rows to no organisation; their ids, for purge(). */
  private handShadows(id: string): string[] {
    const ids = this.sql
      .get<[string], string>('SELECT id FROM documents WHERE org_id = ?')
      .pluck()
      .all(shadowOrg(id));
    if (ids.length > 0) this.handToPurge('org_id = ?', shadowOrg(id));
    return ids;
  }

  /**
   * Takes the current version's chunks out of the document inside the caller's transaction: a
   * few are deleted at once; more are moved under a row handed to no organisation (moveChunks:
   * their words are not written again) and purged a slice at a time after the commit.
   */
  private retireChunks(id: string): void {
    if (this.keyword.countChunks(id, INDEX_DELETE_SLICE + 1) <= INDEX_DELETE_SLICE) {
      this.keyword.deleteChunks(id);
      return;
    }
    const holder = randomUUID();
    this.insertHolder(holder, PURGED_ORG);
    this.keyword.moveChunks(id, holder);
    // After the commit (or, if it rolls back, a purge of a row that never was).
    setImmediate(() => void this.purge(holder));
  }

  /**
   * A row that only holds chunks: of a document being purged, or of a pending version (shadow).
   * `failed` with its job done, so no count of pending work, no reconciler and no claim sees it.
   */
  private insertHolder(id: string, orgId: string): void {
    this.sql
      .get(
        `INSERT INTO documents (id, org_id, status, source_type, metadata, chunk_size, chunk_overlap,
           tokenizer, attempts, created_at, updated_at, job_state, run_at)
         VALUES (?, ?, 'failed', 'text', '{}', 1, 0, '', 0, ?, ?, 'done', 0)`,
      )
      .run(id, orgId, this.now(), this.now());
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

  /**
   * Every document of the org is first handed to PURGED_ORG in one transaction (as deleteDocument
   * does with a large one): from then on no read finds them, no job runs them and no index run
   * writes them. Their chunks then go a slice at a time, each document's row after its chunks.
   */
  async purgeOrg(orgId: string): Promise<{ documents: number; chunks: number; blobKeys: string[] }> {
    const handed = this.db
      .transaction(() => {
        const rows = this.sql
          .get<[string], { id: string; blob_key: string | null; pending: string | null }>(
            'SELECT id, blob_key, pending FROM documents WHERE org_id = ?',
          )
          .all(orgId);
        const chunks =
          this.sql
            .get<[string], number>(
              'SELECT count(*) FROM chunks WHERE document_id IN (SELECT id FROM documents WHERE org_id = ?)',
            )
            .pluck()
            .get(orgId) ?? 0;
        const shadows = rows.flatMap((row) => this.handShadows(row.id));
        this.handToPurge('org_id = ?', orgId);
        this.sql.get('DELETE FROM partition_deletions WHERE org_id = ?').run(orgId);
        return { rows, chunks, shadows };
      })
      .immediate();
    for (const { id } of handed.rows) await this.purgeHanded(id);
    for (const id of handed.shadows) await this.purgeHanded(id);
    await this.commits.run(() => this.keyword.forgetOrg(orgId));
    const blobKeys = new Set<string>();
    for (const row of handed.rows) {
      if (row.blob_key !== null) blobKeys.add(row.blob_key);
      const pending = row.pending === null ? null : (JSON.parse(row.pending) as PendingSpec).blob_key;
      if (pending !== null) blobKeys.add(pending);
    }
    return { documents: handed.rows.length, chunks: handed.chunks, blobKeys: [...blobKeys] };
  }

  /** Deletes a document handed to PURGED_ORG, in the background: a failure is resumed at the next start. */
  private async purge(id: string): Promise<void> {
    try {
      await this.purgeHanded(id);
    } catch {
      // The database was closed (shutdown) or failed: what is left is invisible, and the next
      // start resumes it.
    }
  }

  /** Deletes a document handed to PURGED_ORG: its chunks a slice at a time, then its row. */
  private async purgeHanded(id: string): Promise<void> {
    while (
      (await this.commits.run(
        () => this.keyword.deleteChunkSlice(id, INDEX_DELETE_SLICE),
        INDEX_DELETE_SLICE,
      )) > 0
    ) {
      // Each slice is its own transaction; the event loop runs between them.
    }
    await this.commits.run(() =>
      this.sql.get('DELETE FROM documents WHERE id = ? AND org_id = ?').run(id, PURGED_ORG),
    );
  }

  /** Resumes the purges a restart cut off. */
  private async resumePurges(): Promise<void> {
    try {
      // Shadows of a pending version no run works on any more (a crash cut the run off, and no
      // newer version came to clear them): nothing will swap them in.
      this.db
        .transaction(() =>
          this.handToPurge(
            `org_id LIKE 'shadow:%' AND NOT EXISTS (SELECT 1 FROM documents AS d
               WHERE 'shadow:' || d.id = documents.org_id AND d.pending_status IN ('queued', 'processing'))`,
          ),
        )
        .immediate();
      const ids = this.sql
        .get<[string], string>('SELECT id FROM documents WHERE org_id = ?')
        .pluck()
        .all(PURGED_ORG);
      for (const id of ids) await this.purge(id);
    } catch {
      // As in purge: the database went away; nothing visible is left behind.
    }
  }

  async loadJobInput(id: string): Promise<JobInput | null> {
    const row = this.sql
      .get<[string], JobInputRow>(
        `SELECT ${RECORD_COLUMNS}, input_text, blob_key, fetch_url FROM documents WHERE id = ? AND ${LIVE}`,
      )
      .get(id);
    if (!row) return null;
    return toJobInput(row, READ_ROW);
  }

  /**
   * A job's write: `pendingSet` when a pending version is the work, else `currentSet`; nothing
   * when the document is gone or `version` is no longer the one to produce. Statements bind
   * @id, @now and @version plus `params`.
   */
  private workWrite(
    version: number | undefined,
    pendingSet: string,
    currentSet: string,
    params: Record<string, string | number | null>,
    /** Runs in the same transaction when the current version's row changed. */
    onCurrent?: () => void,
  ): boolean {
    const guard = version === undefined ? '' : ` AND ${WORK_VERSION} = @version`;
    const bound = { ...params, now: this.now(), version: version ?? null };
    return this.db
      .transaction(() => {
        const pending = this.sql
          .get(`UPDATE documents SET ${pendingSet} WHERE id = @id AND ${LIVE} AND ${PENDING_ACTIVE}${guard}`)
          .run(bound);
        if (pending.changes > 0) return true;
        const changed =
          this.sql
            .get(
              `UPDATE documents SET ${currentSet} WHERE id = @id AND ${LIVE} AND NOT (${PENDING_ACTIVE})${guard}`,
            )
            .run(bound).changes > 0;
        if (changed) onCurrent?.();
        return changed;
      })
      .immediate();
  }

  async markProcessing(id: string, version?: number): Promise<boolean> {
    return this.workWrite(
      version,
      `pending_status = 'processing', pending = json_set(pending, '$.error', json('null')),
       attempts = attempts + 1, updated_at = @now`,
      startProcessingSet(false),
      { id },
    );
  }

  async markRetrying(id: string, error: DocumentError, version?: number): Promise<boolean> {
    return this.workWrite(
      version,
      `pending_status = 'queued', pending = json_set(pending, '$.error', json(@error)), updated_at = @now`,
      `status = 'queued', error_code = @code, error_message = @message, updated_at = @now`,
      { id, ...errorParams(error) },
    );
  }

  /**
   * A document of up to INDEX_SLICE_CHARS of chunk text is written in one transaction, shared
   * with the index writes finishing in the same event-loop turn (see GroupCommit): FTS5 then
   * writes one index segment for all of them, not one per document.
   *
   * A larger one is written in slices of about that size, each its own short transaction, with
   * the event loop free between them: one 84 MB text is ~35k chunks, seconds of inserts that
   * would otherwise stall every other request. Meanwhile the document stays `processing`, and
   * search shows only chunks of `ready` documents, so no one sees it half-indexed. The run stamps
   * the document (`index_run`) and every slice checks the stamp: a run that lost its job to a
   * newer one, or whose document was deleted, stops at its next slice and writes nothing more.
   */
  async saveIndex(id: string, result: IndexResult): Promise<boolean> {
    const { batches, totals } = chunkBatchesOf(result);
    const slices = reslice(batches, INDEX_SLICE_CHARS);
    let shadow: string | null = null;
    let finished = false;
    try {
      // Up to one slice in all: the whole document in one shared transaction.
      const first = await slices.next();
      const second = first.done ? null : await slices.next();
      if (first.done || !second || second.done) {
        const chunks = first.done ? [] : first.value;
        const ready = { ...totals(), chunkCount: chunks.length, result };
        return await this.commits.run(
          () => this.writeIndex(id, chunks, ready, result.version),
          Math.max(1, chunks.length),
        );
      }
      const run = randomUUID();
      const began = await this.commits.run(() => {
        const doc = this.workRow(id);
        if (!doc || (result.version !== undefined && workVersion(doc) !== result.version)) return null;
        this.sql.get('UPDATE documents SET index_run = ? WHERE id = ?').run(run, id);
        if (!pendingActive(doc)) return { shadow: null, leftovers: [] };
        // A pending version is written beside the current one, under a shadow row; an earlier
        // run's shadow (cut off part-way) is purged first.
        const leftovers = this.handShadows(id);
        const holder = randomUUID();
        this.insertHolder(holder, shadowOrg(id));
        return { shadow: holder, leftovers };
      });
      if (!began) return false;
      shadow = began.shadow;
      for (const leftover of began.leftovers) await this.purgeHanded(leftover);
      const target = shadow ?? id;
      if (shadow === null) {
        // An earlier run's chunks (one that crashed part-way) go first, also a slice at a time.
        for (;;) {
          const removed = await this.commits.run(() =>
            this.inRun(id, run, () => this.keyword.deleteChunkSlice(id, INDEX_DELETE_SLICE)),
          );
          if (removed === null) return false;
          if (removed === 0) break;
        }
      }
      const write = async (slice: ChunkRow[]) =>
        (await this.commits.run(
          () => this.inRun(id, run, (orgId) => this.keyword.writeChunks(target, orgId, slice)),
          slice.length,
        )) !== null;
      let chunkCount = 0;
      // The two slices read ahead first, then the rest as it comes.
      for (const slice of [first.value, second.value]) {
        if (!(await write(slice))) return false;
        chunkCount += slice.length;
      }
      for await (const slice of slices) {
        if (!(await write(slice))) return false;
        chunkCount += slice.length;
      }
      const ready = { ...totals(), chunkCount, result };
      const swapped = await this.commits.run(() =>
        this.inRun(id, run, () => {
          if (shadow === null) {
            this.markReady(id, ready);
            return true;
          }
          return this.swapIn(id, shadow, ready);
        }),
      );
      finished = swapped === true;
      return finished;
    } finally {
      // Left early (deleted, or a newer run took over): the chunks still coming are not wanted.
      await slices.return(undefined);
      if (shadow !== null && !finished) await this.discardShadow(id, shadow);
    }
  }

  /** The row as a job's write checks it; null when the document is gone. */
  private workRow(id: string): WorkRow | null {
    return (
      this.sql
        .get<[string], WorkRow>(
          `SELECT org_id, version, pending_version, pending_status, pending, blob_key
           FROM documents WHERE id = ? AND ${LIVE}`,
        )
        .get(id) ?? null
    );
  }

  /**
   * The swap of a large pending version, in one transaction: the current version's chunks leave
   * the document (retireChunks), the shadow's become the document's (moveChunks: their words are
   * not written again) and the pending version becomes the current one. False when
   * the shadow was taken away meanwhile (a purge of leftovers by another process).
   */
  private swapIn(id: string, shadow: string, ready: ReadyIndex): boolean {
    const doc = this.workRow(id);
    const owner = this.sql
      .get<[string], string>('SELECT org_id FROM documents WHERE id = ?')
      .pluck()
      .get(shadow);
    if (!doc || !pendingActive(doc) || owner !== shadowOrg(id)) return false;
    this.retireChunks(id);
    this.keyword.moveChunks(shadow, id);
    this.sql.get('DELETE FROM documents WHERE id = ?').run(shadow);
    this.markVersionReady(id, doc, ready);
    return true;
  }

  /** A shadow whose run stopped before its swap: its chunks go, a slice at a time. */
  private async discardShadow(id: string, shadow: string): Promise<void> {
    try {
      await this.commits.run(() => this.handToPurge('id = ? AND org_id = ?', shadow, shadowOrg(id)));
      await this.purgeHanded(shadow);
    } catch {
      // Closed meanwhile: the next start's sweep of orphan shadows removes it.
    }
  }

  /** Runs `write` if the document still exists and `run` is still the run indexing it; else null. */
  private inRun<T>(id: string, run: string, write: (orgId: string) => T): T | null {
    const doc = this.sql
      .get<[string], { org_id: string; index_run: string | null }>(
        'SELECT org_id, index_run FROM documents WHERE id = ?',
      )
      .get(id);
    if (!doc || doc.index_run !== run) return null;
    return write(doc.org_id);
  }

  private writeIndex(id: string, chunks: readonly ChunkRow[], ready: ReadyIndex, version?: number): boolean {
    const doc = this.workRow(id);
    // Deleted while the worker ran: writing anything now would resurrect its chunks. A newer
    // version took over: these chunks are not wanted.
    if (!doc || (version !== undefined && workVersion(doc) !== version)) return false;
    if (pendingActive(doc)) {
      // The swap: the current version's chunks out, the new ones in, one transaction.
      this.retireChunks(id);
      this.keyword.writeChunks(id, doc.org_id, chunks);
      this.markVersionReady(id, doc, ready);
      return true;
    }
    this.keyword.deleteChunks(id);
    this.keyword.writeChunks(id, doc.org_id, chunks);
    this.markReady(id, ready);
    return true;
  }

  /** The pending version becomes the current one: its source, settings, blob and counts. */
  private markVersionReady(id: string, doc: WorkRow, ready: ReadyIndex): void {
    const spec = JSON.parse(doc.pending ?? 'null') as PendingSpec;
    this.sql
      .get(
        `UPDATE documents SET version = pending_version, pending_version = NULL, pending_status = NULL,
           pending = NULL, source_type = @type, filename = @filename, source_url = @url,
           content_type = @contentType, bytes = @bytes, chunk_size = @chunkSize,
           chunk_overlap = @chunkOverlap, blob_key = @blobKey, status = 'ready', chunk_count = @chunkCount,
           token_count = @tokenCount, content_sha256 = @sha, ocr_pages = @ocrPages, input_text = NULL, fetch_url = NULL,
           language = @language, requested_language = @requested,
           error_code = NULL, error_message = NULL, updated_at = @now, job_state = 'done',
           lease_owner = NULL, lease_until = NULL, index_run = NULL
         WHERE id = @id`,
      )
      .run({
        id,
        type: spec.source.type,
        filename: storableNullable(spec.source.filename),
        url: storableNullable(spec.source.url),
        contentType: storableNullable(ready.result.contentType ?? spec.source.content_type),
        bytes: ready.result.bytes ?? spec.source.bytes,
        chunkSize: spec.chunk_size,
        chunkOverlap: spec.chunk_overlap,
        blobKey: spec.blob_key,
        chunkCount: ready.chunkCount,
        tokenCount: ready.tokenCount,
        sha: ready.contentSha256,
        ocrPages: ready.ocrPages ?? null,
        language: ready.language ?? null,
        requested: spec.language ?? null,
        now: this.now(),
      });
    if (ready.language !== undefined) this.keyword.noteLanguage(id, ready.language);
    this.outbox.emit('document.ready', id); // webhooks: same transaction as the swap
  }

  private markReady(
    id: string,
    { chunkCount, tokenCount, contentSha256, ocrPages, language, result }: ReadyIndex,
  ): void {
    // A ready document has no job left to run, and in SQLite its job is this row: ending it here
    // leaves the queue's settle nothing to write (one commit per document fewer).
    this.sql
      .get(
        `UPDATE documents SET status = 'ready', chunk_count = ?, token_count = ?, content_sha256 = ?, ocr_pages = ?,
           language = ?, content_type = coalesce(?, content_type), bytes = coalesce(?, bytes),
           input_text = NULL, fetch_url = NULL, error_code = NULL, error_message = NULL, updated_at = ?,
           job_state = 'done', lease_owner = NULL, lease_until = NULL, index_run = NULL
         WHERE id = ?`,
      )
      .run(
        chunkCount,
        tokenCount,
        contentSha256,
        ocrPages ?? null,
        language ?? null,
        storableNullable(result.contentType),
        result.bytes,
        this.now(),
        id,
      );
    if (language !== undefined) this.keyword.noteLanguage(id, language);
    this.outbox.emit('document.ready', id); // webhooks: same transaction as the status change
  }

  async markFailed(id: string, error: DocumentError, version?: number): Promise<boolean> {
    // A failed pending version leaves the current one answering; its error is the pending one's.
    return this.workWrite(
      version,
      `pending_status = 'failed', pending = json_set(pending, '$.error', json(@error)),
       input_text = NULL, fetch_url = NULL, updated_at = @now`,
      `status = 'failed', error_code = @code, error_message = @message,
       input_text = NULL, fetch_url = NULL, updated_at = @now`,
      { id, ...errorParams(error) },
      // webhooks: the event commits with the status change (a failed pending version changes no status)
      () => this.outbox.emit('document.failed', id),
    );
  }

  async attachBlob(
    id: string,
    blob: { blobKey: string; contentType: string; bytes: number },
    version?: number,
  ): Promise<boolean> {
    // The download lane's job ends here; the same row becomes a fresh job of the process lane
    // (the document stays `processing`: extraction follows).
    const nextJob = `fetch_url = NULL, updated_at = @now, job_state = 'pending', run_at = @now,
      lease_owner = NULL, lease_until = NULL, job_attempts = 0`;
    return this.workWrite(
      version,
      `pending = json_set(pending, '$.blob_key', @blobKey, '$.source.content_type', @contentType,
         '$.source.bytes', @bytes), ${nextJob}`,
      `blob_key = @blobKey, content_type = @contentType, bytes = @bytes, ${nextJob}`,
      { id, blobKey: blob.blobKey, contentType: storableText(blob.contentType), bytes: blob.bytes },
    );
  }

  async forgetBlob(id: string, blobKey: string): Promise<boolean> {
    const r = this.sql
      .get(`UPDATE documents SET blob_key = NULL WHERE id = ? AND blob_key = ? AND ${LIVE}`)
      .run(id, blobKey);
    return r.changes > 0;
  }

  async countPending(): Promise<number> {
    const row = this.sql
      .get<[], { n: number }>(
        `SELECT (SELECT count(*) FROM documents WHERE status IN ('queued', 'processing'))
              + (SELECT count(*) FROM documents WHERE pending_status IN ('queued', 'processing')) AS n`,
      )
      .get();
    return row?.n ?? 0;
  }

  async listStaleQueued(olderThan: Date, limit: number): Promise<(JobRef & { needsDownload: boolean })[]> {
    return this.sql
      .get<[number, number, number], { id: string; org_id: string; needs_download: number }>(
        `SELECT id, org_id, needs_download FROM (
           SELECT id, org_id, fetch_url IS NOT NULL AS needs_download, updated_at FROM documents
           WHERE status IN ('queued', 'processing') AND updated_at < ?
           UNION
           SELECT id, org_id, fetch_url IS NOT NULL AS needs_download, updated_at FROM documents
           WHERE pending_status IN ('queued', 'processing') AND updated_at < ?
         ) ORDER BY updated_at, id LIMIT ?`,
      )
      .all(olderThan.getTime(), olderThan.getTime(), Math.max(0, Math.floor(limit)))
      .map((r) => ({ documentId: r.id, orgId: r.org_id, needsDownload: r.needs_download === 1 }));
  }
}

function errorParams(error: DocumentError): { code: string; message: string; error: string } {
  const message = storableText(error.message);
  return { code: error.code, message, error: JSON.stringify({ code: error.code, message }) };
}

/** How an access list is stored: a JSON array, or NULL for none. */
function accessColumn(access: readonly string[] | null): string | null {
  return access === null ? null : JSON.stringify(access);
}

/** A row's partition and access list (stored as JSON text), as canSee reads them. */
function visibility(row: { partition: string; access: string | null }): {
  partition: string;
  access: string[] | null;
} {
  return { partition: row.partition, access: accessOfColumn(row.access) };
}
