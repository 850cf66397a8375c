// DocindexApi over HTTP with the TypeScript client: what `docindex mcp` (stdio) answers with. The
// server it talks to checks the key's scopes and rate limit; its problems come back as
// DocindexError, which the tools turn into tool errors.
import type { DocindexClient } from '../client/client.js';
import type { DocindexApi, IngestFields } from './api.js';

export function clientApi(client: DocindexClient): DocindexApi {
  return {
    search: (input) =>
      client.query({
        query: input.query,
        ...(input.topK === undefined ? {} : { topK: input.topK }),
        ...(input.mode === undefined ? {} : { mode: input.mode }),
        ...(input.rerank === undefined ? {} : { rerank: input.rerank }),
        ...(input.rerankCandidates === undefined ? {} : { rerankCandidates: input.rerankCandidates }),
        ...(input.filter === undefined ? {} : { filter: input.filter }),
        ...(input.documentIds === undefined ? {} : { documentIds: input.documentIds }),
        ...(input.partitions === undefined ? {} : { partitions: input.partitions }),
        ...(input.principals === undefined ? {} : { principals: input.principals }),
      }),
    getDocument: (id, principals) => client.getDocument(id, principals === undefined ? {} : { principals }),
    listSources: async () => {
      const sources = await client.listSources();
      return {
        sources: await Promise.all(
          sources.map(async (source) => ({
            ...source,
            last_run: (await client.listSourceRuns(source.id, { limit: 1 }))[0] ?? null,
          })),
        ),
      };
    },
    syncSource: async (id) => ({ run_id: await client.syncSource(id) }),
    listDocuments: (input) => client.listDocuments(input),
    ingestText: (input) =>
      client.ingestText(
        [
          input.metadata === undefined
            ? { text: input.text }
            : { text: input.text, metadata: input.metadata },
        ],
        ingestOptions(input),
      ),
    createEvaluation: (request) => client.createEvaluation(request),
    getEvaluation: (id) => client.getEvaluation(id),
    ingestUrl: (input) => client.ingestUrl(input.url, input.metadata, ingestOptions(input)),
  };
}

/** The partition, access list and chunk settings of an ingest call, as the client's options name them. */
function ingestOptions(input: IngestFields): {
  partition?: string;
  access?: string[];
  chunkSize?: number;
  chunkOverlap?: number;
} {
  return {
    ...(input.partition === undefined ? {} : { partition: input.partition }),
    ...(input.access === undefined ? {} : { access: input.access }),
    ...(input.chunkSize === undefined ? {} : { chunkSize: input.chunkSize }),
    ...(input.chunkOverlap === undefined ? {} : { chunkOverlap: input.chunkOverlap }),
  };
}
