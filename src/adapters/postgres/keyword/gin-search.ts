// The PostgreSQL keyword search on the GIN index (`tsv`, with the org id): each word's matches in
// the org counted up to the row budget, the words planned (domain/search-plan.ts), and the plan
// ranked over the words' matches or, over the budget, over the candidates the filters choose.
// Without the rum extension every query takes this path; with it, filtered queries whose
// restriction RUM's candidates could not satisfy.

import {
  candidateBudget,
  LOOSE_FILTER_SCAN_FACTOR,
  MAX_FILTER_DOCUMENTS,
  MAX_QUERY_TERMS,
  RAREST_PRECOUNT,
} from '../../../domain/search-limits.js';
import { planTerms } from '../../../domain/search-plan.js';
import { cleanText } from '../../../domain/text.js';
import type { KeywordHit, SearchQuery } from '../../../domain/types.js';
import { postgresAccessCondition, postgresFilter } from '../filter-sql.js';
import { type PgKeywordContext, PgKeywordPart } from './context.js';
import { partitionCondition, type SearchPlan } from './plan.js';
import type { PgKeywordRanking } from './rank.js';

interface WordCount {
  /** The word as a quoted tsquery literal. */
  literal: string;
  /** The org's chunks that hold it, counted up to the row budget + 1; null when not counted. */
  rows: number | null;
}

export class PgGinSearch extends PgKeywordPart {
  constructor(
    context: PgKeywordContext,
    private readonly ranking: PgKeywordRanking,
  ) {
    super(context);
  }

  /**
   * The query's words as quoted tsquery literals, each with how many of the org's chunks hold it,
   * counted up to searchRowBudget + 1 only: the LIMIT stops reading rows once a word is known to
   * be over the budget. Of a query with more than MAX_QUERY_TERMS distinct words, the rarest
   * MAX_QUERY_TERMS that match anything are kept (each word first counted up to RAREST_PRECOUNT
   * only; ties keep query order). The word of a one-word query is counted only with `countOne`:
   * without filters its plan is the same whatever the count.
   */
  async countWords(orgId: string, words: string[], countOne: boolean): Promise<WordCount[]> {
    // The query's words come from the same analysis as the chunks' (domain/search-words.ts). Each
    // becomes a quoted literal: user input never reaches tsquery syntax, so no string can make it
    // throw. Quoting rules of tsquery input: a quote is doubled, a backslash escaped.
    const capped = (literal: string, cap: string) => `(SELECT count(*)::int FROM (
        SELECT FROM ${this.chunks} AS c WHERE c.org_id = $1 AND c.tsv @@ ${literal}::tsquery LIMIT ${cap}
      ) AS capped)`;
    const { rows } = await this.reader.query<WordCount>(
      `WITH words AS (
         SELECT '''' || replace(replace(lexeme, '\\', '\\\\'), '''', '''''') || '''' AS literal,
                position
         FROM unnest($2::text[]) WITH ORDINALITY AS w(lexeme, position)
       ),
       kept AS (
         SELECT literal, position FROM words WHERE (SELECT count(*) FROM words) <= $3
         UNION ALL
         SELECT literal, position FROM (
           SELECT literal, position FROM (
             SELECT w.literal, w.position, ${capped('w.literal', '$6')} AS few
             FROM words AS w WHERE (SELECT count(*) FROM words) > $3
           ) AS precounted
           WHERE few > 0 ORDER BY few, position LIMIT $3
         ) AS rarest
       )
       SELECT k.literal,
              CASE WHEN $5 OR (SELECT count(*) FROM kept) > 1 THEN ${capped('k.literal', '$4')} END AS rows
       FROM kept AS k
       ORDER BY k.position`,
      [cleanText(orgId), words, MAX_QUERY_TERMS, this.searchRowBudget + 1, countOne, RAREST_PRECOUNT],
    );
    return rows;
  }

  /**
   * The words to rank with (domain/search-plan.ts). A query whose rarest word alone exceeds the
   * budget is ranked among a bounded subset of that word's matches. null when no word matches
   * anything.
   */
  planSearch(words: WordCount[]): SearchPlan | null {
    const [only] = words;
    if (words.length === 1 && only && only.rows === null) {
      const one = [{ literal: only.literal, rows: 1 }];
      return { chosen: one, every: one, exact: false };
    }
    const plan = planTerms(
      words.map((w) => ({ term: w, rows: w.rows ?? 0 })),
      this.searchRowBudget,
    );
    if (plan === null) return null;
    const counted = (w: WordCount) => ({ literal: w.literal, rows: w.rows ?? 0 });
    return { chosen: plan.chosen.map(counted), every: plan.every.map(counted), exact: plan.exact };
  }

  /**
   * The documents a filtered query may answer from, found from the documents side: null when
   * they are too many to rank all their chunks (more than MAX_FILTER_DOCUMENTS documents, or
   * more chunks than `budget`), so the query must start from the index instead. A filter
   * that few documents pass reads the org's document rows once: a twentieth of its chunks.
   * `filters` test a document `d`; their parameters are $2 on.
   */
  private async allowedDocuments(
    orgId: string,
    filters: string[],
    params: unknown[],
    budget: number,
  ): Promise<string[] | null> {
    const { rows } = await this.reader.query<{ id: string; chunk_count: number }>(
      `SELECT d.id, d.chunk_count FROM ${this.documents} AS d
       WHERE d.org_id = $1 AND d.chunk_count > 0 AND d.deleted_at IS NULL AND ${filters.join(' AND ')}
       LIMIT ${MAX_FILTER_DOCUMENTS + 1}`,
      [cleanText(orgId), ...params],
    );
    const chunks = rows.reduce((n, r) => n + r.chunk_count, 0);
    if (rows.length > MAX_FILTER_DOCUMENTS || chunks > budget) return null;
    return rows.map((r) => r.id);
  }

  /**
   * The plan's words ranked on the GIN index (`tsv`), the query's filters applied: `walked` is
   * what RUM's ranked candidates gave a loose restriction already (answered when these are fewer),
   * `metadataAllowed` the documents a metadata filter, partitions or principals let through (null
   * when too many to look up; undefined when the query has no such restriction).
   */
  async rankPlan(
    q: SearchQuery,
    plan: SearchPlan,
    {
      filtered,
      metadataAllowed,
      walked,
    }: { filtered: boolean; metadataAllowed: string[] | null | undefined; walked: KeywordHit[] },
  ): Promise<KeywordHit[]> {
    const partitions = q.partitions ?? null;
    const principals = q.principals ?? null;
    // The filters, on a document `d`; their values are parameters $2 on.
    const filterParams: unknown[] = [];
    const filterParam = (value: unknown) => {
      filterParams.push(value);
      return `$${filterParams.length + 1}`;
    };
    const filters: string[] = [];
    if (q.documentIds !== null) {
      filters.push(`d.id = ANY(${filterParam(q.documentIds.map((id) => cleanText(id)))}::text[])`);
    }
    // The partitions restrict as the filter does: a condition on the document, tested before the
    // matches are ranked, and choosing the candidates when the plan is over budget.
    if (partitions !== null) filters.push(partitionCondition(partitions, filterParam));
    // So does the access list: a request acting for principals ranks only what they may see.
    if (principals !== null) filters.push(postgresAccessCondition('d.access', principals, filterParam));
    if (q.filter !== null) filters.push(postgresFilter(q.filter, 'd.metadata', filterParam));
    const overBudget = filtered && !plan.exact;
    // Named documents may hold more chunks than the budget and still be ranked whole; a metadata
    // filter alone may not.
    const budgetOfCandidates = candidateBudget(q, this.searchRowBudget);
    const allowed =
      metadataAllowed !== undefined
        ? metadataAllowed
        : overBudget
          ? await this.allowedDocuments(q.orgId, filters, filterParams, budgetOfCandidates)
          : null;

    // Documents few enough to rank whole are ranked with every word; otherwise the chosen ones.
    const ranked = allowed !== null ? plan.every : plan.chosen;
    const params: unknown[] = [cleanText(q.orgId), ranked.map((t) => t.literal).join(' | ')];
    const param = (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    };
    // The same filters, renumbered after this statement's first two parameters (documents already
    // chosen by them need no more filtering, and an unused parameter would have no type).
    const shift = params.length - 1;
    if (filtered && allowed === null) params.push(...filterParams);
    const passes = filters.map((f) => f.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + shift}`));
    const passing = (alias: string) =>
      `EXISTS (SELECT FROM ${this.documents} AS d WHERE d.id = ${alias}.document_id AND ${passes.join(' AND ')})`;
    // A parameter the statement does not use would have no type: the budget is bound where used.
    const budget = () => param(this.searchRowBudget);
    const matches = (limit: string) => `SELECT document_id, chunk_index, token_count, tsv FROM ${this.chunks}
      WHERE org_id = $1 AND tsv @@ (SELECT query FROM q) LIMIT ${limit}`;

    // At most searchRowBudget matches are ranked. Without filters, or with every match within the
    // budget, they are the words' matches (over the budget, the first ones in table order) and
    // the filters apply to them afterwards. Over the budget, the filters choose the candidates
    // instead, so they never come after the cut: documents few enough to rank all their chunks
    // are read by key and every match among them ranked (exact); with a looser filter, the first
    // matches that pass among LOOSE_FILTER_SCAN_FACTOR × budget. The LIMITs also fence the
    // matches off from the filters; left free, the planner may walk the org's documents and probe
    // the full-text index once per document, seconds in a large org. The tsquery comes in
    // through a sub-select, so the planner does not read its words' frequencies and always takes
    // the GIN index: a plan that scans the table expecting to stop early would, on a wrong
    // estimate, read the whole org. Ranking reads only the tsvector; text and metadata are
    // fetched for the top hits alone.
    let candidates: string;
    if (allowed !== null) {
      candidates = `SELECT r.document_id, r.chunk_index, r.token_count, r.tsv FROM (
          SELECT document_id, chunk_index, token_count, tsv FROM ${this.chunks}
          WHERE document_id = ANY(${param(allowed)}::text[]) AND org_id = $1 LIMIT ${param(budgetOfCandidates)}
        ) AS r WHERE r.tsv @@ (SELECT query FROM q)`;
    } else if (overBudget) {
      candidates = `SELECT r.document_id, r.chunk_index, r.token_count, r.tsv
        FROM (${matches(param(this.searchRowBudget * LOOSE_FILTER_SCAN_FACTOR))}) AS r
        WHERE ${passing('r')} LIMIT ${budget()}`;
    } else {
      candidates = `SELECT r.document_id, r.chunk_index, r.token_count, r.tsv FROM (${matches(budget())}) AS r
        ${filtered ? `WHERE ${passing('r')}` : ''}`;
    }
    const hits = await this.ranking.rank(q, ranked, params, candidates, 'q AS (SELECT $2::tsquery AS query)');
    return hits.length >= walked.length ? hits : walked;
  }
}
