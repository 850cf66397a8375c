// Committing what ingest accepted: new documents and new versions, each written in one
// transaction with the Idempotency-Key's answer, then handed to their queue (a queue hiccup after
// the commit is the reconciler's to repair, never a failure); and the backpressure check that
// refuses new work while too many documents wait.
import { ERRORS } from './errors.js';
import type {
  BlobStore,
  Clock,
  DocumentStore,
  IdempotencyKeyRef,
  IdempotentAnswer,
  JobQueue,
} from './ports.js';
import { noopTracer, type TraceParent, type Tracer } from './ports.js';
import type { NewDocument, NewVersion, StartedVersion, VersionsAsRead } from './types.js';

/** The 202 of an ingest: the documents accepted (new ones, or new versions of ones with the external_id). */
export interface IngestAck {
  status: 'accepted';
  org_id: string;
  queued: number;
  document_ids: string[];
}

/** The 202 of PUT /v1/documents/{id}/content and POST /v1/documents/{id}/reprocess. */
export interface VersionAck {
  status: 'accepted';
  org_id: string;
  document_id: string;
  /** The version now on its way (GET /v1/documents/{id} shows it as `pending_version`). */
  version: number;
}

export interface IngestCommitDeps {
  documents: DocumentStore;
  queue: JobQueue;
  /** Where URL documents go first: their download lane. */
  downloadQueue: JobQueue;
  blobs: BlobStore;
  clock: Clock;
  maxQueuedDocuments: number;
  /** Called when the enqueue after a commit fails (the reconciler will retry it). */
  onEnqueueError?: (error: unknown) => void;
  /** Spans of each commit; each job carries the commit's trace context. */
  tracer?: Tracer;
}

/** How long a count of the waiting documents stands for backpressure (on the injected clock). */
const PENDING_COUNT_TTL_MS = 1_000;

export class IngestCommitter {
  private pendingCache: { count: number; at: number } | null = null;

  private readonly tracer: Tracer;

  constructor(private readonly deps: IngestCommitDeps) {
    this.tracer = deps.tracer ?? noopTracer;
  }

  /** Writes a new version of a document (with `asRead`: only if it is still as read), then queues it. */
  async startVersion(
    orgId: string,
    id: string,
    version: Omit<NewVersion, 'at' | 'metadata'>,
    /** Reprocess: start only if the document is still as read and nothing is on its way. */
    asRead?: VersionsAsRead,
    key?: IdempotencyKeyRef,
    parent?: TraceParent,
  ): Promise<VersionAck> {
    return this.tracer.inSpan(
      'docindex.ingest.commit',
      {
        parent,
        attributes: () => ({ 'docindex.org_id': orgId, 'docindex.document.id': id, 'docindex.documents': 1 }),
      },
      async (span) => {
        const traceparent = span.traceparent();
        const full: NewVersion = {
          ...version,
          metadata: null,
          at: this.deps.clock.now(),
          ...(traceparent === null ? {} : { traceparent }),
        };
        const ack = (started: StartedVersion): VersionAck => ({
          status: 'accepted',
          org_id: orgId,
          document_id: id,
          version: started.version,
        });
        const answer = key && answerOf(key, ack);
        const started =
          asRead === undefined
            ? await this.deps.documents.startVersion(orgId, id, full, answer)
            : await this.deps.documents.startVersionIfSettled(orgId, id, full, asRead, answer);
        if (!started) throw ERRORS.documentNotFound(id);
        if (started === 'in_flight') {
          throw ERRORS.cannotReprocess(id, 'another version was started meanwhile; retry once it is ready');
        }
        span.setAttributes(() => ({ 'docindex.document.version': started.version }));
        await this.afterStarted([{ started, download: version.fetchUrl !== null }], orgId, traceparent);
        return ack(started);
      },
    );
  }

  /** Queues the new versions' jobs and deletes the blobs they made unused. */
  private async afterStarted(
    versions: { started: StartedVersion; download: boolean }[],
    orgId: string,
    traceparent: string | null,
  ) {
    if (this.pendingCache) this.pendingCache.count += versions.length;
    const traced = traceparent === null ? {} : { traceparent };
    for (const { started } of versions) {
      for (const key of started.discardedBlobKeys) await this.deps.blobs.delete(key);
    }
    try {
      for (const download of [false, true]) {
        const refs = versions
          .filter((v) => v.download === download)
          .map((v) => ({ documentId: v.started.id, orgId, ...traced }));
        const queue = download ? this.deps.downloadQueue : this.deps.queue;
        // Table queues: startVersion made the row a pending job already; this only wakes them.
        if (refs.length > 0) await queue.enqueue(refs, { version: true });
      }
    } catch (error) {
      this.deps.onEnqueueError?.(error);
    }
  }

  /**
   * Every row is written in one transaction, in order. A row with an external_id the org's
   * document already has becomes that document's new version (the ack then names that
   * document), so the same external_id twice in one request gives versions 1 and 2 (or n+1 and
   * n+2).
   */
  async commit(
    orgId: string,
    rows: NewDocument[],
    queue: JobQueue,
    key: IdempotencyKeyRef | undefined,
    parent: TraceParent,
  ): Promise<IngestAck> {
    if (this.tracer === noopTracer) return this.commitNow(orgId, rows, queue, key, null);
    return this.tracer.inSpan(
      'docindex.ingest.commit',
      {
        parent,
        attributes: () => ({
          'docindex.org_id': orgId,
          'docindex.documents': rows.length,
          'docindex.queue.lane': queue === this.deps.downloadQueue ? 'download' : 'process',
        }),
      },
      async (span) => {
        const traceparent = span.traceparent();
        const ack = await this.commitNow(orgId, rows, queue, key, traceparent);
        span.setAttributes(() => ({ 'docindex.document.ids': ack.document_ids }));
        return ack;
      },
    );
  }

  private async commitNow(
    orgId: string,
    rows: NewDocument[],
    queue: JobQueue,
    key: IdempotencyKeyRef | undefined,
    traceparent: string | null,
  ): Promise<IngestAck> {
    const ack = (started: StartedVersion[]): IngestAck => ({
      status: 'accepted',
      org_id: orgId,
      queued: rows.length,
      document_ids: started.map((v) => v.id),
    });
    // A partition being deleted takes nothing new: createDocuments refuses it (partition_deleting).
    const traced = traceparent === null ? rows : rows.map((row) => ({ ...row, traceparent }));
    const started = await this.deps.documents.createDocuments(traced, key && answerOf(key, ack));
    const created = started.filter((v) => v.created).map((v) => v.id);
    if (this.pendingCache) this.pendingCache.count += created.length;
    try {
      if (created.length > 0) {
        await queue.enqueue(
          created.map((documentId) => ({
            documentId,
            orgId,
            ...(traceparent === null ? {} : { traceparent }),
          })),
          { created: true },
        );
      }
    } catch (error) {
      this.deps.onEnqueueError?.(error);
    }
    const versioned = started.filter((v) => !v.created);
    if (versioned.length > 0) {
      await this.afterStarted(
        versioned.map((v) => ({ started: v, download: queue === this.deps.downloadQueue })),
        orgId,
        traceparent,
      );
    }
    return ack(started);
  }

  async checkBackpressure(incoming: number): Promise<void> {
    const now = this.deps.clock.now().getTime();
    if (!this.pendingCache || now - this.pendingCache.at > PENDING_COUNT_TTL_MS) {
      this.pendingCache = { count: await this.deps.documents.countPending(), at: now };
    }
    if (this.pendingCache.count + incoming > this.deps.maxQueuedDocuments) {
      throw ERRORS.overloaded(5);
    }
  }
}

/** The 202 a write answers an Idempotency-Key with, rendered from what the write did. */
function answerOf<T>(key: IdempotencyKeyRef, ack: (outcome: T) => unknown): IdempotentAnswer<T> {
  return { ...key, status: 202, body: (outcome) => JSON.stringify(ack(outcome)) };
}
