// Evaluations: a set of queries with judged documents, run through the query path once per run
// setting, and scored (nDCG@10, Recall@k, MRR@10: domain/retrieval-metrics.ts). This module holds
// the records, the EvaluationStore port and the service the routes call: it checks a request,
// stores it with its job (the evaluation's row is its job, on the lease-queue engine) and reads
// the results back. domain/evaluation-runner.ts runs the job.
import { ERRORS, type FieldError } from './errors.js';
import { prefixedId } from './ids-and-hashes.js';
import { decodePageCursor, encodePageCursor } from './page-cursor.js';
import type { Clock, JobQueue } from './ports.js';
import { DEFAULT_SEMANTIC_WEIGHT, type QueryMode } from './query.js';
import { cleanText } from './text.js';

export const EVALUATION_STATUSES = ['queued', 'running', 'done', 'failed'] as const;
export type EvaluationStatus = (typeof EVALUATION_STATUSES)[number];

/** The caps of one evaluation; each one broken is a 400 naming the field. */
export const EVALUATION_LIMITS = {
  queries: 1000,
  runs: 10,
  relevantPerQuery: 100,
  queryChars: 4096,
  nameChars: 200,
  maxGrade: 100,
  maxTopK: 100,
} as const;

export const DEFAULT_EVALUATION_TOP_K = 10;
/** nDCG and MRR are reported at this cutoff, whatever top_k is. */
export const METRIC_CUTOFF = 10;

/** A judged document, named by the service's id or by the caller's external_id. */
export type JudgedRef =
  | { documentId: string; externalId?: undefined }
  | { externalId: string; documentId?: undefined };

export interface JudgedDocument {
  ref: JudgedRef;
  /** 0 = judged not relevant; higher is more relevant (the gain of nDCG). */
  grade: number;
}

export interface EvaluationQuery {
  query: string;
  relevant: JudgedDocument[];
}

/** How one run queries: the settings of POST /v1/query it varies, defaults resolved. */
export interface RunSettings {
  mode: QueryMode;
  rerank: boolean;
  /** Hybrid only; null in the other modes. */
  semanticWeight: number | null;
}

export interface RunMetrics {
  ndcgAt10: number;
  /** At the evaluation's top_k. */
  recallAtK: number;
  mrrAt10: number;
  latencyMs: { p50: number | null; p95: number | null };
  /** Queries the service answered `degraded` (a provider down): their figures are the fallback's. */
  degradedQueries: number;
  /** Queries in the means: those with a known relevant document. */
  evaluatedQueries: number;
}

export interface RunSummary {
  settings: RunSettings;
  metrics: RunMetrics;
}

export interface RankedJudgement {
  documentId: string;
  externalId: string | null;
  grade: number;
  /** 1-based rank among the run's top_k documents; null when not among them. */
  rank: number | null;
}

/** One query's outcome in one run. */
export interface QueryRunOutcome {
  ndcgAt10: number;
  recallAtK: number;
  mrrAt10: number;
  latencyMs: number;
  degraded: boolean;
  /** The query's relevant documents (grade > 0) and where the run ranked them. */
  ranks: RankedJudgement[];
}

/** What became of a query's judgements: unknown references are left out of its scoring. */
export interface QueryNote {
  /** References to no document of the org. */
  unknown: JudgedRef[];
  /** False when no known document is relevant: the query is not run and not in the means. */
  evaluated: boolean;
}

export interface EvaluationReport {
  /** One per query, in request order. */
  queries: QueryNote[];
  /** perRun[r][q]: run r's outcome for query q; null for a query not evaluated. */
  perRun: (QueryRunOutcome | null)[][];
}

export interface EvaluationError {
  code: string;
  message: string;
}

export interface EvaluationRecord {
  id: string;
  orgId: string;
  name: string | null;
  status: EvaluationStatus;
  topK: number;
  queries: EvaluationQuery[];
  /** `queries.length`, kept beside them so that lists need not read them. */
  queryCount: number;
  runs: RunSettings[];
  /** Per run, once done. */
  summary: RunSummary[] | null;
  /** Per query, once done. */
  report: EvaluationReport | null;
  error: EvaluationError | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
}

/** An evaluation as lists show it: its runs' figures, without its queries or per-query report. */
export type EvaluationListing = Omit<EvaluationRecord, 'queries' | 'report'>;

export type NewEvaluation = Pick<
  EvaluationRecord,
  'id' | 'orgId' | 'name' | 'topK' | 'queries' | 'runs' | 'createdAt'
>;

/**
 * Evaluations and their jobs. Each row is also its job on the lease-queue engine (the adapter's
 * JobRows), so `create` queues it in the same write. The worker-side writes return false when
 * the evaluation is gone (its org purged) or already finished.
 */
export interface EvaluationStore {
  /** Stores the evaluation `queued`, its job due at once. */
  create(evaluation: NewEvaluation): Promise<void>;
  /** The org's evaluation with its report; null for an unknown id or another org's. */
  get(orgId: string, id: string): Promise<EvaluationRecord | null>;
  /** Newest first (createdAt desc, id desc), strictly after `after`; queries and report not read. */
  list(
    orgId: string,
    page: { limit: number; after: { createdAt: Date; id: string } | null },
  ): Promise<EvaluationListing[]>;
  /** Worker side: the evaluation whatever its org. */
  load(id: string): Promise<EvaluationRecord | null>;
  /** queued or running → running (started now); false once finished or gone. */
  markRunning(id: string, at: Date): Promise<boolean>;
  /** running → done with its results. */
  complete(id: string, summary: RunSummary[], report: EvaluationReport, at: Date): Promise<boolean>;
  /** queued or running → failed with the error. */
  fail(id: string, error: EvaluationError, at: Date): Promise<boolean>;
  /** Removes every evaluation of the org; how many there were. */
  purgeOrg(orgId: string): Promise<number>;
}

/** A request's run, as sent (absent fields take the server's defaults). */
export interface RunRequest {
  mode?: QueryMode | undefined;
  rerank?: boolean | undefined;
  semanticWeight?: number | undefined;
}

export interface CreateEvaluationInput {
  name?: string | undefined;
  queries: {
    query: string;
    relevant: {
      documentId?: string | undefined;
      externalId?: string | undefined;
      grade?: number | undefined;
    }[];
  }[];
  runs?: RunRequest[] | undefined;
  topK?: number | undefined;
}

/** What the query path offers, for resolving a run's defaults and refusing what it cannot do. */
export interface QueryCapabilities {
  defaultMode: QueryMode;
  /** Whether semantic and hybrid queries can run (an embedding provider is configured). */
  semantic: boolean;
  /** Whether a reranker is configured (rerank's default). */
  rerank: boolean;
}

function newEvaluationId(): string {
  return prefixedId('eval');
}

export class EvaluationService {
  constructor(
    private readonly store: EvaluationStore,
    private readonly queue: JobQueue,
    private readonly capabilities: QueryCapabilities,
    private readonly clock: Clock,
  ) {}

  /** Checks and stores the evaluation; it runs in the background. */
  async create(orgId: string, input: CreateEvaluationInput): Promise<{ id: string }> {
    const queries = checkQueries(input.queries);
    const runs = this.resolveRuns(input.runs);
    const topK = input.topK ?? DEFAULT_EVALUATION_TOP_K;
    if (!Number.isInteger(topK) || topK < 1 || topK > EVALUATION_LIMITS.maxTopK) {
      throw ERRORS.invalid(`top_k must be an integer from 1 to ${EVALUATION_LIMITS.maxTopK}.`, [
        { pointer: '/top_k', message: `must be 1 to ${EVALUATION_LIMITS.maxTopK}` },
      ]);
    }
    const name = input.name === undefined ? null : cleanText(input.name).trim() || null;
    const id = newEvaluationId();
    await this.store.create({ id, orgId, name, topK, queries, runs, createdAt: this.clock.now() });
    await this.queue.enqueue([{ documentId: id, orgId }], { created: true });
    return { id };
  }

  async get(orgId: string, id: string): Promise<EvaluationRecord> {
    const found = await this.store.get(orgId, id);
    if (!found) throw ERRORS.evaluationNotFound(id);
    return found;
  }

  async list(
    orgId: string,
    page: { limit: number; cursor: string | null },
  ): Promise<{ evaluations: EvaluationListing[]; nextCursor: string | null }> {
    const after = page.cursor === null ? null : decodePageCursor(page.cursor);
    const rows = await this.store.list(orgId, { limit: page.limit + 1, after });
    const evaluations = rows.slice(0, page.limit);
    const last = evaluations[evaluations.length - 1];
    const nextCursor = rows.length > page.limit && last ? encodePageCursor(last.createdAt, last.id) : null;
    return { evaluations, nextCursor };
  }

  private resolveRuns(requested: RunRequest[] | undefined): RunSettings[] {
    const runs = requested === undefined || requested.length === 0 ? [{}] : requested;
    if (runs.length > EVALUATION_LIMITS.runs) {
      throw ERRORS.invalid(`An evaluation has at most ${EVALUATION_LIMITS.runs} runs.`, [
        { pointer: '/runs', message: `at most ${EVALUATION_LIMITS.runs} runs, got ${runs.length}` },
      ]);
    }
    return runs.map((run: RunRequest, i) => {
      const mode = run.mode ?? this.capabilities.defaultMode;
      if (mode !== 'keyword' && !this.capabilities.semantic) throw ERRORS.semanticSearchUnavailable(mode);
      if (run.rerank === true && !this.capabilities.rerank) throw ERRORS.rerankUnavailable();
      if (run.semanticWeight !== undefined && mode !== 'hybrid') {
        throw ERRORS.invalid('semantic_weight applies to hybrid runs only.', [
          { pointer: `/runs/${i}/semantic_weight`, message: `the run's mode is ${mode}` },
        ]);
      }
      return {
        mode,
        rerank: run.rerank ?? this.capabilities.rerank,
        semanticWeight: mode === 'hybrid' ? (run.semanticWeight ?? DEFAULT_SEMANTIC_WEIGHT) : null,
      };
    });
  }
}

/** The queries as stored: each reference checked, duplicates refused, texts cleaned. */
function checkQueries(queries: CreateEvaluationInput['queries']): EvaluationQuery[] {
  const errors: FieldError[] = [];
  if (queries.length === 0 || queries.length > EVALUATION_LIMITS.queries) {
    throw ERRORS.invalid(`An evaluation has 1 to ${EVALUATION_LIMITS.queries} queries.`, [
      { pointer: '/queries', message: `1 to ${EVALUATION_LIMITS.queries} queries, got ${queries.length}` },
    ]);
  }
  const checked = queries.map((q, qi): EvaluationQuery => {
    const text = cleanText(q.query);
    if (text.trim() === '') errors.push({ pointer: `/queries/${qi}/query`, message: 'must not be blank' });
    if (q.relevant.length === 0 || q.relevant.length > EVALUATION_LIMITS.relevantPerQuery) {
      errors.push({
        pointer: `/queries/${qi}/relevant`,
        message: `1 to ${EVALUATION_LIMITS.relevantPerQuery} judged documents, got ${q.relevant.length}`,
      });
    }
    const seen = new Set<string>();
    const relevant = q.relevant.flatMap((r, ri): JudgedDocument[] => {
      const pointer = `/queries/${qi}/relevant/${ri}`;
      const hasId = r.documentId !== undefined;
      const hasExternal = r.externalId !== undefined;
      if (hasId === hasExternal) {
        errors.push({ pointer, message: 'give exactly one of document_id and external_id' });
        return [];
      }
      const grade = r.grade ?? 1;
      if (!Number.isInteger(grade) || grade < 0 || grade > EVALUATION_LIMITS.maxGrade) {
        errors.push({
          pointer: `${pointer}/grade`,
          message: `an integer from 0 to ${EVALUATION_LIMITS.maxGrade}`,
        });
        return [];
      }
      const ref: JudgedRef = hasId
        ? { documentId: cleanText(r.documentId!) }
        : { externalId: cleanText(r.externalId!) };
      const key = hasId ? `id:${ref.documentId}` : `ext:${ref.externalId}`;
      if (seen.has(key)) {
        errors.push({ pointer, message: 'the same document is judged twice in this query' });
        return [];
      }
      seen.add(key);
      return [{ ref, grade }];
    });
    return { query: text, relevant };
  });
  if (errors.length > 0) {
    throw ERRORS.invalid(
      errors.length === 1
        ? `${errors[0]!.pointer}: ${errors[0]!.message}.`
        : `${errors.length} problems in queries.`,
      errors.slice(0, 100),
    );
  }
  return checked;
}
