// `docindex reindex`: rewrites a keyword index's words with the configured analysis
// (SEARCH_LANGUAGE), online. Each batch is one short transaction of the index's own; between
// batches the rewrite pauses as long as the batch took, so the processes serving the API never
// wait on it for more than one batch and get at least half of the database's write time.
import type { AnalysisState, KeywordIndex } from './ports.js';

export interface ReindexProgress {
  /** Chunks rewritten so far by this run. */
  rewritten: number;
}

export interface ReindexOptions {
  /** Chunks per transaction. */
  batchSize: number;
  onProgress?: (progress: ReindexProgress) => void;
  signal?: AbortSignal;
  /** Waits `ms` (injected so tests need not sleep). */
  pause?: (ms: number) => Promise<void>;
}

export interface ReindexReport {
  /** The analyses before the run. */
  before: AnalysisState;
  rewritten: number;
  /** false when the signal stopped the run first: the next run resumes where it stopped. */
  done: boolean;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function reindexSearch(index: KeywordIndex, options: ReindexOptions): Promise<ReindexReport> {
  const before = await index.analysisState();
  const pause = options.pause ?? sleep;
  let rewritten = 0;
  for (;;) {
    if (options.signal?.aborted) return { before, rewritten, done: false };
    const started = performance.now();
    const batch = await index.reindexBatch(options.batchSize);
    rewritten += batch.rewritten;
    options.onProgress?.({ rewritten });
    if (batch.done) return { before, rewritten, done: true };
    await pause(performance.now() - started);
  }
}
