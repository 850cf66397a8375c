// The docindex MCP tools (search, get_document, list_documents, ingest_text, ingest_url,
// run_evaluation, list_sources, sync_source), defined
// once for both transports against DocindexApi: `docindex mcp` (stdio) implements it with the
// TypeScript client over HTTP, the server's /mcp endpoint with the domain services. Each tool
// answers its result as JSON text and as structured content; a failure is a tool error that
// starts with the API's problem code (`not_found: …`), never a protocol error or a crash.
// Arguments outside a tool's input schema never reach it: the SDK answers those with a tool error
// of its own (`MCP error -32602: Input validation error: …`), as docs/CLIENTS.md describes.

import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
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
import { CHUNK_OVERLAP, CHUNK_SIZE } from '../domain/chunk-settings.js';
import { ApiError, ERRORS } from '../domain/errors.js';
import { EVALUATION_LIMITS } from '../domain/evaluations.js';
import { FILTER_MAX_CONDITIONS, FILTER_MAX_DEPTH } from '../domain/filter.js';
import { METADATA_MAX_KEY_LENGTH, METADATA_MAX_KEYS, METADATA_MAX_VALUE_LENGTH } from '../domain/metadata.js';
import {
  type DocumentAccess,
  MAX_PARTITIONS_PER_REQUEST,
  PARTITION_PATTERN,
  requireEveryPartition,
  type WholeOrgFeature,
} from '../domain/partitions.js';
import { ACCESS_MAX_PRINCIPALS, PRINCIPAL_MAX_LENGTH } from '../domain/principals.js';
import type { Scope } from '../domain/scopes.js';
import { DOCUMENT_STATUSES } from '../domain/types.js';

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
  ingestText(input: {
    text: string;
    metadata?: Metadata;
    partition?: string;
    access?: string[];
    chunkSize?: number;
    chunkOverlap?: number;
  }): Promise<IngestAck>;
  ingestUrl(input: {
    url: string;
    metadata?: Metadata;
    partition?: string;
    access?: string[];
    chunkSize?: number;
    chunkOverlap?: number;
  }): Promise<IngestAck>;
  createEvaluation(request: EvaluationRequest): Promise<string>;
  getEvaluation(id: string): Promise<Evaluation>;
  /** The org's sources, each with its newest run (null before the first). */
  listSources(): Promise<{ sources: Array<Source & { last_run: SourceRun | null }> }>;
  /** Queues a run of the source. */
  syncSource(id: string): Promise<{ run_id: string }>;
}

export interface ToolServerOptions {
  /** The version MCP clients are shown: the service's (package.json's), as the OpenAPI document gives it. */
  version: string;
  /**
   * The calling key's scopes, when this side enforces them (the /mcp endpoint): a tool whose scope
   * is missing answers `insufficient_scope`. Over stdio the API itself enforces them.
   */
  grantedScopes?: ReadonlySet<Scope>;
  /** What the calling key may see, when this side enforces it (the /mcp endpoint), as for the scopes. */
  access?: DocumentAccess;
  /** Told about failures that are not API answers (bugs), which the tool reports as `internal`. */
  onUnexpectedError?: (error: unknown, tool: string) => void;
  /** How long run_evaluation waits for an evaluation to finish before answering its status (30 s). */
  evaluationWaitMs?: number;
}

export const TOOL_NAMES = [
  'search',
  'get_document',
  'list_documents',
  'ingest_text',
  'ingest_url',
  'run_evaluation',
  'list_sources',
  'sync_source',
] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

/** The key scope each tool needs: the scope of the /v1 route it stands for. */
export const TOOL_SCOPES: Readonly<Record<ToolName, Scope>> = {
  search: 'query',
  get_document: 'read',
  list_documents: 'read',
  ingest_text: 'ingest',
  ingest_url: 'ingest',
  run_evaluation: 'query',
  list_sources: 'sources',
  sync_source: 'sources',
};

/** The tools that work on the whole org, as their /v1 routes do: refused to keys limited to partitions. */
const WHOLE_ORG_TOOLS: Readonly<Partial<Record<ToolName, WholeOrgFeature>>> = {
  run_evaluation: 'evaluations',
  list_sources: 'sources',
  sync_source: 'sources',
};

const DEFAULT_EVALUATION_WAIT_MS = 30_000;
const EVALUATION_POLL_MS = 250;

/** Largest number of array elements and object members one call's arguments may hold. */
const MAX_ARGUMENT_ELEMENTS = 5_000;

// ---------------------------------------------------------------------------------------------
// Input schemas: the bounds of the /v1 API, so a call the API would refuse is refused here with
// the same rule, and descriptions a model can act on.

const FILTER_DESCRIPTION = [
  'Metadata filter (metadata values are strings). Forms:',
  '{"key": "v"} equals; {"key": ["a", "b"]} any of;',
  '{"key": {"$eq"|"$ne"|"$gt"|"$gte"|"$lt"|"$lte": "v"}}; {"key": {"$in"|"$nin": ["a", "b"]}};',
  '{"key": {"$exists": true|false}}; {"$and": [f, …]}, {"$or": [f, …]}, {"$not": f}.',
  'Several entries in one object must all hold. Comparisons are by Unicode code point, so ISO-8601',
  'dates order correctly: {"date": {"$gte": "2024-01-01"}}. A comparison on a missing key is false.',
  `At most ${FILTER_MAX_DEPTH} levels of nesting and ${FILTER_MAX_CONDITIONS} conditions.`,
  'Example: {"lang": "en", "$or": [{"team": "search"}, {"year": {"$gte": "2023"}}]}.',
].join(' ');

const filterSchema = z.record(z.string(), z.unknown()).describe(FILTER_DESCRIPTION);

const metadataSchema = z
  .record(
    z
      .string()
      .min(1)
      .max(METADATA_MAX_KEY_LENGTH)
      .refine((key) => !key.includes('\u0000'), 'must not contain NUL'),
    z.string().max(METADATA_MAX_VALUE_LENGTH),
  )
  .refine((metadata) => Object.keys(metadata).length <= METADATA_MAX_KEYS, {
    message: `at most ${METADATA_MAX_KEYS} keys`,
  })
  .describe(
    `Key-value pairs stored with the document and usable in filters, e.g. {"source": "wiki", "lang": "en"}. String values only; at most ${METADATA_MAX_KEYS} keys, keys 1–${METADATA_MAX_KEY_LENGTH} characters, values at most ${METADATA_MAX_VALUE_LENGTH} characters.`,
  );

const documentId = z.uuid().describe('A document ID (UUID), as returned by the ingest tools.');

const partitionsInput = (what: string) =>
  z
    .array(z.string().regex(new RegExp(PARTITION_PATTERN)))
    .min(1)
    .max(MAX_PARTITIONS_PER_REQUEST)
    .optional()
    .describe(
      `${what} only documents of these partitions (default: every partition the API key may see; one the key is not limited to is an error).`,
    );

const principalsInput = z
  .array(z.string().min(1).max(PRINCIPAL_MAX_LENGTH))
  .max(ACCESS_MAX_PRINCIPALS)
  .optional()
  .describe(
    'Act for these principals (e.g. "group:eng", "user:42"): only documents without an access list or whose list names one of them are seen. Default: the API key’s principals, if it is bound to some; a principal the key is not bound to is an error.',
  );

const accessInput = z
  .array(z.string().min(1).max(PRINCIPAL_MAX_LENGTH))
  .min(1)
  .max(ACCESS_MAX_PRINCIPALS)
  .optional()
  .describe(
    `The document's access list: only requests acting for one of these principals (or for none) see it; at most ${ACCESS_MAX_PRINCIPALS}. Default: none (anyone who may see its partition).`,
  );

const searchInput = {
  query: z
    .string()
    .min(1)
    .max(4096)
    .describe(
      'What to look for. In keyword mode (BM25 with English stemming where configured) use the distinctive words the passage would contain; semantic and hybrid modes also find passages by meaning.',
    ),
  mode: z
    .enum(['keyword', 'semantic', 'hybrid'])
    .optional()
    .describe(
      'keyword (words), semantic (meaning, needs an embedding provider) or hybrid (both). Default: hybrid when the server has an embedding provider, else keyword.',
    ),
  top_k: z
    .number()
    .int()
    .min(1)
    .max(100)
    .optional()
    .describe('How many chunks to return, 1–100 (default 10).'),
  filter: filterSchema.optional(),
  document_ids: z
    .array(documentId)
    .min(1)
    .max(1000)
    .optional()
    .describe('Search only within these documents (at most 1,000).'),
  partitions: partitionsInput('Search'),
  principals: principalsInput,
  rerank: z
    .boolean()
    .optional()
    .describe(
      'Order the best candidates with the server’s reranker (a cross-encoder that reads the query with each passage). Default: on when the server has a reranker; true without one is an error.',
    ),
  rerank_candidates: z
    .number()
    .int()
    .min(1)
    .max(200)
    .optional()
    .describe(
      'With reranking: how many of the first stage’s best chunks the reranker orders, 1–200 (default 50).',
    ),
};

const getDocumentInput = { id: documentId, principals: principalsInput };

const syncSourceInput = {
  id: z.string().min(1).max(64).describe('The source’s id (`src_…`), as list_sources gives it.'),
};

const listDocumentsInput = {
  status: z
    .enum(DOCUMENT_STATUSES as [DocumentStatus, ...DocumentStatus[]])
    .optional()
    .describe('Only documents in this state: queued, processing, ready or failed.'),
  limit: z.number().int().min(1).max(100).optional().describe('Documents per page, 1–100 (default 20).'),
  cursor: z
    .string()
    .min(1)
    .max(512)
    .optional()
    .describe('The next_cursor of the previous page, to read the next one.'),
  filter: filterSchema.optional(),
  document_ids: z
    .array(documentId)
    .min(1)
    .max(100)
    .optional()
    .describe('The status of these documents (at most 100) in one call; unknown ids are left out.'),
  partitions: partitionsInput('List'),
  principals: principalsInput,
};

const chunkSettingsInput = {
  chunk_size: z
    .number()
    .int()
    .min(CHUNK_SIZE.minimum)
    .max(CHUNK_SIZE.maximum)
    .optional()
    .describe(
      `Tokens per chunk, ${CHUNK_SIZE.minimum}–${CHUNK_SIZE.maximum} (default ${CHUNK_SIZE.default}).`,
    ),
  chunk_overlap: z
    .number()
    .int()
    .min(CHUNK_OVERLAP.minimum)
    .max(CHUNK_OVERLAP.maximum)
    .optional()
    .describe(
      `Tokens shared by consecutive chunks, ${CHUNK_OVERLAP.minimum}–${CHUNK_OVERLAP.maximum} and smaller than chunk_size (default ${CHUNK_OVERLAP.default}).`,
    ),
};

/** The tools' chunk settings as the API's client takes them. */
function chunkSettings(args: { chunk_size?: number; chunk_overlap?: number }): {
  chunkSize?: number;
  chunkOverlap?: number;
} {
  return {
    ...(args.chunk_size === undefined ? {} : { chunkSize: args.chunk_size }),
    ...(args.chunk_overlap === undefined ? {} : { chunkOverlap: args.chunk_overlap }),
  };
}

const partitionInput = z
  .string()
  .regex(new RegExp(PARTITION_PATTERN))
  .optional()
  .describe(
    'The partition to add the document to (default: default). A key limited to partitions must name one of its own.',
  );

const ingestTextInput = {
  text: z.string().min(1).describe('The document text (plain text or Markdown).'),
  metadata: metadataSchema.optional(),
  partition: partitionInput,
  access: accessInput,
  ...chunkSettingsInput,
};

const ingestUrlInput = {
  url: z
    .string()
    .min(1)
    .max(8192)
    .describe(
      'A public http(s) URL of a PDF, DOCX, text or Markdown file or an HTML page (pre-signed object-storage URLs work if valid for at least 60 s). Private and local addresses are refused.',
    ),
  metadata: metadataSchema.optional(),
  partition: partitionInput,
  access: accessInput,
  ...chunkSettingsInput,
};

const judgedDocument = z
  .object({
    document_id: documentId.optional(),
    external_id: z.string().min(1).max(255).optional(),
    grade: z
      .number()
      .int()
      .min(0)
      .max(EVALUATION_LIMITS.maxGrade)
      .optional()
      .describe('How relevant: 0 not relevant, higher more (the gain of nDCG); default 1.'),
  })
  .strict()
  .describe('A document that should answer the query: document_id or external_id (one of them).');

const runEvaluationInput = {
  queries: z
    .array(
      z
        .object({
          query: z.string().min(1).max(EVALUATION_LIMITS.queryChars),
          relevant: z.array(judgedDocument).min(1).max(EVALUATION_LIMITS.relevantPerQuery),
        })
        .strict(),
    )
    .min(1)
    .max(EVALUATION_LIMITS.queries)
    .optional()
    .describe(
      `The judged queries to evaluate (at most ${EVALUATION_LIMITS.queries}). Give these to start an evaluation, or evaluation_id to read one.`,
    ),
  runs: z
    .array(
      z
        .object({
          mode: z.enum(['keyword', 'semantic', 'hybrid']).optional(),
          rerank: z.boolean().optional(),
          semantic_weight: z.number().min(0).max(1).optional(),
        })
        .strict(),
    )
    .max(EVALUATION_LIMITS.runs)
    .optional()
    .describe(
      'Query settings to compare, each run over every query; default one run with the server’s defaults.',
    ),
  top_k: z
    .number()
    .int()
    .min(1)
    .max(EVALUATION_LIMITS.maxTopK)
    .optional()
    .describe('Documents ranked per query: the k of Recall@k (default 10).'),
  name: z.string().max(EVALUATION_LIMITS.nameChars).optional(),
  evaluation_id: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .describe(
      'An evaluation started earlier (its evaluation_id), to read its results instead of starting one.',
    ),
};

// ---------------------------------------------------------------------------------------------
// Output schemas: what structured content holds. Document records are open objects, so fields
// the API adds later pass through.

const documentRecordOutput = z.looseObject({
  id: z.string(),
  status: z.enum(DOCUMENT_STATUSES as [DocumentStatus, ...DocumentStatus[]]),
  metadata: z.record(z.string(), z.string()),
  chunk_count: z.number().int().nullable(),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
});

const searchOutput = {
  org_id: z.string(),
  mode: z.enum(['keyword', 'semantic', 'hybrid']),
  degraded: z.boolean(),
  degraded_reasons: z.array(z.enum(['embeddings_unavailable', 'rerank_unavailable'])),
  results: z.array(
    z.object({
      document_id: z.string(),
      chunk_index: z.number().int(),
      text: z.string(),
      score: z
        .number()
        .describe(
          'Higher is better. keyword: the share (0–1) of the most the query could score, comparable across queries; semantic: cosine similarity; hybrid: the fused rank score; reranked: the reranker’s score.',
        ),
      scores: z.object({
        keyword: z.number().nullable(),
        semantic: z.number().nullable(),
        rerank: z.number().nullable(),
      }),
      metadata: z.record(z.string(), z.string()),
      page_start: z.number().int().nullable(),
      page_end: z.number().int().nullable(),
    }),
  ),
};

const listOutput = {
  documents: z.array(documentRecordOutput),
  next_cursor: z.string().nullable(),
};

const ingestOutput = {
  status: z.literal('accepted'),
  org_id: z.string(),
  queued: z.number().int(),
  document_ids: z.array(z.string()),
};

const runOutput = z.looseObject({
  run_id: z.string(),
  status: z.enum(['queued', 'running', 'completed', 'failed']),
  added: z.number().int(),
  updated: z.number().int(),
  deleted: z.number().int(),
  unchanged: z.number().int(),
  failed: z.number().int(),
});

const listSourcesOutput = {
  sources: z.array(
    z.looseObject({
      id: z.string(),
      name: z.string(),
      type: z.string(),
      schedule: z.string(),
      last_run: runOutput.nullable(),
    }),
  ),
};

const syncSourceOutput = { run_id: z.string() };

const WAIT_ADVICE =
  'Processing is asynchronous: call get_document with the returned id until its status is ready (usually seconds; failed carries error.code and error.message) before searching for it.';

/** An MCP server with the docindex tools, answering through `api`. One per connection. */
export function createToolServer(api: DocindexApi, options: ToolServerOptions): McpServer {
  const server = new McpServer(
    { name: 'docindex', title: 'docindex', version: options.version },
    {
      maxToolInputElements: MAX_ARGUMENT_ELEMENTS,
      instructions:
        'docindex indexes an organisation’s documents and searches them. Use search to find passages (each result names its document_id and chunk_index), get_document and list_documents to see documents and their processing status, and ingest_text or ingest_url to add documents; new documents become searchable once their status is ready. list_sources shows the collections (S3 buckets, web sites) kept in sync as documents and sync_source starts a run of one.',
    },
  );

  /** Runs a tool: checks its scope, answers JSON text and structured content, or a tool error. */
  const run =
    <A>(tool: ToolName, call: (args: A) => Promise<object>) =>
    async (args: A): Promise<CallToolResult> => {
      try {
        const scope = TOOL_SCOPES[tool];
        if (options.grantedScopes && !options.grantedScopes.has(scope)) {
          throw ERRORS.insufficientScopeFor(scope, `the MCP tool \`${tool}\``);
        }
        const wholeOrg = WHOLE_ORG_TOOLS[tool];
        if (options.access && wholeOrg) requireEveryPartition(options.access, wholeOrg);
        const result = await call(args);
        return {
          content: [{ type: 'text', text: JSON.stringify(result) }],
          structuredContent: result as Record<string, unknown>,
        };
      } catch (error) {
        return toolError(error, tool, options.onUnexpectedError);
      }
    };

  server.registerTool(
    'search',
    {
      title: 'Search documents',
      description: `Search the organisation’s ready documents and return the best-matching chunks (passages), best first, each with its text, score, document_id, chunk_index, metadata and page range (PDF pages, else null). Narrow with filter (metadata), document_ids and partitions; principals acts for those principals (access lists). Needs the \`${TOOL_SCOPES.search}\` key scope.`,
      inputSchema: searchInput,
      outputSchema: searchOutput,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    run(
      'search',
      (args: {
        query: string;
        top_k?: number;
        filter?: Record<string, unknown>;
        document_ids?: string[];
        partitions?: string[];
        principals?: string[];
        mode?: 'keyword' | 'semantic' | 'hybrid';
        rerank?: boolean;
        rerank_candidates?: number;
      }) =>
        api.search({
          query: args.query,
          ...(args.top_k === undefined ? {} : { topK: args.top_k }),
          ...(args.mode === undefined ? {} : { mode: args.mode }),
          ...(args.rerank === undefined ? {} : { rerank: args.rerank }),
          ...(args.rerank_candidates === undefined ? {} : { rerankCandidates: args.rerank_candidates }),
          ...(args.filter === undefined ? {} : { filter: args.filter as QueryFilter }),
          ...(args.document_ids === undefined ? {} : { documentIds: args.document_ids }),
          ...(args.partitions === undefined ? {} : { partitions: args.partitions }),
          ...(args.principals === undefined ? {} : { principals: args.principals }),
        }),
    ),
  );

  server.registerTool(
    'get_document',
    {
      title: 'Get a document’s status',
      description: `The status record of one document: status (queued → processing → ready | failed), source, metadata, chunk_size, chunk_overlap, chunk_count, token_count, error {code, message} when failed, attempts and timestamps. Use it to wait for an ingested document to be ready. Needs the \`${TOOL_SCOPES.get_document}\` key scope.`,
      inputSchema: getDocumentInput,
      outputSchema: documentRecordOutput,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    run('get_document', (args: { id: string; principals?: string[] }) =>
      api.getDocument(args.id, args.principals),
    ),
  );

  server.registerTool(
    'list_documents',
    {
      title: 'List documents',
      description: `The organisation’s documents, newest first, one page at a time (status records as get_document gives them). Narrow by status, by a metadata filter, by partitions, or ask for the status of many documents at once with document_ids. When next_cursor is not null, pass it as cursor to read the next page. Needs the \`${TOOL_SCOPES.list_documents}\` key scope.`,
      inputSchema: listDocumentsInput,
      outputSchema: listOutput,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    run(
      'list_documents',
      (args: {
        status?: DocumentStatus;
        limit?: number;
        cursor?: string;
        filter?: Record<string, unknown>;
        document_ids?: string[];
        partitions?: string[];
        principals?: string[];
      }) =>
        api.listDocuments({
          ...(args.status === undefined ? {} : { status: args.status }),
          ...(args.limit === undefined ? {} : { limit: args.limit }),
          ...(args.cursor === undefined ? {} : { cursor: args.cursor }),
          ...(args.filter === undefined ? {} : { filter: args.filter as QueryFilter }),
          ...(args.document_ids === undefined ? {} : { ids: args.document_ids }),
          ...(args.partitions === undefined ? {} : { partitions: args.partitions }),
          ...(args.principals === undefined ? {} : { principals: args.principals }),
        }),
    ),
  );

  server.registerTool(
    'ingest_text',
    {
      title: 'Add a text document',
      description: `Add one text document to the index, with optional metadata (for filtering later) and chunk settings. Returns the new document's id in document_ids. ${WAIT_ADVICE} Needs the \`${TOOL_SCOPES.ingest_text}\` key scope.`,
      inputSchema: ingestTextInput,
      outputSchema: ingestOutput,
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
    },
    run(
      'ingest_text',
      (args: {
        text: string;
        metadata?: Metadata;
        partition?: string;
        access?: string[];
        chunk_size?: number;
        chunk_overlap?: number;
      }) =>
        api.ingestText({
          text: args.text,
          ...(args.metadata === undefined ? {} : { metadata: args.metadata }),
          ...(args.partition === undefined ? {} : { partition: args.partition }),
          ...(args.access === undefined ? {} : { access: args.access }),
          ...chunkSettings(args),
        }),
    ),
  );

  server.registerTool(
    'ingest_url',
    {
      title: 'Add a document from a URL',
      description: `Have docindex download a document from a URL and index it (PDF, DOCX, text, Markdown, or the main text of an HTML page), with optional metadata and chunk settings. Returns the new document's id in document_ids. A download that fails later (unreachable, unsupported format, too large) shows as status failed with error.code. ${WAIT_ADVICE} Needs the \`${TOOL_SCOPES.ingest_url}\` key scope.`,
      inputSchema: ingestUrlInput,
      outputSchema: ingestOutput,
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: true,
      },
    },
    run(
      'ingest_url',
      (args: {
        url: string;
        metadata?: Metadata;
        partition?: string;
        access?: string[];
        chunk_size?: number;
        chunk_overlap?: number;
      }) =>
        api.ingestUrl({
          url: args.url,
          ...(args.metadata === undefined ? {} : { metadata: args.metadata }),
          ...(args.partition === undefined ? {} : { partition: args.partition }),
          ...(args.access === undefined ? {} : { access: args.access }),
          ...chunkSettings(args),
        }),
    ),
  );

  server.registerTool(
    'run_evaluation',
    {
      title: 'Measure retrieval quality',
      description: `Run judged queries through search once per run setting and score the rankings: nDCG@10 (grades as gains), Recall@top_k and MRR@10 per run, p50/p95 latency, and per query the ranks of its relevant documents. Waits up to ${Math.round((options.evaluationWaitMs ?? DEFAULT_EVALUATION_WAIT_MS) / 1000)} s; an evaluation still queued or running comes back with its status and evaluation_id: call again with evaluation_id for the results. Judged documents that do not exist are listed per query and left out. Needs the \`${TOOL_SCOPES.run_evaluation}\` key scope.`,
      inputSchema: runEvaluationInput,
      outputSchema: { evaluation_id: z.string(), evaluation: z.looseObject({ status: z.string() }) },
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
    },
    run(
      'run_evaluation',
      async (args: {
        queries?: EvaluationRequest['queries'];
        runs?: EvaluationRequest['runs'];
        top_k?: number;
        name?: string;
        evaluation_id?: string;
      }) => {
        if ((args.queries === undefined) === (args.evaluation_id === undefined)) {
          throw ERRORS.invalid(
            'Give either queries (to start an evaluation) or evaluation_id (to read one).',
          );
        }
        const id =
          args.evaluation_id ??
          (await api.createEvaluation({
            queries: args.queries!,
            ...(args.runs === undefined ? {} : { runs: args.runs }),
            ...(args.top_k === undefined ? {} : { top_k: args.top_k }),
            ...(args.name === undefined ? {} : { name: args.name }),
          }));
        const deadline = Date.now() + (options.evaluationWaitMs ?? DEFAULT_EVALUATION_WAIT_MS);
        for (;;) {
          const evaluation = await api.getEvaluation(id);
          const finished = evaluation.status === 'done' || evaluation.status === 'failed';
          if (finished || Date.now() >= deadline) return { evaluation_id: id, evaluation };
          await new Promise((resolve) => setTimeout(resolve, EVALUATION_POLL_MS));
        }
      },
    ),
  );

  server.registerTool(
    'list_sources',
    {
      title: 'List sources',
      description: `The organisation’s sources: collections (S3 buckets, crawled web sites) whose items are kept in sync as documents, each with its schedule and its newest run (status and counts: added, updated, deleted, unchanged, failed). Documents of a source carry the metadata source_id and source_key (the object key or the page URL), so search can be narrowed to one with filter {"source_id": "…"}. Needs the \`${TOOL_SCOPES.list_sources}\` key scope.`,
      inputSchema: {},
      outputSchema: listSourcesOutput,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    run('list_sources', () => api.listSources()),
  );

  server.registerTool(
    'sync_source',
    {
      title: 'Sync a source now',
      description: `Starts a run of a source: new items are ingested, changed ones become new versions, deleted ones are removed. Returns the run_id; list_sources shows the run’s status and counts. Fails with sync_in_progress while a run of that source is already queued or running. Needs the \`${TOOL_SCOPES.sync_source}\` key scope.`,
      inputSchema: syncSourceInput,
      outputSchema: syncSourceOutput,
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: true,
      },
    },
    run('sync_source', (args: { id: string }) => api.syncSource(args.id)),
  );

  return server;
}

/** The fields a problem carries, whichever side produced it (domain ApiError, client DocindexError). */
interface ProblemLike {
  code: string;
  status: number;
  detail: string;
  errors?: { pointer: string; message: string }[];
}

function problemOf(error: unknown): ProblemLike | null {
  if (error instanceof ApiError) {
    return { code: error.code, status: error.status, detail: error.detail, errors: error.extra.errors ?? [] };
  }
  // The client's DocindexError (and anything shaped like it): a code, a status and a detail.
  if (typeof error === 'object' && error !== null) {
    const { code, status, detail, errors } = error as Partial<ProblemLike>;
    if (typeof code === 'string' && typeof status === 'number' && typeof detail === 'string') {
      return { code, status, detail, errors: Array.isArray(errors) ? errors : [] };
    }
  }
  return null;
}

/** `code: detail`, then one line per field error: what a model needs to correct the call. */
function toolError(
  error: unknown,
  tool: string,
  onUnexpectedError: ToolServerOptions['onUnexpectedError'],
): CallToolResult {
  const problem = problemOf(error);
  if (problem === null) {
    onUnexpectedError?.(error, tool);
    return {
      isError: true,
      content: [{ type: 'text', text: 'internal: An unexpected error occurred; it has been logged.' }],
    };
  }
  const lines = [`${problem.code}: ${problem.detail}`];
  for (const field of problem.errors ?? []) lines.push(`  ${field.pointer || '/'}: ${field.message}`);
  return { isError: true, content: [{ type: 'text', text: lines.join('\n') }] };
}
