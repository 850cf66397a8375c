// The PostgreSQL keyword search: a query's words analysed as its org's documents were, then the
// path chosen (rum-search.ts when the RUM index is ready, gin-search.ts otherwise or when a
// restriction needs it), every statement of it in one REPEATABLE READ snapshot.
import { candidateBudget, MAX_FILTER_DOCUMENTS } from '../../../domain/search-limits.js';
import { queryAnalyzers, queryWordsOf } from '../../../domain/search-words.js';
import { cleanText } from '../../../domain/text.js';
import type { KeywordHit, SearchQuery } from '../../../domain/types.js';
import { postgresAccessCondition, postgresFilterDocuments } from '../filter-sql.js';
import { type PgKeywordContext, PgKeywordPart, searchSnapshot } from './context.js';
import type { PgGinSearch } from './gin-search.js';
import { type AllowedDocuments, type DocumentRestriction, partitionCondition } from './plan.js';
import type { PgKeywordAnalysis } from './reindex.js';
import { type PgRumSearch, RUM_CANDIDATES } from './rum-search.js';

export class PgKeywordSearch extends PgKeywordPart {
  constructor(
    context: PgKeywordContext,
    private readonly analysis: PgKeywordAnalysis,
    private readonly gin: PgGinSearch,
    private readonly rum: PgRumSearch,
  ) {
    super(context);
  }

  /**
   * A search counts its words, plans, then ranks, in several statements: all of them read one
   * snapshot, so a version swap committing in between cannot make the plan's words (counted
   * before it) miss the chunks ranked after it, and a query never sees neither version.
   */
  async search(q: SearchQuery): Promise<KeywordHit[]> {
    return this.db.transaction(async (tx) => {
      await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
      return searchSnapshot.run(tx, () => this.searchInSnapshot(q));
    });
  }

  private async searchInSnapshot(query: SearchQuery): Promise<KeywordHit[]> {
    const topK = Math.floor(query.topK);
    if (topK <= 0 || query.documentIds?.length === 0 || query.partitions?.length === 0) return [];
    // Partitions that cover the org are dropped from the query itself, so no path below (RUM's
    // candidates, the GIN plan's filters) tests them.
    const q =
      query.partitions != null && (await this.coversOrg(query.orgId, query.partitions))
        ? { ...query, partitions: null }
        : query;
    const partitions = q.partitions ?? null;
    const [languages, written] = await Promise.all([
      this.queryLanguages(q.orgId, q.language),
      this.analysis.writtenAnalysis(),
    ]);
    const analyzers = queryAnalyzers(languages, written, this.language);
    const words = queryWordsOf(q.query, analyzers);
    if (words.length === 0) return [];
    const principals = q.principals ?? null;
    const filtered =
      q.documentIds !== null || q.filter !== null || partitions !== null || principals !== null;
    const rum = await this.analysis.rumReady();
    if (!filtered && rum) {
      const counted = await this.rum.rumCounts(q, words);
      return counted === null ? [] : this.rum.searchRum(q, counted);
    }
    // A metadata filter, partitions or principals (no named documents): their documents are looked
    // up first. Few: all their chunks are ranked below. Many: the restriction is applied to the RUM
    // path's ranked candidates, which costs about what none does (a partition holding most of the
    // org is answered as fast as the whole org); only when fewer than topK of those pass does the
    // plan below choose the candidates by it.
    const byMetadata: DocumentRestriction | null =
      q.documentIds === null && (q.filter !== null || partitions !== null || principals !== null)
        ? { filter: q.filter, partitions, principals }
        : null;
    const passing =
      byMetadata !== null
        ? await this.documentsPassing(q, byMetadata, candidateBudget(q, this.searchRowBudget))
        : undefined;
    const metadataAllowed = passing === undefined ? undefined : (passing?.ids ?? null);
    if (metadataAllowed?.length === 0) return [];
    if (passing && rum) return this.rum.searchRumAmong(q, words, passing);
    let walked: KeywordHit[] = [];
    // A loose metadata filter on RUM: its words are counted once, as the RUM path counts them
    // (not one by one across the org on GIN), for RUM's candidates and for the plan below.
    const rumCounted = byMetadata !== null && rum ? await this.rum.rumCounts(q, words) : undefined;
    if (rumCounted === null) return [];
    // RUM's candidates are RUM_CANDIDATES at most: a top_k near that could never fill from them.
    if (rumCounted && Math.floor(q.topK) * 2 <= RUM_CANDIDATES) {
      walked = await this.rum.searchRum(q, rumCounted, byMetadata);
      if (walked.length >= Math.floor(q.topK)) return walked;
    }
    // Here only when RUM's ranked candidates left fewer than topK passing (or none were asked).
    const plan = rumCounted
      ? this.rum.rumPlan(rumCounted)
      : this.gin.planSearch(await this.gin.countWords(q.orgId, words, filtered));
    if (plan === null) return [];
    return this.gin.rankPlan(q, plan, { filtered, metadataAllowed, walked });
  }

  /**
   * Whether every document of the org is in one of `partitions`: then they restrict nothing, and
   * the query is answered as an unrestricted one (the same hits, without a condition to test). The
   * org's partitions are walked in the (org, partition) index, one seek each, and the walk stops
   * at the first one not named: at most one seek more than the partitions named.
   */
  private async coversOrg(orgId: string, partitions: readonly string[]): Promise<boolean> {
    const { rows } = await this.reader.query<{ covers: boolean }>(
      `WITH RECURSIVE walk(partition) AS (
         SELECT min(partition) FROM ${this.documents} WHERE org_id = $1
         UNION ALL
         SELECT (SELECT min(d.partition) FROM ${this.documents} AS d
                 WHERE d.org_id = $1 AND d.partition > w.partition)
         FROM walk AS w WHERE w.partition = ANY($2::text[])
       )
       SELECT NOT EXISTS (
         SELECT FROM walk WHERE partition IS NOT NULL AND NOT (partition = ANY($2::text[]))
       ) AS covers`,
      [cleanText(orgId), partitions.map((p) => cleanText(p))],
    );
    return rows[0]?.covers === true;
  }

  /** The analyses of the org's documents (search_languages), and the query's own. */
  private async queryLanguages(orgId: string, language: string | null | undefined): Promise<string[]> {
    const { rows } = await this.db.query<{ language: string }>(
      `SELECT language FROM ${this.db.table('search_languages')} WHERE org_id = $1`,
      [cleanText(orgId)],
    );
    const languages = rows.map((r) => r.language);
    if (language) languages.push(language);
    return languages;
  }

  /**
   * The documents that pass a metadata filter and are in the partitions (no named documents),
   * from the document_metadata index rather than each document's jsonb and from the documents'
   * (org, partition) index: null when they are more than MAX_FILTER_DOCUMENTS or hold more chunks
   * than `budget`. A restriction that few documents pass costs an index range.
   */
  private async documentsPassing(
    q: SearchQuery,
    { filter, partitions, principals }: DocumentRestriction,
    budget: number,
  ): Promise<AllowedDocuments | null> {
    const params: unknown[] = [cleanText(q.orgId)];
    const param = (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    };
    const from =
      filter === null
        ? `${this.documents} AS d`
        : `(${postgresFilterDocuments(filter, '$1', { documents: this.documents, metadata: this.metadata }, param)}) AS p
           JOIN ${this.documents} AS d ON d.id = p.id`;
    const inPartitions = partitions === null ? '' : ` AND ${partitionCondition(partitions, param)}`;
    const visible =
      principals === null ? '' : ` AND ${postgresAccessCondition('d.access', principals, param)}`;
    const { rows } = await this.reader.query<{ id: string; chunk_count: number }>(
      `SELECT d.id, d.chunk_count FROM ${from}
       WHERE d.org_id = $1 AND d.chunk_count > 0 AND d.deleted_at IS NULL${inPartitions}${visible}
       LIMIT ${MAX_FILTER_DOCUMENTS + 1}`,
      params,
    );
    const chunks = rows.reduce((n, r) => n + r.chunk_count, 0);
    if (rows.length > MAX_FILTER_DOCUMENTS || chunks > budget) return null;
    return { ids: rows.map((r) => r.id), chunks };
  }
}
