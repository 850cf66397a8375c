// DocindexApi on the domain services, for one organisation: what the /mcp endpoint's tools call.
// Each method does what its /v1 route's handler does (after the schema has checked the input,
// which the tools' own schemas do here), and answers the same JSON.

import type { Principal } from '../../../domain/auth.js';
import { DEFAULT_CHUNKS } from '../../../domain/chunk-settings.js';
import { accessOfRequest } from '../../../domain/partitions.js';
import type { TraceParent } from '../../../domain/ports.js';
import type { DocindexApi } from '../../../mcp/tools.js';
import type { AppDeps } from '../../deps.js';
import { documentJson, documentsJson } from '../documents/json.js';
import { toEvaluationJson } from '../evaluations/json.js';
import { toQueryResultJson } from '../query/json.js';
import { toRunJson, toSourceJson } from '../sources/json.js';

const DEFAULT_TOP_K = 10;
const DEFAULT_PAGE_SIZE = 20;

/**
 * The tools of the key's org, limited to what the key may see (its partitions, its principals);
 * a tool that names principals acts for them instead of the key's (a subset of a bound key's).
 * `parent`: the request's span, which the tools' spans join.
 */
export function serviceApi(deps: AppDeps, principal: Principal, parent: TraceParent = null): DocindexApi {
  const orgId = principal.org.id;
  const { access } = principal;
  const actingFor = (principals: string[] | undefined) => accessOfRequest(access, principals, '/principals');
  return {
    async search(input) {
      const answer = await deps.query.query(
        orgId,
        actingFor(input.principals),
        {
          query: input.query,
          topK: input.topK ?? DEFAULT_TOP_K,
          filter: input.filter,
          documentIds: input.documentIds ?? null,
          partitions: input.partitions,
          mode: input.mode,
          rerank: input.rerank,
          rerankCandidates: input.rerankCandidates,
        },
        { parent },
      );
      return {
        org_id: orgId,
        mode: answer.mode,
        degraded: answer.degraded,
        degraded_reasons: answer.degradedReasons,
        results: answer.hits.map(toQueryResultJson),
      };
    },
    async listSources() {
      const sources = await deps.sources.list(orgId);
      return {
        sources: await Promise.all(
          sources.map(async (source) => {
            const [run] = await deps.sources.runs(orgId, source.id, 1);
            return { ...toSourceJson(source), last_run: run ? toRunJson(run) : null };
          }),
        ),
      };
    },
    async syncSource(id) {
      return { run_id: (await deps.sources.sync(orgId, id)).id };
    },
    async getDocument(id, principals) {
      return documentJson(deps, await deps.documents.get(orgId, actingFor(principals), id));
    },
    async listDocuments(input) {
      const page = await deps.documents.list(orgId, actingFor(input.principals), {
        limit: input.limit ?? DEFAULT_PAGE_SIZE,
        cursor: input.cursor ?? null,
        status: input.status ?? null,
        ids: input.ids ?? null,
        contentSha256: null,
        // The list service reads the filter as the query string carries it: JSON text.
        filter: input.filter === undefined ? null : JSON.stringify(input.filter),
        partitions: input.partitions ?? null,
      });
      return { documents: await documentsJson(deps, page.documents), next_cursor: page.nextCursor };
    },
    async createEvaluation(request) {
      const { id } = await deps.evaluations.create(orgId, {
        name: request.name,
        topK: request.top_k,
        queries: request.queries.map((q) => ({
          query: q.query,
          relevant: q.relevant.map((r) => ({
            documentId: r.document_id,
            externalId: r.external_id,
            grade: r.grade,
          })),
        })),
        runs: request.runs?.map((r) => ({
          mode: r.mode,
          rerank: r.rerank,
          semanticWeight: r.semantic_weight,
        })),
      });
      return id;
    },
    async getEvaluation(id) {
      return toEvaluationJson(await deps.evaluations.get(orgId, id));
    },
    ingestText(input) {
      return deps.ingestion.ingestText(
        orgId,
        access,
        [{ text: input.text, metadata: input.metadata ?? {}, access: input.access ?? null }],
        {
          chunkSize: input.chunkSize ?? DEFAULT_CHUNKS.chunkSize,
          chunkOverlap: input.chunkOverlap ?? DEFAULT_CHUNKS.chunkOverlap,
        },
        undefined,
        input.partition ?? null,
        parent,
      );
    },
    ingestUrl(input) {
      return deps.ingestion.ingestUrl(
        orgId,
        access,
        input.url,
        input.metadata ?? {},
        {
          chunks: {
            chunkSize: input.chunkSize ?? DEFAULT_CHUNKS.chunkSize,
            chunkOverlap: input.chunkOverlap ?? DEFAULT_CHUNKS.chunkOverlap,
          },
          partition: input.partition ?? null,
          access: input.access ?? null,
        },
        undefined,
        parent,
      );
    },
  };
}
