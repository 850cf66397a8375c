// SqliteDocumentStore's index writes: saveIndex writes a job's chunks through the keyword index's
// writer and turns the document (or its pending version) ready. A small document is one shared
// transaction; a large one is written in slices, under a shadow row when a pending version is
// written beside the current one, and swapped in by one transaction at the end.
import { randomUUID } from 'node:crypto';
import { chunkBatchesOf } from '../../../domain/chunk-batches.js';
import type { SlicedKeywordIndexWriter } from '../../../domain/ports.js';
import type { ChunkRow, IndexResult, IndexTotals } from '../../../domain/types.js';
import type { PendingSpec } from '../../sql-rows/document-row.js';
import type { GroupCommit } from '../group-commit.js';
import type { StatementCache } from '../statements.js';
import { storableNullable } from '../text.js';
import type { SqliteWebhookOutbox } from '../webhook-store.js';
import type { SqliteDocumentContext } from './context.js';
import type { DocumentPurges } from './purges.js';
import { INDEX_DELETE_SLICE, LIVE, pendingActive, shadowOrg, type WorkRow, workVersion } from './rows.js';

/**
 * Chunk text written per transaction when a large document is indexed in slices: a few
 * milliseconds of inserts, so the event loop is never held long (bench/neighbour.bench.ts).
 */
export const INDEX_SLICE_CHARS = 128 * 1024;

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

export class IndexWrites {
  private readonly sql: StatementCache;
  private readonly commits: GroupCommit;
  private readonly now: () => number;
  private readonly keyword: SlicedKeywordIndexWriter<void, 'sync'>;
  private readonly outbox: SqliteWebhookOutbox;

  constructor(
    context: SqliteDocumentContext,
    /** Where chunks leave: retired chunks, shadows and left-overs go through the purges. */
    private readonly purges: DocumentPurges,
  ) {
    this.sql = context.sql;
    this.commits = context.commits;
    this.now = context.now;
    this.keyword = context.keyword;
    this.outbox = context.outbox;
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
        const leftovers = this.purges.handShadows(id);
        const holder = randomUUID();
        this.purges.insertHolder(holder, shadowOrg(id));
        return { shadow: holder, leftovers };
      });
      if (!began) return false;
      shadow = began.shadow;
      for (const leftover of began.leftovers) await this.purges.purgeHanded(leftover);
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
    this.purges.retireChunks(id);
    this.keyword.moveChunks(shadow, id);
    this.sql.get('DELETE FROM documents WHERE id = ?').run(shadow);
    this.markVersionReady(id, doc, ready);
    return true;
  }

  /** A shadow whose run stopped before its swap: its chunks go, a slice at a time. */
  private async discardShadow(id: string, shadow: string): Promise<void> {
    try {
      await this.commits.run(() => this.purges.handToPurge('id = ? AND org_id = ?', shadow, shadowOrg(id)));
      await this.purges.purgeHanded(shadow);
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
      this.purges.retireChunks(id);
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
}
