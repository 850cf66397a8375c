// The partitions of an org (GET /v1/partitions) and their deletion. DELETE /v1/partitions/{name}
// only marks the partition (one row, so the answer is immediate and the mark survives a crash);
// purgeOnce, run by every worker process's reconciler loop, deletes the marked partitions'
// documents a slice at a time, each as DELETE /v1/documents/{id} does, and drops the mark once
// none is left. A purge cut off by a crash resumes at the next run: the mark is still there.
import type { DocumentService } from './documents.js';
import { ERRORS } from './errors.js';
import { canSee, type DocumentAccess, isPartitionName } from './partitions.js';
import type { Clock, DocumentStore } from './ports.js';
import type { PartitionSummary } from './types.js';

/** Documents deleted per step of a purge. */
const PURGE_SLICE = 100;
/** Marked partitions one purge run looks at, oldest mark first. */
const MARKS_PER_PURGE = 10;

export class PartitionService {
  constructor(
    private readonly store: DocumentStore,
    private readonly documents: DocumentService,
    private readonly clock: Clock,
  ) {}

  /** The partitions the key may see, by name. */
  async list(orgId: string, access: DocumentAccess): Promise<PartitionSummary[]> {
    const all = await this.store.listPartitions(orgId);
    const visible = access.partitions;
    return visible === null ? all : all.filter((p) => visible.includes(p.name));
  }

  /**
   * Marks the partition for deletion; its documents are purged in the background. 404 for a
   * partition that holds nothing (or that the key may not see: as another org's).
   */
  async delete(orgId: string, access: DocumentAccess, name: string): Promise<void> {
    const visible = isPartitionName(name) && canSee(access, { partition: name });
    // A partition may hold documents whose access lists the key's principals do not reach.
    if (visible && access.principals !== null) throw ERRORS.needsUnboundKey('partition deletion');
    if (!visible || !(await this.documents.partitionHolds(orgId, name))) {
      throw ERRORS.partitionNotFound(name);
    }
    await this.store.markPartitionDeleting(orgId, name, this.clock.now());
  }

  /**
   * Deletes up to `budget` documents of the partitions marked for deletion, oldest mark first,
   * and drops the marks of those left empty; how many documents it deleted.
   */
  async purgeOnce(budget = PURGE_SLICE * 10): Promise<number> {
    let deleted = 0;
    for (const { orgId, name } of await this.store.partitionsDeleting(MARKS_PER_PURGE)) {
      for (;;) {
        if (deleted >= budget) return deleted;
        const want = Math.min(PURGE_SLICE, budget - deleted);
        const found = await this.documents.deletePartitionSlice(orgId, name, want);
        deleted += found;
        if (found < want) {
          await this.store.unmarkPartitionDeleting(orgId, name);
          break;
        }
      }
    }
    return deleted;
  }
}
