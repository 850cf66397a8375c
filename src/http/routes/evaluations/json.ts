// The JSON shapes of evaluations (docs/API.md, "Evaluations"): figures are rounded to 4 decimals
// (latencies to 0.1 ms) for reading; the per-query part only for GET /v1/evaluations/{id}.
import type {
  EvaluationListing,
  EvaluationRecord,
  JudgedRef,
  RunSettings,
  RunSummary,
} from '../../../domain/evaluations.js';

const round = (value: number, places = 4) => Number(value.toFixed(places));
const roundMs = (value: number | null) => (value === null ? null : round(value, 1));

function refJson(ref: JudgedRef) {
  return ref.documentId !== undefined ? { document_id: ref.documentId } : { external_id: ref.externalId };
}

function runJson(settings: RunSettings, summary: RunSummary | undefined) {
  const m = summary?.metrics;
  return {
    mode: settings.mode,
    rerank: settings.rerank,
    semantic_weight: settings.semanticWeight,
    ndcg_at_10: m ? round(m.ndcgAt10) : null,
    recall_at_k: m ? round(m.recallAtK) : null,
    mrr_at_10: m ? round(m.mrrAt10) : null,
    latency_ms: m ? { p50: roundMs(m.latencyMs.p50), p95: roundMs(m.latencyMs.p95) } : null,
    degraded_queries: m ? m.degradedQueries : null,
  };
}

/** The list's shape: each run's figures, no per-query part. */
export function toEvaluationSummaryJson(e: EvaluationListing) {
  return {
    id: e.id,
    name: e.name,
    status: e.status,
    top_k: e.topK,
    query_count: e.queryCount,
    queries_evaluated: e.summary?.[0]?.metrics.evaluatedQueries ?? null,
    error: e.error,
    created_at: e.createdAt.toISOString(),
    started_at: e.startedAt?.toISOString() ?? null,
    finished_at: e.finishedAt?.toISOString() ?? null,
    runs: e.runs.map((settings, i) => runJson(settings, e.summary?.[i])),
  };
}

/** GET /v1/evaluations/{id}: the summary with each query's figures and ranks, once done. */
export function toEvaluationJson(e: EvaluationRecord) {
  const summary = toEvaluationSummaryJson(e);
  if (e.report === null) return summary;
  const report = e.report;
  return {
    ...summary,
    runs: summary.runs.map((run, r) => ({
      ...run,
      queries: (report.perRun[r] ?? []).flatMap((o, index) =>
        o === null
          ? []
          : [
              {
                index,
                ndcg_at_10: round(o.ndcgAt10),
                recall_at_k: round(o.recallAtK),
                mrr_at_10: round(o.mrrAt10),
                latency_ms: round(o.latencyMs, 1),
                degraded: o.degraded,
                ranks: o.ranks.map((k) => ({
                  document_id: k.documentId,
                  external_id: k.externalId,
                  grade: k.grade,
                  rank: k.rank,
                })),
              },
            ],
      ),
    })),
    queries: report.queries.map((note, index) => ({
      index,
      query: e.queries[index]?.query ?? '',
      evaluated: note.evaluated,
      unknown: note.unknown.map(refJson),
    })),
  };
}
