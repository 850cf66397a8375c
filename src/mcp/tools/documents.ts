// The document tools: one document's status record (`GET /v1/documents/{id}`) and the
// organisation's documents a page at a time (`GET /v1/documents`).
import { z } from 'zod';
import type { DocumentStatus, QueryFilter } from '../../client/types.js';
import { DOCUMENT_STATUSES } from '../../domain/types.js';
import {
  documentId,
  documentRecordOutput,
  filterSchema,
  partitionsInput,
  principalsInput,
} from './schemas.js';
import { READS, TOOL_SCOPES, type ToolContext } from './shared.js';

const getDocumentInput = { id: documentId, principals: principalsInput };

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

const listOutput = {
  documents: z.array(documentRecordOutput),
  next_cursor: z.string().nullable(),
};

export function registerDocumentTools({ server, api, run }: ToolContext): void {
  server.registerTool(
    'get_document',
    {
      title: 'Get a document’s status',
      description: `The status record of one document: status (queued → processing → ready | failed), source, metadata, chunk_size, chunk_overlap, chunk_count, token_count, error {code, message} when failed, attempts and timestamps. Use it to wait for an ingested document to be ready. Needs the \`${TOOL_SCOPES.get_document}\` key scope.`,
      inputSchema: getDocumentInput,
      outputSchema: documentRecordOutput,
      annotations: READS,
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
      annotations: READS,
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
}
