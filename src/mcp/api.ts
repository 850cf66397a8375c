// What the MCP tools need from docindex, answered with the JSON bodies of the /v1 API: the stdio
// server implements it with the TypeScript client (client-api.ts), the /mcp endpoint with the
// domain services.
import type {
  DocumentPage,
  DocumentRecord,
  DocumentStatus,
  Evaluation,
  EvaluationRequest,
  IngestAck,
  Metadata,
  QueryFilter,
  QueryResponse,
  Source,
  SourceRun,
} from '../client/types.js';

/** What the tools need from docindex; the answers are the JSON bodies of the /v1 API. */
export interface DocindexApi {
  search(input: {
    query: string;
    topK?: number;
    filter?: QueryFilter;
    documentIds?: string[];
    partitions?: string[];
    principals?: string[];
    mode?: 'keyword' | 'semantic' | 'hybrid';
    rerank?: boolean;
    rerankCandidates?: number;
  }): Promise<QueryResponse>;
  /** `principals`: act for these (a subset of a bound key's); absent: the key's. */
  getDocument(id: string, principals?: string[]): Promise<DocumentRecord>;
  listDocuments(input: {
    status?: DocumentStatus;
    limit?: number;
    cursor?: string;
    filter?: QueryFilter;
    ids?: string[];
    partitions?: string[];
    principals?: string[];
  }): Promise<DocumentPage>;
  ingestText(input: { text: string } & IngestFields): Promise<IngestAck>;
  ingestUrl(input: { url: string } & IngestFields): Promise<IngestAck>;
  createEvaluation(request: EvaluationRequest): Promise<string>;
  getEvaluation(id: string): Promise<Evaluation>;
  /** The org's sources, each with its newest run (null before the first). */
  listSources(): Promise<{ sources: Array<Source & { last_run: SourceRun | null }> }>;
  /** Queues a run of the source. */
  syncSource(id: string): Promise<{ run_id: string }>;
}

/** What both ingest calls take beside the text or the URL. */
export interface IngestFields {
  metadata?: Metadata;
  partition?: string;
  access?: string[];
  chunkSize?: number;
  chunkOverlap?: number;
}
