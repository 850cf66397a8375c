// Request and response schemas (TypeBox → JSON Schema): one source for validation, response
// serialisation and the OpenAPI document.
import { type Static, Type } from '@sinclair/typebox';
import type { ErrorCode } from '../domain/errors.js';
import { statusOf } from '../domain/errors.js';
import {
  FILTER_MAX_CONDITIONS,
  FILTER_MAX_DEPTH,
  FILTER_MAX_LIST_VALUES,
  type FilterJson,
} from '../domain/filter.js';
import {
  METADATA_MAX_KEY_LENGTH,
  METADATA_MAX_KEYS,
  METADATA_MAX_VALUE_LENGTH,
  type MetadataPatch,
} from '../domain/metadata.js';
import { DOCUMENT_STATUSES } from '../domain/types.js';

export { METADATA_MAX_KEY_LENGTH, METADATA_MAX_KEYS, METADATA_MAX_VALUE_LENGTH };

/** Keys are kept as sent: a NUL in one could not be stored apart from the key without it. */
const METADATA_KEY = { minLength: 1, maxLength: METADATA_MAX_KEY_LENGTH, pattern: '^[^\\u0000]*$' };

export const Metadata = Type.Unsafe<Record<string, string>>({
  type: 'object',
  description: `String values only; at most ${METADATA_MAX_KEYS} keys, keys 1–${METADATA_MAX_KEY_LENGTH} characters, values at most ${METADATA_MAX_VALUE_LENGTH} characters.`,
  maxProperties: METADATA_MAX_KEYS,
  propertyNames: METADATA_KEY,
  additionalProperties: { type: 'string', maxLength: METADATA_MAX_VALUE_LENGTH },
});

/** PATCH /v1/documents/{id}: a string sets a key, null removes it, other keys stay. */
export const MetadataPatchBody = Type.Object(
  {
    metadata: Type.Unsafe<MetadataPatch>({
      type: 'object',
      description: `Keys to set (string) or remove (null); keys not named stay as they are. At most ${METADATA_MAX_KEYS} keys in the request and on the document after the merge.`,
      maxProperties: METADATA_MAX_KEYS,
      propertyNames: METADATA_KEY,
      additionalProperties: {
        anyOf: [{ type: 'string', maxLength: METADATA_MAX_VALUE_LENGTH }, { type: 'null' }],
      },
    }),
  },
  { additionalProperties: false },
);

const DocumentId = Type.String({ format: 'uuid', description: 'Document ID (UUID).' });

const FILTER_LANGUAGE = `Metadata filter. \`{"key": "v"}\` (equal), \`{"key": ["a", "b"]}\` (any of), or an operator object \`{"key": {"$eq"|"$ne"|"$gt"|"$gte"|"$lt"|"$lte": "v", "$in"|"$nin": ["a"], "$exists": true|false}}\`; \`{"$and": [f, …]}\`, \`{"$or": [f, …]}\`, \`{"$not": f}\`. Several entries in one object must all hold. Values are strings and compare by Unicode code point (ISO-8601 dates order correctly). A comparison or $in on a missing key is false, so $ne, $nin and $not match documents without the key. At most ${FILTER_MAX_DEPTH} levels of nesting, ${FILTER_MAX_CONDITIONS} conditions and ${FILTER_MAX_LIST_VALUES} values per list; lists and $and/$or may not be empty. A filter outside the language is a 400 whose \`errors[].pointer\` names the bad part.`;

/**
 * The filter language. Checked by domain/filter.ts rather than here, so that every violation is
 * answered with a pointer to the exact part and a message that names the rule.
 */
export const FilterSchema = Type.Unsafe<FilterJson>({ type: 'object', description: FILTER_LANGUAGE });

export const IngestBody = Type.Object(
  {
    documents: Type.Array(
      Type.Object(
        {
          text: Type.String({ minLength: 1, description: 'The document text.' }),
          metadata: Type.Optional(Metadata),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 50, description: 'At most 50 documents per request.' },
    ),
    chunk_size: Type.Integer({ minimum: 128, maximum: 4096, default: 512, description: 'Tokens per chunk.' }),
    chunk_overlap: Type.Integer({
      minimum: 0,
      maximum: 512,
      default: 64,
      description: 'Tokens shared by consecutive chunks; must be smaller than chunk_size.',
    }),
  },
  { additionalProperties: false },
);
export type IngestBody = Static<typeof IngestBody>;

export const IngestUrlBody = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 8192, description: 'An http or https URL to download.' }),
    metadata: Type.Optional(Metadata),
  },
  { additionalProperties: false },
);
export type IngestUrlBody = Static<typeof IngestUrlBody>;

export const IngestAck = Type.Object({
  status: Type.Literal('accepted'),
  org_id: Type.String(),
  queued: Type.Integer(),
  document_ids: Type.Array(Type.String()),
});

const Nullable = <T extends ReturnType<typeof Type.String> | ReturnType<typeof Type.Integer>>(schema: T) =>
  Type.Union([schema, Type.Null()]);

export const DocumentStatusSchema = Type.Union(DOCUMENT_STATUSES.map((s) => Type.Literal(s)));

export const DocumentRecordSchema = Type.Object({
  id: Type.String(),
  org_id: Type.String(),
  status: DocumentStatusSchema,
  source: Type.Object({
    type: Type.Union([Type.Literal('text'), Type.Literal('file'), Type.Literal('url')]),
    filename: Nullable(Type.String()),
    url: Nullable(Type.String({ description: 'The URL without its query string.' })),
    content_type: Nullable(Type.String()),
    bytes: Nullable(Type.Integer()),
  }),
  metadata: Type.Record(Type.String(), Type.String()),
  chunk_size: Type.Integer(),
  chunk_overlap: Type.Integer(),
  tokenizer: Type.String(),
  chunk_count: Nullable(Type.Integer()),
  token_count: Nullable(Type.Integer()),
  content_sha256: Nullable(Type.String({ description: 'SHA-256 of the extracted text, once ready.' })),
  error: Type.Union([Type.Object({ code: Type.String(), message: Type.String() }), Type.Null()]),
  attempts: Type.Integer(),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});

export const DocumentParams = Type.Object(
  { id: Type.String({ maxLength: 64 }) },
  { additionalProperties: false },
);

export const ListDocumentsQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
    cursor: Type.Optional(Type.String({ maxLength: 512 })),
    status: Type.Optional(DocumentStatusSchema),
    ids: Type.Optional(
      Type.String({ maxLength: 4000, description: 'Comma-separated document IDs (at most 100).' }),
    ),
    content_sha256: Type.Optional(Type.String({ pattern: '^[0-9a-f]{64}$' })),
    filter: Type.Optional(
      Type.String({
        maxLength: 16_384,
        description: `A metadata filter as URL-encoded JSON. ${FILTER_LANGUAGE}`,
      }),
    ),
  },
  { additionalProperties: false },
);
export type ListDocumentsQuery = Static<typeof ListDocumentsQuery>;

export const DocumentList = Type.Object({
  documents: Type.Array(DocumentRecordSchema),
  next_cursor: Nullable(Type.String()),
});

export const ChunkListQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
    cursor: Type.Optional(Type.String({ maxLength: 512 })),
  },
  { additionalProperties: false },
);
export type ChunkListQuery = Static<typeof ChunkListQuery>;

export const ChunkList = Type.Object({
  chunks: Type.Array(
    Type.Object({
      index: Type.Integer({ description: '0-based position of the chunk in the document.' }),
      text: Type.String(),
      token_count: Type.Integer(),
      page_start: Nullable(Type.Integer()),
      page_end: Nullable(Type.Integer()),
    }),
  ),
  next_cursor: Nullable(Type.String()),
});

export const QueryBody = Type.Object(
  {
    query: Type.String({ minLength: 1, maxLength: 4096 }),
    top_k: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
    filter: Type.Optional(FilterSchema),
    document_ids: Type.Optional(Type.Array(DocumentId, { minItems: 1, maxItems: 1000 })),
  },
  { additionalProperties: false },
);
export type QueryBody = Static<typeof QueryBody>;

export const DeleteDocumentsBody = Type.Object(
  {
    filter: Type.Optional(FilterSchema),
    document_ids: Type.Optional(
      Type.Array(DocumentId, {
        minItems: 1,
        maxItems: 1000,
        description: 'Delete only these documents (with `filter`: those of them that pass it).',
      }),
    ),
  },
  { additionalProperties: false },
);
export type DeleteDocumentsBody = Static<typeof DeleteDocumentsBody>;

export const DeleteDocumentsResponse = Type.Object({
  deleted: Type.Integer({ description: 'Documents deleted by this request.' }),
  has_more: Type.Boolean({
    description: 'Whether more documents still match (past the per-request limit): send the request again.',
  }),
});

export const QueryResponse = Type.Object({
  org_id: Type.String(),
  results: Type.Array(
    Type.Object({
      document_id: Type.String(),
      chunk_index: Type.Integer(),
      text: Type.String(),
      score: Type.Number(),
      metadata: Type.Record(Type.String(), Type.String()),
      page_start: Nullable(Type.Integer()),
      page_end: Nullable(Type.Integer()),
    }),
  ),
});

export const UsageResponse = Type.Object({
  org_id: Type.String(),
  period_days: Type.Integer(),
  total_queries: Type.Integer(),
  daily: Type.Array(Type.Object({ date: Type.String({ format: 'date' }), count: Type.Integer() })),
  rate_limit_rpm: Type.Integer(),
});

export const Problem = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.String(),
    errors: Type.Optional(Type.Array(Type.Object({ pointer: Type.String(), message: Type.String() }))),
    request_id: Type.String(),
  },
  { description: 'RFC 9457 problem details (application/problem+json).' },
);

/** Response schemas for the given error codes, keyed by status, for a route's `response`. */
export function problemResponses(...codes: ErrorCode[]): Record<number, typeof Problem> {
  const out: Record<number, typeof Problem> = {};
  for (const code of codes) out[statusOf(code)] = Problem;
  return out;
}

/** Errors every authenticated /v1 route can answer with. */
export const COMMON_ERRORS: ErrorCode[] = [
  'invalid_request',
  'unauthorized',
  'insufficient_scope',
  'rate_limited',
  'service_unavailable',
];
