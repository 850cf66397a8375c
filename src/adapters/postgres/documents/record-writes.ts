// PgDocumentStore's record writes: new documents (an ingest's external_id already known becomes
// that document's new version), new versions of a document, and a change of its metadata or
// access list. A write to an existing row locks it first (FOR NO KEY UPDATE), so concurrent writes
// of one document apply one after the other without waiting for a running index write.
import { ERRORS } from '../../../domain/errors.js';
import { cleanMetadata } from '../../../domain/metadata.js';
import { canSee, DEFAULT_PARTITION } from '../../../domain/partitions.js';
import type { Clock, DocumentChange, IdempotentAnswer } from '../../../domain/ports.js';
import { cleanText } from '../../../domain/text.js';
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
  pendingSpecOf,
  RECORD_COLUMNS,
  versionOfIngest,
} from '../../sql-rows/document-row.js';
import type { PgDatabase, Queryable } from '../database.js';
import { completeAnswer } from '../idempotency-store.js';
import {
  type DocumentRow,
  LIVE,
  type PgDocumentContext,
  storable,
  toRecord,
  type WorkRow,
} from './context.js';

export class PgRecordWrites {
  private readonly db: PgDatabase;
  private readonly clock: Clock;
  private readonly documents: string;
  private readonly idempotencyKeys: string;
  private readonly initialJobState: 'pending' | 'done';

  constructor(context: PgDocumentContext) {
    this.db = context.db;
    this.clock = context.clock;
    this.documents = context.documents;
    this.idempotencyKeys = context.db.table('idempotency_keys');
    this.initialJobState = context.initialJobState;
  }

  async createDocuments(
    docs: NewDocument[],
    answer?: IdempotentAnswer<StartedVersion[]>,
  ): Promise<StartedVersion[]> {
    const created = (d: NewDocument): StartedVersion => ({
      id: d.id,
      version: 1,
      created: true,
      discardedBlobKeys: [],
    });
    if (answer === undefined && docs.every((d) => !d.externalId)) {
      await this.insertDocuments(this.db, docs, '');
      return docs.map(created);
    }
    return this.db.transaction(async (tx) => {
      const started: StartedVersion[] = [];
      await this.insertDocuments(
        tx,
        docs.filter((d) => !d.externalId),
        '',
      );
      // External ids in one order (a stable sort keeps one id's rows in the request's order), so
      // two requests naming the same ids cannot each wait for a row the other holds.
      const keyed = docs
        .flatMap((d, at) => (d.externalId ? [{ doc: { ...d, externalId: d.externalId }, at }] : []))
        .sort((a, b) =>
          a.doc.externalId < b.doc.externalId ? -1 : a.doc.externalId > b.doc.externalId ? 1 : 0,
        );
      for (const { doc, at } of keyed) started[at] = await this.createOrVersionIn(tx, doc);
      const outcome = docs.map((d, at) => started[at] ?? created(d));
      if (answer) await completeAnswer(tx, this.idempotencyKeys, answer, answer.body(outcome));
      return outcome;
    });
  }

  private async createOrVersionIn(
    tx: Queryable,
    doc: NewDocument & { externalId: string },
  ): Promise<StartedVersion> {
    // Of two ingests racing on one new external_id, the second's insert waits for the first's
    // commit and then does nothing; its SELECT (a new snapshot) finds the first's row and
    // starts version 2 of it. Both acks carry the same id.
    const inserted = await this.insertDocuments(
      tx,
      [doc],
      'ON CONFLICT (org_id, external_id) WHERE external_id IS NOT NULL DO NOTHING',
    );
    if (inserted > 0) return { id: doc.id, version: 1, created: true, discardedBlobKeys: [] };
    // Held from here to the commit (NO KEY, as startVersionIn takes it), so the checks below see
    // the partition and access list the new version is written over.
    const { rows } = await tx.query<{ id: string; partition: string; access: string[] | null }>(
      `SELECT id, partition, access FROM ${this.documents}
       WHERE org_id = $1 AND external_id = $2 AND ${LIVE} FOR NO KEY UPDATE`,
      [storable(doc.orgId), storable(doc.externalId)],
    );
    const existing = rows[0];
    const partition = doc.partition ?? DEFAULT_PARTITION;
    if (existing && existing.partition !== partition) {
      throw ERRORS.partitionMismatch(doc.externalId, partition);
    }
    if (existing && doc.seenBy && !canSee(doc.seenBy, existing)) {
      throw ERRORS.externalIdNotVisible(doc.externalId);
    }
    const started = existing && (await this.startVersionIn(tx, doc.orgId, existing.id, versionOfIngest(doc)));
    if (!started || started === 'in_flight') {
      throw new Error(`external_id ${doc.externalId} conflicted but its document is gone`);
    }
    return started;
  }

  async startVersion(
    orgId: string,
    id: string,
    version: NewVersion,
    answer?: IdempotentAnswer<StartedVersion>,
  ): Promise<StartedVersion | null> {
    const started = await this.db.transaction((tx) =>
      this.startAnswered(tx, orgId, id, version, undefined, answer),
    );
    return started === 'in_flight' ? null : started;
  }

  startVersionIfSettled(
    orgId: string,
    id: string,
    version: NewVersion,
    asRead: VersionsAsRead,
    answer?: IdempotentAnswer<StartedVersion>,
  ): Promise<StartedVersion | 'in_flight' | null> {
    return this.db.transaction((tx) => this.startAnswered(tx, orgId, id, version, asRead, answer));
  }

  private async startAnswered(
    tx: Queryable,
    orgId: string,
    id: string,
    version: NewVersion,
    asRead: VersionsAsRead | undefined,
    answer: IdempotentAnswer<StartedVersion> | undefined,
  ): Promise<StartedVersion | 'in_flight' | null> {
    const started = await this.startVersionIn(tx, orgId, id, version, asRead);
    if (answer && started && started !== 'in_flight') {
      await completeAnswer(tx, this.idempotencyKeys, answer, answer.body(started));
    }
    return started;
  }

  private async startVersionIn(
    tx: Queryable,
    orgId: string,
    id: string,
    v: NewVersion,
    asRead?: VersionsAsRead,
  ): Promise<StartedVersion | 'in_flight' | null> {
    // NO KEY UPDATE: orders this against another new version or a metadata change, but not
    // against a running saveIndex (which holds KEY SHARE until its commit and checks the version
    // again before it).
    const { rows } = await tx.query<WorkRow & { status: string; partition: string; access: string[] | null }>(
      `SELECT org_id, status, version, pending_version, pending_status, pending, blob_key, partition, access
       FROM ${this.documents} WHERE id = $1 AND org_id = $2 AND ${LIVE} FOR NO KEY UPDATE`,
      [storable(id), storable(orgId)],
    );
    const row = rows[0];
    if (!row || (v.seenBy && !canSee(v.seenBy, row))) return null;
    // Checked under the row lock: of concurrent conditional starts, one sees the others' result.
    if (!mayStartVersion(row, asRead)) return 'in_flight';
    const discarded: string[] = [];
    // With PgTableQueue the job starts afresh: a run still going for an older version loses its
    // lease. Its writes are refused anyway (their version is stale).
    const freshJob =
      this.initialJobState === 'pending'
        ? `job_state = 'pending', run_at = now(), lease_owner = NULL, lease_until = NULL, job_attempts = 0,`
        : '';
    const common = [
      storable(id),
      v.at,
      v.metadata === null ? null : JSON.stringify(cleanMetadata(v.metadata)),
      storable(v.text),
      storable(v.fetchUrl),
    ];
    // `traceparent`: the number of the parameter that holds the job's trace context.
    // The access list changes at once, as the metadata does (then the parameter after it);
    // absent keeps the document's.
    const set = (traceparent: number) => `${freshJob} attempts = 0, updated_at = $2,
      metadata = coalesce($3::jsonb, metadata), input_text = $4, fetch_url = $5,
      job_traceparent = $${traceparent}${v.access === undefined ? '' : `, access = $${traceparent + 1}::text[]`}`;
    const access = v.access === undefined ? [] : [accessColumn(v.access)];
    if (row.status === 'ready') {
      const version = Math.max(row.version, row.pending_version ?? 0) + 1;
      const superseded = row.pending?.blob_key ?? null;
      if (superseded !== null && superseded !== row.blob_key && superseded !== v.blobKey) {
        discarded.push(superseded);
      }
      await tx.query(
        `UPDATE ${this.documents} SET pending_version = $6, pending_status = 'queued', pending = $7::jsonb, ${set(8)}
         WHERE id = $1`,
        [...common, version, JSON.stringify(pendingSpecOf(v)), v.traceparent ?? null, ...access],
      );
      return { id, version, created: false, discardedBlobKeys: discarded };
    }
    // Nothing answers yet (queued, processing or failed): the new version takes the old one's place.
    const version = row.version + 1;
    if (row.blob_key !== null && row.blob_key !== v.blobKey) discarded.push(row.blob_key);
    await tx.query(
      `UPDATE ${this.documents} SET version = $6, status = 'queued', source_type = $7, filename = $8,
         source_url = $9, content_type = $10, bytes = $11, chunk_size = $12, chunk_overlap = $13,
         blob_key = $14, chunk_count = NULL, token_count = NULL, content_sha256 = NULL,
         error_code = NULL, error_message = NULL, pending_version = NULL, pending_status = NULL,
         pending = NULL, requested_language = $15, ${set(16)}
       WHERE id = $1`,
      [
        ...common,
        version,
        v.source.type,
        storable(v.source.filename),
        storable(v.source.url),
        storable(v.source.content_type),
        v.source.bytes,
        v.chunkSize,
        v.chunkOverlap,
        storable(v.blobKey),
        v.language ?? null,
        v.traceparent ?? null,
        ...access,
      ],
    );
    return { id, version, created: false, discardedBlobKeys: discarded };
  }

  /** One multi-row INSERT (atomic: all rows or none); how many rows it inserted. */
  /**
   * Inserts the rows in one statement, unless a row's partition is marked for deletion: then
   * nothing is written and it throws partition_deleting. The mark is read by the insert's own
   * statement, so accepting a document costs no round trip of its own. How many rows it inserted.
   */
  private async insertDocuments(db: Queryable, docs: NewDocument[], onConflict: string): Promise<number> {
    if (docs.length === 0) return 0;
    const PER_ROW = 21;
    const values: string[] = [];
    const params: unknown[] = [];
    docs.forEach((d, i) => {
      const p = (n: number, type: string) => `$${i * PER_ROW + n}::${type}`;
      // Typed: a VALUES list under a SELECT does not take the target columns' types.
      values.push(
        `(${p(1, 'text')}, ${p(2, 'text')}, 'queued', ${p(3, 'text')}, ${p(4, 'text')}, ${p(5, 'text')},
          ${p(6, 'text')}, ${p(7, 'bigint')}, ${p(8, 'jsonb')}, ${p(9, 'integer')}, ${p(10, 'integer')},
          ${p(11, 'text')}, 0, ${p(12, 'timestamptz')}, ${p(12, 'timestamptz')}, ${p(13, 'text')},
          ${p(14, 'text')}, ${p(15, 'text')}, ${p(16, 'text')}, clock_timestamp(), 0, ${p(17, 'text')},
          ${p(18, 'text')}, ${p(19, 'text')}, ${p(20, 'text')}, ${p(21, 'text[]')})`,
      );
      params.push(
        d.id,
        d.orgId,
        d.source.type,
        storable(d.source.filename),
        storable(d.source.url),
        storable(d.source.content_type),
        d.source.bytes,
        JSON.stringify(cleanMetadata(d.metadata)),
        d.chunkSize,
        d.chunkOverlap,
        storable(d.tokenizer),
        d.createdAt,
        storable(d.text),
        storable(d.blobKey),
        storable(d.fetchUrl),
        this.initialJobState,
        d.externalId === undefined || d.externalId === null ? null : storable(d.externalId),
        d.language ?? null,
        d.traceparent ?? null,
        d.partition ?? DEFAULT_PARTITION,
        accessColumn(d.access ?? null),
      );
    });
    const pairs = docs.length * PER_ROW + 1;
    params.push(
      docs.map((d) => d.orgId),
      docs.map((d) => d.partition ?? DEFAULT_PARTITION),
    );
    const { rows } = await db.query<{ refused: string | null; inserted: number }>(
      `WITH refused AS (
         SELECT name FROM ${this.db.table('partition_deletions')}
         WHERE (org_id, name) IN (SELECT * FROM unnest($${pairs}::text[], $${pairs + 1}::text[]))
       ), inserted AS (
         INSERT INTO ${this.documents} (
           id, org_id, status, source_type, filename, source_url, content_type, bytes, metadata,
           chunk_size, chunk_overlap, tokenizer, attempts, created_at, updated_at,
           input_text, blob_key, fetch_url, job_state, run_at, job_attempts, external_id, requested_language,
           job_traceparent, partition, access
         ) SELECT * FROM (VALUES ${values.join(', ')}) AS v WHERE NOT EXISTS (SELECT FROM refused)
         ${onConflict} RETURNING 1
       )
       SELECT (SELECT min(name) FROM refused) AS refused, (SELECT count(*) FROM inserted)::int AS inserted`,
      params,
    );
    const refused = rows[0]?.refused ?? null;
    if (refused !== null) throw ERRORS.partitionDeleting(refused);
    return rows[0]?.inserted ?? 0;
  }

  async updateMetadata(
    orgId: string,
    id: string,
    update: (current: Metadata) => Metadata,
    change: DocumentChange = {},
  ): Promise<DocumentRecord | null> {
    return this.db.transaction(async (tx) => {
      // The row lock makes concurrent updates of one document apply one after the other (NO KEY:
      // a running index write need not end first), and the access check below see the list the
      // update replaces.
      const { rows } = await tx.query<{ metadata: Metadata; partition: string; access: string[] | null }>(
        `SELECT metadata, partition, access FROM ${this.documents}
         WHERE id = $1 AND org_id = $2 AND ${LIVE} FOR NO KEY UPDATE`,
        [storable(id), storable(orgId)],
      );
      const current = rows[0];
      if (!current) return null;
      if (change.seenBy && !canSee(change.seenBy, current)) return null;
      const metadata = cleanMetadata(update(current.metadata));
      const access = change.access === undefined ? current.access : accessColumn(change.access);
      const updated = await tx.query<DocumentRow>(
        `UPDATE ${this.documents} SET metadata = $1, access = $2::text[], updated_at = $3
         WHERE id = $4 RETURNING ${RECORD_COLUMNS}`,
        [JSON.stringify(metadata), access, this.clock.now(), storable(id)],
      );
      return updated.rows[0] ? toRecord(updated.rows[0]) : null;
    });
  }
}

/** How an access list is stored: a text[] of principals (NUL bytes cleaned), or NULL for none. */
function accessColumn(access: readonly string[] | null): string[] | null {
  return access === null ? null : access.map((p) => cleanText(p));
}
