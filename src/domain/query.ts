// Answering queries in three modes: `keyword` (BM25, scored as a fraction of the
// most the query could score: domain/bm25.ts), `semantic` (cosine over the chunks' vectors of the
// active embedding profile) and `hybrid` (both lists, the same filters applied to each, fused by
// weighted reciprocal rank: domain/fusion.ts). A successful query counts one towards the org's
// usage for the current UTC day, whatever its mode (an evaluation's queries excepted); a rejected
// one never reaches the count.
//
// An embedding outage never fails a hybrid query: it answers the keyword list alone, each result's
// `scores.semantic` null and the answer marked `degraded`. A semantic query has nothing to fall
// back on and answers 503 embeddings_unavailable. With a reranker (domain/rerank.ts) the mode's
// list is the first stage, and a reranker outage answers that list in its own order, `degraded`.
import { setImmediate } from 'node:timers/promises';
import { ERRORS } from './errors.js';
import { type Filter, type FilterJson, parseFilter } from './filter.js';
import { capPerGroup, fuseRanks, RRF_DEPTH } from './fusion.js';
import { checkLanguage } from './languages.js';
import { type DocumentAccess, partitionsToRead } from './partitions.js';
import {
  type Embedder,
  EmbeddingError,
  type KeywordIndex,
  noopTracer,
  type TraceParent,
  type Tracer,
  type TraceSpan,
  type VectorSearch,
} from './ports.js';
import { PROXIMITY_DEPTH, rerankByProximity } from './proximity.js';
import type { QueryEmbeddings } from './query-embeddings.js';
import { DEFAULT_RERANK_CANDIDATES, type Reranking, rerankCandidates, wantsRerank } from './rerank.js';
import type { Analyzer } from './search-words.js';
import { cleanText } from './text.js';
import type { KeywordHit, SearchHit } from './types.js';
import type { UsageService } from './usage.js';

export const QUERY_MODES = ['keyword', 'semantic', 'hybrid'] as const;
export type QueryMode = (typeof QUERY_MODES)[number];

export const DEFAULT_SEMANTIC_WEIGHT = 0.5;

/** Seconds a client is asked to wait when the provider gave no Retry-After of its own. */
const EMBEDDINGS_RETRY_AFTER_SECONDS = 5;

export interface QueryInput {
  query: string;
  topK: number;
  /** The request's `filter` as sent: parsed here, refused (400, pointing into /filter) if invalid. */
  filter: FilterJson | undefined;
  documentIds: string[] | null;
  /** Only these partitions (all the key's own); absent: every one the key may see. */
  partitions?: string[] | undefined;
  /** Absent: `hybrid` with an embedding provider, else `keyword`. */
  mode?: QueryMode | undefined;
  /** Weight of the semantic list in hybrid mode, 0–1. */
  semanticWeight?: number | undefined;
  /** At most this many chunks of one document in the answer. */
  maxChunksPerDocument?: number | undefined;
  /** Only results whose final score (of the mode used, or the reranker's) is at least this. */
  scoreThreshold?: number | undefined;
  /** The query's language (ISO 639-1): its words are read in it as well as in the org's documents' languages. */
  language?: string | undefined;
  /** Absent: reranked whenever a reranker is configured; true without one is a 400. */
  rerank?: boolean | undefined;
  /** How many of the first stage's best chunks the reranker orders (with top_k, the larger). */
  rerankCandidates?: number | undefined;
}

/** Why an answer is `degraded`: a provider it would have used was down. */
export type DegradedReason = 'embeddings_unavailable' | 'rerank_unavailable';

export interface QueryHit extends SearchHit {
  /**
   * The keyword score (BM25 as a fraction of the query's most) and cosine similarity of the chunk,
   * when it was in that list; the reranker's score.
   */
  scores: { keyword: number | null; semantic: number | null; rerank: number | null };
}

export interface QueryAnswer {
  mode: QueryMode;
  /** A provider was down and the answer made without it: `degradedReasons` says which. */
  degraded: boolean;
  degradedReasons: DegradedReason[];
  hits: QueryHit[];
}

/** What semantic search needs; absent when no embedding provider is configured. */
export interface SemanticSearch {
  embedder: Embedder;
  embeddings: QueryEmbeddings;
  vectors: VectorSearch;
  /**
   * How long a query waits for its vector (EMBEDDINGS_TIMEOUT_MS: one provider call's time, never
   * the retries the background stage can afford): past it the provider counts as down.
   */
  embeddingDeadlineMs: number;
}

export class QueryService {
  /** Profile numbers by vector length: the query vector's length names the active profile. */
  private readonly profiles = new Map<number, Promise<number>>();

  constructor(
    private readonly index: KeywordIndex,
    private readonly usage: UsageService,
    private readonly semantic: SemanticSearch | null = null,
    /**
     * The analysis the proximity bonus reads chunks with (that of documents whose language is
     * unknown); null: BM25's order as the index gave it (SEARCH_PROXIMITY=false, the default).
     */
    private readonly proximity: Analyzer | null = null,
    /** The second stage (RERANK); null when no reranker is configured. */
    private readonly reranking: Reranking | null = null,
    /** A span per query and per stage: ids, counts and modes, never the query's text. */
    private readonly tracer: Tracer = noopTracer,
  ) {}

  /** Whether a query that does not say is reranked. */
  get rerankByDefault(): boolean {
    return this.reranking !== null;
  }

  /** The mode of a query that names none. */
  get defaultMode(): QueryMode {
    return this.semantic === null ? 'keyword' : 'hybrid';
  }

  /**
   * `countUsage: false` answers without adding to the org's usage: the queries of an evaluation
   * (domain/evaluation-runner.ts), which measure the service rather than use it. Every path
   * (keyword, semantic, hybrid, and the reranker's candidates) searches only the partitions the
   * key may see, or those of them the request names, and only documents whose access list the
   * request's principals reach: the indexes apply both where they apply the org and the filter,
   * before ranking.
   */
  query(
    orgId: string,
    access: DocumentAccess,
    input: QueryInput,
    options: { countUsage?: boolean; parent?: TraceParent } = {},
  ): Promise<QueryAnswer> {
    return this.tracer.inSpan(
      'docindex.query',
      {
        parent: options.parent,
        attributes: () => ({
          'docindex.org_id': orgId,
          'docindex.query.mode': input.mode ?? this.defaultMode,
          'docindex.query.top_k': input.topK,
          'docindex.query.chars': input.query.length,
          'docindex.query.filtered': input.filter !== undefined,
          'docindex.query.document_ids': input.documentIds?.length,
        }),
      },
      async (span) => {
        const answer = await this.answer(orgId, access, input, options, span);
        span.setAttributes(() => ({
          'docindex.query.results': answer.hits.length,
          'docindex.query.degraded': answer.degraded,
          'docindex.query.degraded_reasons': answer.degraded ? answer.degradedReasons : undefined,
        }));
        return answer;
      },
    );
  }

  private async answer(
    orgId: string,
    access: DocumentAccess,
    input: QueryInput,
    options: { countUsage?: boolean },
    span: TraceSpan,
  ): Promise<QueryAnswer> {
    const mode = input.mode ?? this.defaultMode;
    if (mode !== 'keyword' && this.semantic === null) throw ERRORS.semanticSearchUnavailable(mode);
    const rerank = wantsRerank(input.rerank, this.reranking);
    const filter = input.filter === undefined ? null : parseFilter(input.filter, '/filter');
    const scope: Scope = {
      filter,
      documentIds: input.documentIds,
      partitions: partitionsToRead(access, input.partitions, '/partitions'),
      principals: access.principals,
    };
    checkLanguage(input.language, '/language');
    const language = input.language ?? null;
    const query = cleanText(input.query);
    // A per-document cap may drop chunks of the best documents: the next ones must be at hand.
    const candidates = rerank ? Math.max(input.topK, input.rerankCandidates ?? DEFAULT_RERANK_CANDIDATES) : 0;
    const depth = Math.max(
      mode === 'hybrid' || input.maxChunksPerDocument !== undefined ? RRF_DEPTH : input.topK,
      candidates,
    );

    let ranked: QueryHit[];
    let degraded = false;
    if (mode === 'keyword') {
      ranked = (await this.keywordHits(orgId, query, depth, scope, language, span)).map(keywordOnly);
    } else if (mode === 'semantic') {
      ranked = await this.semanticHits(orgId, query, depth, scope, true, span);
    } else {
      // The semantic half starts first and the keyword half after a turn of the event loop: by then
      // the semantic half waits on its off-thread steps (the provider's embedding, the embedded
      // index's vector scan), which then run beside the keyword search rather than after it.
      const semanticHalf = this.semanticHits(orgId, query, depth, scope, false, span).catch(
        (error: unknown) => {
          if (error instanceof EmbeddingFailed) return null;
          throw error;
        },
      );
      const [keyword, semantic] = await Promise.all([
        setImmediate().then(() => this.keywordHits(orgId, query, depth, scope, language, span)),
        semanticHalf,
      ]);
      degraded = semantic === null;
      const fusion = this.tracer.startSpan('docindex.query.fusion', {
        parent: span,
        attributes: () => ({
          'docindex.query.keyword_hits': keyword.length,
          'docindex.query.semantic_hits': semantic?.length ?? 0,
        }),
      });
      ranked = fuse(keyword, semantic ?? [], input.semanticWeight ?? DEFAULT_SEMANTIC_WEIGHT);
      fusion.setAttributes(() => ({ 'docindex.query.hits': ranked.length }));
      fusion.end();
    }
    const degradedReasons: DegradedReason[] = degraded ? ['embeddings_unavailable'] : [];
    const reranking = this.reranking;
    if (rerank && reranking !== null) {
      const first = ranked.slice(0, candidates);
      const reranked = await this.tracer.inSpan(
        'docindex.query.rerank',
        { parent: span, attributes: () => ({ 'docindex.query.rerank_candidates': first.length }) },
        async (rerankSpan) => {
          const result = await rerankCandidates(reranking, query, first);
          rerankSpan.setAttributes(() => ({ 'docindex.query.rerank_applied': result !== null }));
          return result;
        },
      );
      if (reranked === null) degradedReasons.push('rerank_unavailable');
      else ranked = reranked;
    }

    let hits = ranked;
    if (input.scoreThreshold !== undefined) {
      const threshold = input.scoreThreshold;
      hits = hits.filter((h) => h.score >= threshold);
    }
    if (input.maxChunksPerDocument !== undefined) {
      hits = capPerGroup(hits, (h) => h.documentId, input.maxChunksPerDocument);
    }
    hits = hits.slice(0, input.topK);
    if (options.countUsage !== false) await this.usage.recordQuery(orgId, scope.partitions);
    return { mode, degraded: degradedReasons.length > 0, degradedReasons, hits };
  }

  /**
   * BM25's best chunks, the first PROXIMITY_DEPTH reordered with a term-proximity bonus
   * (domain/proximity.ts). At least that many are fetched, so a small top_k gets the best of them.
   */
  private keywordHits(
    orgId: string,
    query: string,
    topK: number,
    scope: Scope,
    language: string | null,
    parent: TraceSpan,
  ): Promise<KeywordHit[]> {
    return this.tracer.inSpan(
      'docindex.query.keyword',
      {
        parent,
        attributes: () => ({
          'docindex.query.depth': topK,
          'docindex.query.proximity': this.proximity !== null,
        }),
      },
      async (span) => {
        const hits = await this.keywordHitsNow(orgId, query, topK, scope, language);
        span.setAttributes(() => ({ 'docindex.query.hits': hits.length }));
        return hits;
      },
    );
  }

  private async keywordHitsNow(
    orgId: string,
    query: string,
    topK: number,
    scope: Scope,
    language: string | null,
  ): Promise<KeywordHit[]> {
    if (this.proximity === null) return this.index.search({ orgId, query, topK, ...scope, language });
    const hits = await this.index.search({
      orgId,
      query,
      topK: Math.max(topK, PROXIMITY_DEPTH),
      ...scope,
      language,
    });
    return rerankByProximity(hits, query, this.proximity);
  }

  /**
   * The chunks nearest to the query's vector. A provider failure is a 503 when `answerFailure`
   * (semantic mode), else an EmbeddingFailed for the hybrid query to fall back on keywords.
   */
  private semanticHits(
    orgId: string,
    query: string,
    limit: number,
    scope: Scope,
    answerFailure: boolean,
    parent: TraceSpan,
  ): Promise<QueryHit[]> {
    return this.tracer.inSpan(
      'docindex.query.semantic',
      { parent, attributes: () => ({ 'docindex.query.depth': limit }) },
      async (span) => {
        const hits = await this.semanticHitsNow(orgId, query, limit, scope, answerFailure);
        span.setAttributes(() => ({ 'docindex.query.hits': hits.length }));
        return hits;
      },
    );
  }

  private async semanticHitsNow(
    orgId: string,
    query: string,
    limit: number,
    scope: Scope,
    answerFailure: boolean,
  ): Promise<QueryHit[]> {
    const semantic = this.semantic!;
    let vector: Float32Array;
    const deadline = AbortSignal.timeout(semantic.embeddingDeadlineMs);
    try {
      vector = await semantic.embeddings.vectorFor(query, deadline);
    } catch (caught) {
      const error =
        deadline.aborted && !(caught instanceof EmbeddingError)
          ? new EmbeddingError('timeout', `no query vector within ${semantic.embeddingDeadlineMs} ms`)
          : caught;
      if (!(error instanceof EmbeddingError)) throw error;
      if (!answerFailure) throw new EmbeddingFailed();
      const retryAfter =
        error.retryAfterMs === null
          ? EMBEDDINGS_RETRY_AFTER_SECONDS
          : Math.max(1, Math.ceil(error.retryAfterMs / 1000));
      throw ERRORS.embeddingsUnavailable(error.code, retryAfter);
    }
    const profileId = await this.profileOf(vector.length);
    const hits = await semantic.vectors.search({ orgId, profileId, vector, limit, ...scope });
    return hits.map((h) => ({ ...h, scores: { keyword: null, semantic: h.score, rerank: null } }));
  }

  private profileOf(dimensions: number): Promise<number> {
    let profile = this.profiles.get(dimensions);
    if (!profile) {
      const { embedder, vectors } = this.semantic!;
      profile = vectors.profileId({ provider: embedder.provider, model: embedder.model, dimensions });
      this.profiles.set(dimensions, profile);
      profile.catch(() => this.profiles.delete(dimensions));
    }
    return profile;
  }
}

/** Which documents a query may answer from, the same for its keyword and semantic lists. */
interface Scope {
  filter: Filter | null;
  documentIds: string[] | null;
  /** null: every partition of the org. */
  partitions: string[] | null;
  /** null: access lists do not restrict. */
  principals: readonly string[] | null;
}

/** The hybrid query's semantic half failed at the provider: answer with the keyword half. */
class EmbeddingFailed extends Error {}

function keywordOnly(hit: SearchHit): QueryHit {
  return { ...hit, scores: { keyword: hit.score, semantic: null, rerank: null } };
}

const keyOf = (hit: { documentId: string; chunkIndex: number }) => `${hit.documentId}\u0000${hit.chunkIndex}`;

/** Both lists, fused; each result's `score` the fused one, `scores` what each list said. */
function fuse(keyword: readonly SearchHit[], semantic: readonly QueryHit[], weight: number): QueryHit[] {
  const byKey = new Map<string, QueryHit>();
  for (const hit of semantic) byKey.set(keyOf(hit), { ...hit });
  for (const hit of keyword) {
    const key = keyOf(hit);
    const seen = byKey.get(key);
    byKey.set(key, {
      ...hit,
      scores: { keyword: hit.score, semantic: seen?.scores.semantic ?? null, rerank: null },
    });
  }
  return fuseRanks(keyword.map(keyOf), semantic.map(keyOf), weight).map((f) => ({
    ...byKey.get(f.key)!,
    score: f.score,
  }));
}
