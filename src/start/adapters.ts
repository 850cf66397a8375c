// What a storage setup (single-process SQLite in runtime.ts, or scale-out PostgreSQL and Redis in
// scale-out.ts) gives the runtime: one adapter per port. Its own module so that both setups
// name it without importing each other.

import type { EvaluationStore } from '../domain/evaluations.js';
import type {
  BlobStore,
  DocumentStore,
  IdempotencyStore,
  JobQueue,
  KeywordIndex,
  OrgStore,
  RateLimiter,
  UsageStore,
  VectorSearch,
  VectorStageStore,
} from '../domain/ports.js';
import type { SourceStore } from '../domain/sources.js';
import type { WebhookStore } from '../domain/webhooks.js';
import type { OrgRequestScope, ReadinessCheck } from '../http/deps.js';

export interface Adapters {
  orgs: OrgStore;
  documents: DocumentStore;
  /** The keyword index the documents' saveIndex writes. */
  keyword: KeywordIndex;
  /**
   * The chunk vectors queries search. Both setups hand the same object as `vectorStageStore`
   * (each backend's vector index implements both); a search kept elsewhere would go here alone.
   */
  vectorSearch: VectorSearch;
  /** Each document's vector stage and the vectors it writes, in the records' database. */
  vectorStageStore: VectorStageStore;
  usage: UsageStore;
  /** The process lane: extraction, chunking, indexing. */
  queue: JobQueue;
  /** The download lane for URL documents, so downloads never wait behind extraction. */
  downloadQueue: JobQueue;
  rateLimiter: RateLimiter;
  blobs: BlobStore;
  idempotency: IdempotencyStore;
  /** Evaluations: requests and results. */
  evaluations: EvaluationStore;
  /** The evaluations' jobs (their rows, on the lease-queue engine in every deployment). */
  evaluationQueue: JobQueue;
  /** Webhook endpoints, the outbox (written by `documents`) and the delivery log. */
  webhooks: WebhookStore;
  /** Sources, their items and runs. */
  sources: SourceStore;
  /** Source runs: their rows are the jobs, on the lease-queue engine in both setups. */
  sourceQueue: JobQueue;
  /**
   * Partition purges: each partition's mark for deletion is the job, on the lease-queue engine in
   * both setups, so one process purges a partition at a time.
   */
  partitionPurgeQueue: JobQueue;
  readiness: ReadinessCheck[];
  /** Runs an authenticated request as its org's (scale-out: the org's share of the database pool). */
  requestScope?: OrgRequestScope;
  close(): Promise<void>;
}

/**
 * The partition-purge queue's options in both setups: a purge that fails is tried again, a minute
 * apart at most, for as long as its mark stands (a partition left `deleting` for good would refuse
 * ingest for good); a worker looks for new marks once a second.
 */
export const PURGE_QUEUE_OPTIONS = { maxAttempts: Number.MAX_SAFE_INTEGER, pollMs: 1000 } as const;
