// The PostgreSQL keyword search on the RUM index (`terms`: the words prefixed with the org's key,
// positions stored in the index): each word's chunks of highest term frequency picked inside the
// index, so a query reads the table for a bounded number of candidates, ranked with the same BM25.
import { candidateBudget, MAX_QUERY_TERMS } from '../../../domain/search-limits.js';
import { planTerms, rarestTerms, type TermPlan } from '../../../domain/search-plan.js';
import type { KeywordHit, SearchQuery } from '../../../domain/types.js';
import { postgresAccessCondition, postgresFilter } from '../filter-sql.js';
import { quoteLexeme, unquoteLexeme } from '../tsvector.js';
import { type PgKeywordContext, PgKeywordPart, termPrefix } from './context.js';
import {
  type AllowedDocuments,
  type DocumentRestriction,
  partitionCondition,
  type RankedTerm,
  type SearchPlan,
} from './plan.js';
import type { PgKeywordRanking } from './rank.js';

/**
 * On the RUM path a query ranks about this many candidate chunks in all, a read of the table and of
 * the chunk's terms each: half are the chunks that hold the query's chosen words most, all of them
 * together (an ordered RUM scan over their OR, so chunks that hold several words come first), and
 * half are each word's share (within RUM_WORD_CANDIDATES_MIN..MAX) of its own chunks of highest
 * term frequency, or all its matches when they are no more, so the ranking is exact BM25 as
 * embedded when no chosen word has more. Bounding the total bounds a long query's work as a short
 * one's.
 */
export const RUM_CANDIDATES = 600;
export const RUM_WORD_CANDIDATES_MAX = 300;
export const RUM_WORD_CANDIDATES_MIN = 20;
/**
 * A word is counted (for its IDF) up to the least frequency the column statistics list, or this
 * many matches when there are no statistics yet: a bound on the table reads a count makes.
 */
const RUM_COUNT_WITHOUT_STATISTICS = 2_000;
/**
 * A restriction's chunks that hold a query word are found in the index when its words have no
 * more than this many matches in the org per chunk of the restriction's documents: a match costs
 * a bitmap entry, several times less than reading a chunk's terms out of line to test them
 * (bench/RESULTS.md, "Changes that moved a figure").
 */
const INDEX_MATCHES_PER_CHUNK_READ = 4;
/** How long the common terms' frequencies (pg_stats) are reused before being read again. */
const TERM_STATS_TTL_MS = 60_000;

/** A query's words as the RUM path counts and plans them (PgRumSearch.rumCounts). */
export interface RumCounts {
  /** The org's key before each term ("<key base 36>_"). */
  prefix: string;
  /** How many of its chunks of highest frequency each chosen word brings (searchRum). */
  perWord: number;
  /** Over the prefixed terms' literals. */
  plan: TermPlan<RankedTerm>;
  rowsOf: Map<RankedTerm, number>;
}

export class PgRumSearch extends PgKeywordPart {
  private termStats: { rows: Map<string, number>; floor: number; at: number } | null = null;

  constructor(
    context: PgKeywordContext,
    private readonly ranking: PgKeywordRanking,
  ) {
    super(context);
  }

  /**
   * The terms' estimated matches from the column statistics (pg_stats' most common elements of
   * `terms`, ANALYZE's sample of up to 300,000 chunks at statistics target 1000): a term listed
   * there is too common to count cheaply (every access to it through RUM reads its whole posting
   * list). `floor` is the least frequency the list keeps: a term missing from it is rarer.
   */
  private async commonTerms(): Promise<{ rows: Map<string, number>; floor: number }> {
    const now = Date.now();
    if (this.termStats && now - this.termStats.at < TERM_STATS_TTL_MS) return this.termStats;
    const { rows } = await this.reader.query<{
      elems: string[] | null;
      freqs: number[] | null;
      tuples: number;
    }>(
      `SELECT s.most_common_elems::text::text[] AS elems, s.most_common_elem_freqs AS freqs,
              greatest(c.reltuples, 0)::float8 AS tuples
       FROM pg_stats AS s JOIN pg_class AS c ON c.oid = to_regclass($2)
       WHERE s.schemaname = $1 AND s.tablename = 'chunks' AND s.attname = 'terms'`,
      [this.db.schema, this.chunks],
    );
    const map = new Map<string, number>();
    let floor = 0;
    const row = rows[0];
    if (row?.elems && row.freqs) {
      const freqs = row.freqs;
      row.elems.forEach((term, i) => {
        map.set(term, Math.max(1, Math.round((freqs[i] ?? 0) * row.tuples)));
      });
      // After the elements' frequencies come the least and the greatest of them, then null's.
      floor = Math.round((row.freqs[row.elems.length] ?? 0) * row.tuples);
    }
    this.termStats = { rows: map, floor, at: now };
    return this.termStats;
  }

  /**
   * A filter few documents pass, on the RUM path, ranked as embedded: the words the plan chose
   * first, as an unrestricted query ranks, over those documents' chunks that hold one of them;
   * every word over every chunk of theirs that holds any only when those are fewer than topK
   * (exact, but that a word over the row budget is read in the documents' first chunks when they
   * hold many). The words are counted as searchRum counts them: the GIN path's count (each word's
   * matches in the org, up to the row budget, through the org's posting lists and table rows)
   * reads a table row per match of every word, far more than ranking the few documents costs.
   */
  async searchRumAmong(q: SearchQuery, words: string[], documents: AllowedDocuments): Promise<KeywordHit[]> {
    const counted = await this.rumCounts(q, words);
    if (counted === null) return [];
    const { plan, rowsOf } = counted;
    const ranked = (terms: RankedTerm[]): RankedTerm[] =>
      terms.map((t) => ({ literal: t.literal, rows: rowsOf.get(t) ?? 0 }));
    // The words' chunks are found in the index (a bitmap of their matches and one of the
    // documents' chunks) when that reads less than the documents' chunks would: a long query's
    // words are held by nearly every chunk, whose terms would all be read to rank them.
    const matchOf = (terms: RankedTerm[]): 'index' | 'rows' => {
      const matches = terms.reduce((n, t) => n + t.rows, 0);
      return matches <= this.searchRowBudget && matches <= INDEX_MATCHES_PER_CHUNK_READ * documents.chunks
        ? 'index'
        : 'rows';
    };
    const every = ranked(plan.every);
    if (plan.chosen.length < plan.every.length) {
      const chosen = ranked(plan.chosen);
      const match = matchOf(chosen);
      const hits = await this.rankAmong(q, chosen, documents.ids, match);
      if (hits.length >= Math.floor(q.topK)) return hits;
      // Too few: every word ranks. A word over the budget is too common for any order among its
      // matches to mean much, so, as searchRum reads its first matches, the documents' first
      // chunks stand for it beside the chosen words' chunks, rather than every chunk of theirs.
      if (
        match === 'index' &&
        documents.chunks > RUM_CANDIDATES &&
        every.some((t) => t.rows > this.searchRowBudget)
      ) {
        return this.rankAmong(q, every, documents.ids, 'rows', { chosen, first: RUM_CANDIDATES });
      }
    }
    return this.rankAmong(q, every, documents.ids, matchOf(every));
  }

  /**
   * The words' BM25 over the documents' chunks that hold one of them, matched in the index
   * (`index`) or on each chunk's terms after reading them all (`rows`, bounded by the budget
   * rather than left to the planner, which could take a common word's whole posting list). With
   * `also`, the rows read are the chunks holding its chosen words (from the index) and the
   * documents' `first` chunks.
   */
  private rankAmong(
    q: SearchQuery,
    ranked: RankedTerm[],
    documents: string[],
    match: 'index' | 'rows',
    also?: { chosen: RankedTerm[]; first: number },
  ): Promise<KeywordHit[]> {
    const params: unknown[] = [];
    const param = (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    };
    const any = `${param(ranked.map((t) => t.literal).join(' | '))}::tsquery`;
    const ids = `${param(documents)}::text[]`;
    const budget = param(candidateBudget(q, this.searchRowBudget));
    const read = (condition: string, limit: string) => `(SELECT document_id, chunk_index, token_count, terms
        FROM ${this.chunks} WHERE document_id = ANY(${ids})${condition} LIMIT ${limit})`;
    const rows = also
      ? `SELECT DISTINCT ON (u.document_id, u.chunk_index) u.* FROM (
          ${read(` AND terms @@ ${param(also.chosen.map((t) => t.literal).join(' | '))}::tsquery`, budget)}
          UNION ALL ${read('', param(also.first))}) AS u`
      : read(match === 'index' ? ` AND terms @@ ${any}` : '', budget);
    // The terms are read out of line once, for the match test and the ranking both.
    const candidates = `SELECT r.document_id, r.chunk_index, r.token_count, v.tsv FROM (${rows}) AS r
      CROSS JOIN LATERAL (SELECT r.terms || ''::tsvector AS tsv OFFSET 0) AS v
      ${match === 'rows' ? `WHERE v.tsv @@ ${any}` : ''}`;
    return this.ranking.rank(q, ranked, params, candidates, '');
  }

  /**
   * The RUM path's word counts as a plan over the plain words of `tsv` (the org's prefix taken
   * off), for a loose filter that searchRum's candidates could not satisfy: counting each word
   * across the org on GIN would read a table row per match and cost such a query nearly all of
   * its time.
   */
  rumPlan({ prefix, plan, rowsOf }: RumCounts): SearchPlan {
    const plain = (t: RankedTerm): RankedTerm => ({
      literal: quoteLexeme(unquoteLexeme(t.literal).slice(prefix.length)),
      rows: rowsOf.get(t) ?? 0,
    });
    return { chosen: plan.chosen.map(plain), every: plan.every.map(plain), exact: plan.exact };
  }

  /**
   * The query's words as the RUM path counts them (see searchRum): each as a literal of the org's
   * prefixed terms with its matches, counted up to the least frequency the column statistics list
   * or estimated from them when listed as common; the rarest MAX_QUERY_TERMS of them planned as
   * everywhere (domain/search-plan.ts). null when the org has no key or no word matches anything.
   */
  async rumCounts(q: SearchQuery, words: string[]): Promise<RumCounts | null> {
    const key = await this.orgKeys.key(this.reader, q.orgId, false);
    if (key === null) return null;
    const prefix = termPrefix(key);
    const literals = words.map((w) => quoteLexeme(prefix + w));
    const common = await this.commonTerms();
    const share = Math.floor(RUM_CANDIDATES / 2 / words.length);
    const perWord = Math.min(
      Math.max(RUM_WORD_CANDIDATES_MIN, Math.min(RUM_WORD_CANDIDATES_MAX, share)),
      this.searchRowBudget,
    );
    // Words the statistics do not list as common are counted, up to the least frequency they
    // list (a term missing from them is rarer than that, as far as their sample tells), so their
    // IDF is exact; listed terms of no more estimated matches than a word may bring are counted
    // too, so the ranking stays exact wherever it can be and never rests on stale statistics.
    const countCap = Math.max(perWord, common.floor > 0 ? common.floor : RUM_COUNT_WITHOUT_STATISTICS) + 1;
    const estimate = (w: string) => common.rows.get(prefix + w) ?? 0;
    const uncounted = words.filter((w) => estimate(w) <= perWord || !common.rows.has(prefix + w));
    const counted = new Map<string, number>();
    if (uncounted.length > 0) {
      const { rows } = await this.reader.query<{ word: string; rows: number }>(
        `SELECT w.word, (SELECT count(*)::int FROM (
             SELECT FROM ${this.chunks} AS c WHERE c.terms @@ w.literal::tsquery LIMIT $3
           ) AS capped) AS rows
         FROM unnest($1::text[], $2::text[]) AS w(word, literal)`,
        [uncounted, uncounted.map((w) => quoteLexeme(prefix + w)), countCap],
      );
      for (const r of rows) counted.set(r.word, r.rows);
    }
    const counts = words.map((w, i) => ({
      term: { literal: literals[i] as string, rows: 0 },
      rows: counted.get(w) ?? estimate(w),
    }));
    const rarest = rarestTerms(counts, MAX_QUERY_TERMS);
    const kept = counts.filter((c) => rarest.includes(c.term));
    const plan = planTerms(kept, this.searchRowBudget);
    if (plan === null) return null;
    return { prefix, perWord, plan, rowsOf: new Map(kept.map((c) => [c.term, c.rows])) };
  }

  /**
   * Keyword search on the RUM index (no filters). Each word's matches are counted, up to the
   * least frequency the column statistics list, unless they list it as common, when their estimate
   * stands in; the words to rank are chosen as everywhere (domain/search-plan.ts). Each
   * chosen word brings its share of chunks of highest term frequency (an ordered
   * RUM scan, answered from the index's stored positions: the heap is read for those chunks only),
   * or all its matches when they are no more, and the chosen words together their chunks of
   * highest frequency over all of them (RUM's rank of their OR); a word over the row budget (a query of common words
   * only) brings its first matches, where the planner, seeing how common it is, may scan the table
   * and stop early. Exact BM25 ranks their union: the same ranking as embedded whenever every
   * chosen word has no more matches than that.
   */
  async searchRum(
    q: SearchQuery,
    { perWord, plan, rowsOf }: RumCounts,
    restriction: DocumentRestriction | null = null,
  ): Promise<KeywordHit[]> {
    const ranked: RankedTerm[] = plan.chosen.map((t) => ({ literal: t.literal, rows: rowsOf.get(t) ?? 0 }));

    const params: unknown[] = [];
    const param = (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    };
    const limit = param(perWord);
    const scans = ranked.map((t) => {
      const query = `${param(t.literal)}::tsquery`;
      // Every match within the budget is ranked by the index; a word over it is too common for
      // any order to mean much (its first matches are read, see below).
      const order = t.rows <= this.searchRowBudget ? `ORDER BY c.terms <=> ${query}` : '';
      return `(SELECT c.document_id, c.chunk_index, c.token_count, c.terms AS tsv FROM ${this.chunks} AS c
        WHERE c.terms @@ ${query} ${order} LIMIT ${limit})`;
    });
    if (ranked.length > 1 && ranked.every((t) => t.rows <= this.searchRowBudget)) {
      const all = `${param(ranked.map((t) => t.literal).join(' | '))}::tsquery`;
      scans.push(`(SELECT c.document_id, c.chunk_index, c.token_count, c.terms AS tsv FROM ${this.chunks} AS c
        WHERE c.terms @@ ${all} ORDER BY c.terms <=> ${all} LIMIT ${param(RUM_CANDIDATES / 2)})`);
    }
    // A restriction is tested on the candidates only (one document row by key each), before ranking.
    const conditions: string[] = [];
    if (restriction?.filter) conditions.push(postgresFilter(restriction.filter, 'd.metadata', param));
    if (restriction?.partitions) conditions.push(partitionCondition(restriction.partitions, param));
    if (restriction?.principals) {
      conditions.push(postgresAccessCondition('d.access', restriction.principals, param));
    }
    const passes =
      conditions.length === 0
        ? ''
        : `WHERE EXISTS (SELECT FROM ${this.documents} AS d
             WHERE d.id = u.document_id AND ${conditions.join(' AND ')})`;
    const candidates = `SELECT DISTINCT ON (u.document_id, u.chunk_index) u.document_id, u.chunk_index,
        u.token_count, u.tsv FROM (${scans.join(' UNION ALL ')}) AS u ${passes}`;
    // A word over the budget is read through a bitmap of its posting list: seeing how common it
    // is, the planner would scan the table expecting its first matches soon, and read most of
    // it when the org's chunks sit elsewhere in the table (a small org's query then takes seconds).
    const overBudget = ranked.some((t) => t.rows > this.searchRowBudget);
    return this.ranking.rank(
      q,
      ranked,
      params,
      candidates,
      '',
      overBudget ? ['enable_seqscan = off', 'enable_indexscan = off'] : [],
    );
  }
}
