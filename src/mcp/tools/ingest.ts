// The ingest tools: a text document (`POST /v1/ingest`) or a URL the service downloads
// (`POST /v1/ingest/url`), each with the same metadata, partition, access list and chunk settings.
import { z } from 'zod';
import type { Metadata } from '../../client/types.js';
import { CHUNK_OVERLAP, CHUNK_SIZE } from '../../domain/chunk-settings.js';
import {
  METADATA_MAX_KEY_LENGTH,
  METADATA_MAX_KEYS,
  METADATA_MAX_VALUE_LENGTH,
} from '../../domain/metadata.js';
import { PARTITION_PATTERN } from '../../domain/partitions.js';
import { ACCESS_MAX_PRINCIPALS, PRINCIPAL_MAX_LENGTH } from '../../domain/principals.js';
import type { IngestFields } from '../api.js';
import { adds, TOOL_SCOPES, type ToolContext } from './shared.js';

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

const accessInput = z
  .array(z.string().min(1).max(PRINCIPAL_MAX_LENGTH))
  .min(1)
  .max(ACCESS_MAX_PRINCIPALS)
  .optional()
  .describe(
    `The document's access list: only requests acting for one of these principals (or for none) see it; at most ${ACCESS_MAX_PRINCIPALS}. Default: none (anyone who may see its partition).`,
  );

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

const partitionInput = z
  .string()
  .regex(new RegExp(PARTITION_PATTERN))
  .optional()
  .describe(
    'The partition to add the document to (default: default). A key limited to partitions must name one of its own.',
  );

/** What both ingest tools take beside the text or the URL. */
const ingestFieldsInput = {
  metadata: metadataSchema.optional(),
  partition: partitionInput,
  access: accessInput,
  ...chunkSettingsInput,
};

/** Those fields as a call's arguments carry them. */
interface IngestArgs {
  metadata?: Metadata;
  partition?: string;
  access?: string[];
  chunk_size?: number;
  chunk_overlap?: number;
}

/** Those fields as DocindexApi takes them. */
function ingestFields(args: IngestArgs): IngestFields {
  return {
    ...(args.metadata === undefined ? {} : { metadata: args.metadata }),
    ...(args.partition === undefined ? {} : { partition: args.partition }),
    ...(args.access === undefined ? {} : { access: args.access }),
    ...(args.chunk_size === undefined ? {} : { chunkSize: args.chunk_size }),
    ...(args.chunk_overlap === undefined ? {} : { chunkOverlap: args.chunk_overlap }),
  };
}

const ingestTextInput = {
  text: z.string().min(1).describe('The document text (plain text or Markdown).'),
  ...ingestFieldsInput,
};

const ingestUrlInput = {
  url: z
    .string()
    .min(1)
    .max(8192)
    .describe(
      'A public http(s) URL of a PDF, DOCX, text or Markdown file or an HTML page (pre-signed object-storage URLs work if valid for at least 60 s). Private and local addresses are refused.',
    ),
  ...ingestFieldsInput,
};

const ingestOutput = {
  status: z.literal('accepted'),
  org_id: z.string(),
  queued: z.number().int(),
  document_ids: z.array(z.string()),
};

const WAIT_ADVICE =
  'Processing is asynchronous: call get_document with the returned id until its status is ready (usually seconds; failed carries error.code and error.message) before searching for it.';

export function registerIngestTools({ server, api, run }: ToolContext): void {
  server.registerTool(
    'ingest_text',
    {
      title: 'Add a text document',
      description: `Add one text document to the index, with optional metadata (for filtering later) and chunk settings. Returns the new document's id in document_ids. ${WAIT_ADVICE} Needs the \`${TOOL_SCOPES.ingest_text}\` key scope.`,
      inputSchema: ingestTextInput,
      outputSchema: ingestOutput,
      annotations: adds(false),
    },
    run('ingest_text', (args: IngestArgs & { text: string }) =>
      api.ingestText({ text: args.text, ...ingestFields(args) }),
    ),
  );

  server.registerTool(
    'ingest_url',
    {
      title: 'Add a document from a URL',
      description: `Have docindex download a document from a URL and index it (PDF, DOCX, text, Markdown, or the main text of an HTML page), with optional metadata and chunk settings. Returns the new document's id in document_ids. A download that fails later (unreachable, unsupported format, too large) shows as status failed with error.code. ${WAIT_ADVICE} Needs the \`${TOOL_SCOPES.ingest_url}\` key scope.`,
      inputSchema: ingestUrlInput,
      outputSchema: ingestOutput,
      annotations: adds(true),
    },
    run('ingest_url', (args: IngestArgs & { url: string }) =>
      api.ingestUrl({ url: args.url, ...ingestFields(args) }),
    ),
  );
}
