// Runs an evaluation's job: resolves its judged documents in the org, sends every query of every
// run through QueryService exactly as POST /v1/query would (same ranking code; the org's
// per-minute rate limit is taken for each query, and waited for when spent, but usage is not
// counted), scores each run and stores the results. A run is all or nothing: a job cut off (a
// crash, a lost lease) runs again from the start, and one that cannot finish within its attempts
// ends `failed`, never `running` for good.

import { setImmediate, setTimeout as sleep } from 'node:timers/promises';
import { ApiError } from './errors.js';
import {
  type EvaluationQuery,
  type EvaluationRecord,
  type EvaluationReport,
  type EvaluationStore,
  type JudgedRef,
  METRIC_CUTOFF,
  type QueryNote,
  type QueryRunOutcome,
  type RunSettings,
  type RunSummary,
} from './evaluations.js';
import { ALL_PARTITIONS } from './partitions.js';
import type { Clock, DocumentStore, JobContext, OrgStore, RateLimiter } from './ports.js';
import type { QueryService } from './query.js';
import {
  mean,
  ndcgAt,
  percentile,
  ranksOf,
  recallAt,
  reciprocalRankAt,
  trecOrder,
} from './retrieval-metrics.js';

/** document_ids or external_ids looked up per read of the document store. */
const ID_BATCH = 100;

/** A query's judgements once its references are resolved to the org's documents. */
interface ResolvedQuery {
  query: string;
  /** Document id → grade (the highest, when two references name the same document). */
  judgements: Map<string, number>;
  /** Document id → its external_id, for the report. */
  externalIds: Map<string, string>;
  note: QueryNote;
}

export interface EvaluationRunnerDeps {
  store: EvaluationStore;
  documents: DocumentStore;
  orgs: OrgStore;
  query: QueryService;
  rateLimiter: RateLimiter;
  clock: Clock;
  /** Called with each evaluation that ends failed, for the log. */
  onFailed?: (evaluationId: string, orgId: string, error: { code: string; message: string }) => void;
}

export class EvaluationRunner {
  constructor(private readonly deps: EvaluationRunnerDeps) {}

  /** The job handler: the job's `documentId` is the evaluation's id. */
  handle = async (job: JobContext): Promise<void> => {
    const { store, clock } = this.deps;
    const evaluation = await store.load(job.documentId);
    if (!evaluation || evaluation.status === 'done' || evaluation.status === 'failed') return;
    if (job.attempt > job.maxAttempts) {
      // Claimed again after its last attempt died with its process: nothing is left to retry.
      await this.fail(evaluation, 'interrupted', 'the evaluation was interrupted on each of its attempts');
      return;
    }
    if (!(await store.markRunning(evaluation.id, clock.now()))) return;
    try {
      const { summary, report } = await this.evaluate(evaluation, job.signal);
      await store.complete(evaluation.id, summary, report, clock.now());
    } catch (error) {
      // Shut down or lease lost: the job goes back to the queue and runs again from the start.
      if (job.signal.aborted) throw error;
      // A query the service refuses (a provider removed since the evaluation was made) will not
      // succeed on a retry.
      if (error instanceof ApiError && error.status < 500) {
        await this.fail(evaluation, error.code, error.detail);
        return;
      }
      if (job.attempt >= job.maxAttempts) {
        const code = error instanceof ApiError ? error.code : 'internal';
        const message = error instanceof ApiError ? error.detail : 'the evaluation could not be run';
        await this.fail(evaluation, code, message);
        return;
      }
      throw error;
    }
  };

  private async fail(evaluation: EvaluationRecord, code: string, message: string): Promise<void> {
    await this.deps.store.fail(evaluation.id, { code, message }, this.deps.clock.now());
    this.deps.onFailed?.(evaluation.id, evaluation.orgId, { code, message });
  }

  private async evaluate(
    evaluation: EvaluationRecord,
    signal: AbortSignal,
  ): Promise<{ summary: RunSummary[]; report: EvaluationReport }> {
    // The org's rate limit as the run starts: read once, not once per query.
    const org = await this.deps.orgs.getOrg(evaluation.orgId);
    if (!org) throw new ApiError('not_found', 'the organisation no longer exists');
    const limit = { key: `org:${org.id}`, rpm: org.rateLimitRpm };
    const resolved = await this.resolve(evaluation.orgId, evaluation.queries);
    const depth = Math.max(evaluation.topK, METRIC_CUTOFF);
    const summary: RunSummary[] = [];
    const perRun: (QueryRunOutcome | null)[][] = [];
    for (const settings of evaluation.runs) {
      const outcomes: (QueryRunOutcome | null)[] = [];
      for (const q of resolved) {
        if (!q.note.evaluated) {
          outcomes.push(null);
          continue;
        }
        signal.throwIfAborted();
        // A turn of the event loop between queries: with a synchronous database (embedded SQLite)
        // a run of queries would otherwise keep the API's requests waiting until it ends.
        await setImmediate();
        await this.takeRateLimit(limit, signal);
        outcomes.push(await this.runQuery(evaluation, settings, q, depth));
      }
      const done = outcomes.filter((o): o is QueryRunOutcome => o !== null);
      const latencies = done.map((o) => o.latencyMs);
      summary.push({
        settings,
        metrics: {
          ndcgAt10: mean(done.map((o) => o.ndcgAt10)),
          recallAtK: mean(done.map((o) => o.recallAtK)),
          mrrAt10: mean(done.map((o) => o.mrrAt10)),
          latencyMs: { p50: percentile(latencies, 50), p95: percentile(latencies, 95) },
          degradedQueries: done.filter((o) => o.degraded).length,
          evaluatedQueries: done.length,
        },
      });
      perRun.push(outcomes);
    }
    return { summary, report: { queries: resolved.map((q) => q.note), perRun } };
  }

  private async runQuery(
    evaluation: EvaluationRecord,
    settings: RunSettings,
    q: ResolvedQuery,
    depth: number,
  ): Promise<QueryRunOutcome> {
    const started = performance.now();
    // Evaluations are made only by keys that see every partition (the routes refuse others).
    const answer = await this.deps.query.query(
      evaluation.orgId,
      ALL_PARTITIONS,
      {
        query: q.query,
        topK: depth,
        filter: undefined,
        documentIds: null,
        mode: settings.mode,
        rerank: settings.rerank,
        semanticWeight: settings.semanticWeight ?? undefined,
        // A document's rank is that of its best chunk: one chunk per document, `depth` documents.
        maxChunksPerDocument: 1,
      },
      { countUsage: false },
    );
    const latencyMs = performance.now() - started;
    const ranking = trecOrder(answer.hits.map((h) => ({ id: h.documentId, score: h.score })));
    const ranks = [...ranksOf(ranking.slice(0, evaluation.topK), q.judgements)].map(([documentId, rank]) => ({
      documentId,
      externalId: q.externalIds.get(documentId) ?? null,
      grade: q.judgements.get(documentId) ?? 0,
      rank,
    }));
    return {
      ndcgAt10: ndcgAt(METRIC_CUTOFF, ranking, q.judgements),
      recallAtK: recallAt(evaluation.topK, ranking, q.judgements),
      mrrAt10: reciprocalRankAt(METRIC_CUTOFF, ranking, q.judgements),
      latencyMs: Math.round(latencyMs * 1000) / 1000,
      degraded: answer.degraded,
      ranks,
    };
  }

  /**
   * One unit of the org's per-minute rate limit, as any request takes: when it is spent the
   * evaluation waits for the next window rather than failing, and the org's other requests share it.
   */
  private async takeRateLimit(limit: { key: string; rpm: number }, signal: AbortSignal): Promise<void> {
    for (;;) {
      const decision = await this.deps.rateLimiter.consume(limit.key, limit.rpm);
      if (decision.allowed) return;
      await sleep(decision.resetSeconds * 1000, undefined, { signal });
    }
  }

  /** Each query's references as the org's document ids; unknown ones noted and left out. */
  private async resolve(orgId: string, queries: readonly EvaluationQuery[]): Promise<ResolvedQuery[]> {
    const { documents } = this.deps;
    const ids = [
      ...new Set(
        queries.flatMap((q) =>
          q.relevant.flatMap((r) => (r.ref.documentId === undefined ? [] : [r.ref.documentId])),
        ),
      ),
    ];
    /** Known document id → its external_id (null when it has none). */
    const knownIds = new Map<string, string | null>();
    for (let i = 0; i < ids.length; i += ID_BATCH) {
      const batch = ids.slice(i, i + ID_BATCH);
      const found = await documents.listDocuments({
        orgId,
        limit: batch.length,
        after: null,
        status: null,
        ids: batch,
        contentSha256: null,
        filter: null,
      });
      for (const d of found) knownIds.set(d.id, d.externalId);
    }
    const externals = [
      ...new Set(
        queries.flatMap((q) =>
          q.relevant.flatMap((r) => (r.ref.externalId === undefined ? [] : [r.ref.externalId])),
        ),
      ),
    ];
    const byExternal = new Map<string, string>();
    for (let i = 0; i < externals.length; i += ID_BATCH) {
      const batch = externals.slice(i, i + ID_BATCH);
      const found = await documents.listDocuments({
        orgId,
        limit: batch.length,
        after: null,
        status: null,
        ids: null,
        contentSha256: null,
        externalIds: batch,
        filter: null,
      });
      for (const d of found) if (d.externalId !== null) byExternal.set(d.externalId, d.id);
    }
    return queries.map((q) => {
      const judgements = new Map<string, number>();
      const externalIds = new Map<string, string>();
      const unknown: JudgedRef[] = [];
      for (const { ref, grade } of q.relevant) {
        const id =
          ref.documentId !== undefined
            ? knownIds.has(ref.documentId)
              ? ref.documentId
              : null
            : (byExternal.get(ref.externalId) ?? null);
        if (id === null) {
          unknown.push(ref);
          continue;
        }
        const externalId = ref.externalId ?? knownIds.get(id) ?? null;
        if (externalId !== null) externalIds.set(id, externalId);
        judgements.set(id, Math.max(grade, judgements.get(id) ?? 0));
      }
      const evaluated = [...judgements.values()].some((g) => g > 0);
      return { query: q.query, judgements, externalIds, note: { unknown, evaluated } };
    });
  }
}
