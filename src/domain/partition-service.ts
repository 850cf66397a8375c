// The partitions of an org (GET /v1/partitions) and their deletion. DELETE /v1/partitions/{name}
// only marks the partition (one row, so the answer is immediate and the mark survives a crash).
// The mark is also the purge's job on the partition-purge queue: a worker process claims it (one
// process per partition at a time, under the job's lease), deletes the partition's documents a
// slice at a time, each as DELETE /v1/documents/{id} does, and drops the mark once none is left.
// A purge whose process died is claimed again when its lease lapses: the mark is still there.
import type { DocumentService } from './documents.js';
import { ERRORS } from './errors.js';
import { canSee, type DocumentAccess, isPartitionName } from './partitions.js';
import type { Clock, DocumentStore, JobHandler } from './ports.js';
import type { PartitionSummary } from './types.js';

/** Documents deleted per step of a purge. */
const PURGE_SLICE = 100;

export class PartitionService {
  constructor(
    private readonly store: DocumentStore,
    private readonly documents: DocumentService,
    private readonly clock: Clock,
    /** Documents deleted per step of a purge. */
    private readonly purgeSlice = PURGE_SLICE,
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
   * The partition-purge queue's handler: purges the partition the job's mark names (nothing when
   * the mark is gone already).
   */
  readonly purgeJob: JobHandler = async (job) => {
    const marked = await this.store.markedPartition(job.documentId);
    if (marked !== null) await this.purge(marked.orgId, marked.name, job.signal);
  };

  /**
   * Deletes the marked partition's documents a slice at a time until none is left, then drops the
   * mark; how many it deleted. Stops, mark kept, when `signal` aborts (the job's lease was lost or
   * its process stops): the next claim goes on from what is left.
   */
  async purge(orgId: string, name: string, signal?: AbortSignal): Promise<number> {
    let deleted = 0;
    for (;;) {
      signal?.throwIfAborted();
      const found = await this.documents.deletePartitionSlice(orgId, name, this.purgeSlice);
      deleted += found;
      if (found < this.purgeSlice) break;
    }
    await this.store.unmarkPartitionDeleting(orgId, name);
    return deleted;
  }
}
