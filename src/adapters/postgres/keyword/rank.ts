// BM25 as embedded (domain/bm25.ts) computed in SQL over a statement's candidate chunks, with
// the org's chunk count and mean length it needs: what the GIN and the RUM paths both rank with.
import { BM25_B, BM25_K1, bm25Ceiling, bm25Idf, keywordScore } from '../../../domain/bm25.js';
import { cleanText } from '../../../domain/text.js';
import type { KeywordHit, Metadata, SearchQuery } from '../../../domain/types.js';
import type { Queryable } from '../database.js';
import { unquoteLexeme } from '../tsvector.js';
import { ORG_STATS_CACHED, PgKeywordPart } from './context.js';
import type { RankedTerm } from './plan.js';

interface OrgStats {
  chunks: number;
  meanTokens: number;
  at: number;
}

/** How long an org's chunk count and mean chunk length are reused before being read again. */
const ORG_STATS_TTL_MS = 60_000;

interface HitRow {
  document_id: string;
  chunk_index: number;
  text: string;
  page_start: number | null;
  page_end: number | null;
  metadata: Metadata;
  score: number;
}

export class PgKeywordRanking extends PgKeywordPart {
  private readonly stats = new Map<string, OrgStats>();

  /**
   * How many chunks the org's ready documents hold and their mean length in tokens, for BM25's
   * document frequencies and length normalisation; read at most once a minute per org.
   */
  private async orgStats(orgId: string): Promise<OrgStats> {
    const now = Date.now();
    const cached = this.stats.get(orgId);
    if (cached && now - cached.at < ORG_STATS_TTL_MS) return cached;
    const { rows } = await this.reader.query<{ chunks: number; tokens: number }>(
      `SELECT coalesce(sum(chunk_count), 0)::float8 AS chunks, coalesce(sum(token_count), 0)::float8 AS tokens
       FROM ${this.documents} WHERE org_id = $1 AND status = 'ready' AND deleted_at IS NULL`,
      [cleanText(orgId)],
    );
    const chunks = rows[0]?.chunks ?? 0;
    const tokens = rows[0]?.tokens ?? 0;
    const stats = { chunks, meanTokens: chunks > 0 && tokens > 0 ? tokens / chunks : 1, at: now };
    if (this.stats.size >= ORG_STATS_CACHED) this.stats.clear();
    this.stats.set(orgId, stats);
    return stats;
  }

  /**
   * BM25 as embedded (domain/bm25.ts) over the ranked words, of the `candidates` (a statement
   * giving document_id, chunk_index, token_count and tsv, whose parameters are in `params`): a
   * word's term frequency in a chunk is how many positions its tsvector holds for it; a chunk's
   * length is its token count, against the org's mean. Each chunk's tsvector is read once (it is
   * usually stored out of line) and cut down to the query's words in one pass (setweight marks
   * them, ts_filter keeps the marked ones; stored lexemes carry no weight), whatever the number
   * of words: one ts_rank_cd per word and chunk would parse each word's tsquery again per call
   * and make a long query's ranking grow with its words. Each hit's score is its BM25 as a
   * fraction of the most the same IDFs allow (domain/bm25.ts, keywordScore).
   */
  async rank(
    q: SearchQuery,
    ranked: readonly RankedTerm[],
    params: unknown[],
    candidates: string,
    prelude: string,
    settings: readonly string[] = [],
  ): Promise<KeywordHit[]> {
    const param = (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    };
    const stats = await this.orgStats(q.orgId);
    const total = Math.max(stats.chunks, ...ranked.map((t) => t.rows));
    const lexemes = param(ranked.map((t) => unquoteLexeme(t.literal)));
    const idfValues = ranked.map((t) => bm25Idf(total, t.rows));
    const ceiling = bm25Ceiling(idfValues);
    const idfs = param(idfValues);
    const meanTokens = param(stats.meanTokens);
    const limit = param(Math.floor(q.topK));
    const run = async (db: Queryable) =>
      db.query<HitRow>(
        `${prelude === '' ? '' : `WITH ${prelude}`}
       SELECT c.document_id, c.chunk_index, c.text, c.page_start, c.page_end, d.metadata, top.score
       FROM (SELECT m.document_id, m.chunk_index,
               (SELECT coalesce(sum((${idfs}::float8[])[array_position(${lexemes}::text[], u.lexeme)] * f.tf * ${BM25_K1 + 1}
                  / (f.tf + ${BM25_K1} * (${1 - BM25_B} + ${BM25_B} * m.token_count / ${meanTokens}::float8))), 0)
                FROM unnest(ts_filter(setweight(m.tsv, 'A', ${lexemes}::text[]), '{a}')) AS u
                CROSS JOIN LATERAL (SELECT cardinality(u.positions)::float8 AS tf) AS f) AS score
             FROM (${candidates}) AS m
             ORDER BY score DESC, m.document_id, m.chunk_index
             LIMIT ${limit}) AS top
       JOIN ${this.chunks} AS c ON c.document_id = top.document_id AND c.chunk_index = top.chunk_index
       JOIN ${this.documents} AS d ON d.id = top.document_id AND d.deleted_at IS NULL
       ORDER BY top.score DESC, top.document_id, top.chunk_index`,
        params,
      );
    const { rows } =
      settings.length === 0
        ? await run(this.reader)
        : await this.inSearchTransaction(async (tx) => {
            for (const setting of settings) await tx.query(`SET LOCAL ${setting}`);
            const result = await run(tx);
            // The search's transaction goes on (a filtered search may rank again): its later
            // statements plan with the defaults.
            for (const setting of settings)
              await tx.query(`SET LOCAL ${setting.split('=')[0]!.trim()} TO DEFAULT`);
            return result;
          });
    return rows.map((r) => ({
      documentId: r.document_id,
      chunkIndex: r.chunk_index,
      text: r.text,
      score: keywordScore(r.score, ceiling),
      bm25: r.score,
      bm25Max: ceiling,
      metadata: r.metadata,
      pageStart: r.page_start,
      pageEnd: r.page_end,
    }));
  }
}
