// Request and response schemas (TypeBox → JSON Schema): one source for validation, response
// serialisation and the OpenAPI document.
import { type Static, Type } from '@sinclair/typebox';
import { CHUNK_OVERLAP, CHUNK_SIZE } from '../domain/chunk-settings.js';
import { ApiError, ERRORS, type ErrorCode, titleOf } from '../domain/errors.js';
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
import { MAX_PARTITIONS_PER_REQUEST, PARTITION_PATTERN } from '../domain/partitions.js';
import { ACCESS_MAX_PRINCIPALS, PRINCIPAL_MAX_LENGTH } from '../domain/principals.js';
import { SCOPE_MEANINGS, SCOPES } from '../domain/scopes.js';
import { DOCUMENT_STATUSES, MAX_EXTERNAL_ID_LENGTH } from '../domain/types.js';

export { METADATA_MAX_KEY_LENGTH, METADATA_MAX_KEYS, METADATA_MAX_VALUE_LENGTH };

// Sample values for the examples on the schemas below (and in admin-schemas.ts). Each example is
// checked against its own schema by test/openapi/document.test.ts and by Spectral.
export const EXAMPLE_ORG_ID = 'org_5d1f0c9e8b7a4e2f9c3d6a1b0e4f7c2d';
export const EXAMPLE_KEY_ID = 'key_7c4e2a9b1d3f4e6a8b0c2d4e6f8a1b3c';
export const EXAMPLE_DOCUMENT_ID = '3f8c1a52-9d4e-4b7a-8e21-6c0d5f9a7b13';
export const EXAMPLE_OTHER_DOCUMENT_ID = 'b21e7d44-0c5a-4f3e-9a86-d1f27c3e5b90';
export const EXAMPLE_REQUEST_ID = 'req_9b2f4c1d7e8a4f0b8c6d2e1f3a5b7c9d';
export const EXAMPLE_CURSOR = 'eyJ0IjoiMjAyNi0wMy0xNVQxMjowMDowMC4wMDBaIiwiaSI6IjNmOGMxYTUyIn0';

/** Keys are kept as sent: a NUL in one could not be stored apart from the key without it. */
const METADATA_KEY = { minLength: 1, maxLength: METADATA_MAX_KEY_LENGTH, pattern: '^[^\\u0000]*$' };

export const Metadata = Type.Unsafe<Record<string, string>>({
  type: 'object',
  description: `String values only; at most ${METADATA_MAX_KEYS} keys, keys 1–${METADATA_MAX_KEY_LENGTH} characters, values at most ${METADATA_MAX_VALUE_LENGTH} characters.`,
  maxProperties: METADATA_MAX_KEYS,
  propertyNames: METADATA_KEY,
  additionalProperties: { type: 'string', maxLength: METADATA_MAX_VALUE_LENGTH },
});

/** A principal: who a document's access list names and a request acts for. */
const Principal = Type.String({ minLength: 1, maxLength: PRINCIPAL_MAX_LENGTH });

/** A document's access list (domain/principals.ts). */
export const AccessList = (description: string) =>
  Type.Array(Principal, {
    minItems: 1,
    maxItems: ACCESS_MAX_PRINCIPALS,
    description: `${description} At most ${ACCESS_MAX_PRINCIPALS} principals of 1 to ${PRINCIPAL_MAX_LENGTH} characters, e.g. \`group:eng\`, \`user:42\`.`,
    examples: [['group:eng', 'user:42']],
  });

const ACCESS_ON_INGEST =
  'The principals that may see the document: a request acting for principals sees it only if one of them is here. Absent: no access list (anyone who may see its partition). A new version by `external_id` takes the access list of its request, as it takes its metadata.';

/** `principals: [..]` of a query or a delete: who the request acts for. */
export const PrincipalNames = Type.Array(Principal, {
  maxItems: ACCESS_MAX_PRINCIPALS,
  description:
    'Act for these principals: only documents without an access list, or whose list names one of them, are seen (an empty list: only documents without one). Default: the API key’s principals if it is bound to some, else no restriction. A key bound to principals may name only its own (403 `principal_forbidden`).',
  examples: [['group:eng', 'user:42']],
});

/** `?principals=a,b` of a route without a JSON body of its own. */
export const PRINCIPALS_PARAM = Type.Optional(
  Type.String({
    maxLength: ACCESS_MAX_PRINCIPALS * (PRINCIPAL_MAX_LENGTH + 1),
    description:
      'Comma-separated principals the request acts for: it sees the document only if it has no access list or its list names one of them (an empty value: only documents without one). Default: the API key’s principals if it is bound to some, else no restriction. A key bound to principals may name only its own (403 `principal_forbidden`); a document it may not see is 404.',
  }),
);

/** The query string of a single-document route: only `principals`. */
export const PrincipalsQuery = Type.Object({ principals: PRINCIPALS_PARAM }, { additionalProperties: false });
export type PrincipalsQuery = Static<typeof PrincipalsQuery>;

/** PATCH /v1/documents/{id}: a string sets a key, null removes it, other keys stay. */
export const MetadataPatchBody = Type.Object(
  {
    metadata: Type.Optional(
      Type.Unsafe<MetadataPatch>({
        type: 'object',
        description: `Keys to set (string) or remove (null); keys not named stay as they are. At most ${METADATA_MAX_KEYS} keys in the request and on the document after the merge.`,
        maxProperties: METADATA_MAX_KEYS,
        propertyNames: METADATA_KEY,
        additionalProperties: {
          anyOf: [{ type: 'string', maxLength: METADATA_MAX_VALUE_LENGTH }, { type: 'null' }],
        },
      }),
    ),
    access: Type.Optional(
      Type.Union([AccessList('Replaces the document’s access list.'), Type.Null()], {
        description: 'A list replaces the document’s access list; null removes it; absent keeps it.',
      }),
    ),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    examples: [{ metadata: { status: 'archived', draft: null } }, { access: ['group:eng'] }],
  },
);
export type MetadataPatchBody = Static<typeof MetadataPatchBody>;

const DocumentId = Type.String({
  format: 'uuid',
  description: 'Document ID (UUID).',
  examples: [EXAMPLE_DOCUMENT_ID],
});

const FILTER_LANGUAGE = `Metadata filter. \`{"key": "v"}\` (equal), \`{"key": ["a", "b"]}\` (any of), or an operator object \`{"key": {"$eq"|"$ne"|"$gt"|"$gte"|"$lt"|"$lte": "v", "$in"|"$nin": ["a"], "$exists": true|false}}\`; \`{"$and": [f, …]}\`, \`{"$or": [f, …]}\`, \`{"$not": f}\`. Several entries in one object must all hold. Values are strings and compare by Unicode code point (ISO-8601 dates order correctly). A comparison or $in on a missing key is false, so $ne, $nin and $not match documents without the key. At most ${FILTER_MAX_DEPTH} levels of nesting, ${FILTER_MAX_CONDITIONS} conditions and ${FILTER_MAX_LIST_VALUES} values per list; lists and $and/$or may not be empty. A filter outside the language is a 400 whose \`errors[].pointer\` names the bad part.`;

/**
 * The filter language. Checked by domain/filter.ts rather than here, so that every violation is
 * answered with a pointer to the exact part and a message that names the rule.
 */
export const FilterSchema = Type.Unsafe<FilterJson>({ type: 'object', description: FILTER_LANGUAGE });

export const ExternalId = Type.String({
  minLength: 1,
  maxLength: MAX_EXTERNAL_ID_LENGTH,
  description:
    'Your own key for the document, unique in your organisation. Ingesting an external_id that a document already has makes a new version of that document (the ack returns its id); the previous version answers queries until the new one is ready.',
  examples: ['crm-ticket-4711'],
});

/** A partition's name (domain/partitions.ts). */
export const PartitionName = Type.String({
  pattern: PARTITION_PATTERN,
  description:
    'A partition of your organisation: lower-case letters, digits, `_` and `-`, at most 64 characters. Every document belongs to one (`default` when none is named), fixed for its life.',
  examples: ['support'],
});

/** `partitions: [..]` of a query or a delete: a subset of those the key may see. */
const PartitionNames = (what: string) =>
  Type.Array(PartitionName, {
    minItems: 1,
    maxItems: MAX_PARTITIONS_PER_REQUEST,
    description: `${what} only documents of these partitions. Default: every partition the API key may see; naming one the key is not limited to is a 403 \`partition_forbidden\`.`,
  });

export const LanguageCode = Type.String({
  pattern: '^[a-z]{2}$',
  description:
    'The language of the text, an ISO 639-1 code (`en`, `de`, `zh`, …): its words are analysed in it (stemming, word segmentation). Absent: told from the text (the server’s SEARCH_LANGUAGE decides when it cannot be).',
  examples: ['de'],
});

/** Tokens per chunk, within the bounds every form that takes it shares. */
export const ChunkSize = (options: { default?: number; description?: string } = {}) =>
  Type.Integer({
    minimum: CHUNK_SIZE.minimum,
    maximum: CHUNK_SIZE.maximum,
    description: 'Tokens per chunk.',
    ...options,
  });

/** Tokens shared by consecutive chunks, within the bounds every form that takes it shares. */
export const ChunkOverlap = (options: { default?: number; description?: string } = {}) =>
  Type.Integer({
    minimum: CHUNK_OVERLAP.minimum,
    maximum: CHUNK_OVERLAP.maximum,
    description: 'Tokens shared by consecutive chunks; must be smaller than chunk_size.',
    ...options,
  });

/** The descriptions of a form where the settings may be left out. */
export const CHUNK_SIZE_WITH_DEFAULT = `Tokens per chunk (default ${CHUNK_SIZE.default}).`;
export const CHUNK_OVERLAP_WITH_DEFAULT = `Tokens shared by consecutive chunks, smaller than chunk_size (default ${CHUNK_OVERLAP.default}).`;

export const IngestBody = Type.Object(
  {
    documents: Type.Array(
      Type.Object(
        {
          text: Type.String({ minLength: 1, description: 'The document text.' }),
          metadata: Type.Optional(Metadata),
          external_id: Type.Optional(ExternalId),
          language: Type.Optional(LanguageCode),
          partition: Type.Optional(
            Type.String({
              pattern: PARTITION_PATTERN,
              description: 'This document’s partition; absent: the request’s `partition`, else `default`.',
            }),
          ),
          access: Type.Optional(AccessList(ACCESS_ON_INGEST)),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 50, description: 'At most 50 documents per request.' },
    ),
    partition: Type.Optional(
      Type.String({
        pattern: PARTITION_PATTERN,
        description:
          'The partition of every document that names none (default `default`). A key limited to partitions may ingest only into its own (403 `partition_forbidden`).',
      }),
    ),
    chunk_size: ChunkSize({ default: CHUNK_SIZE.default }),
    chunk_overlap: ChunkOverlap({ default: CHUNK_OVERLAP.default }),
  },
  {
    additionalProperties: false,
    examples: [
      {
        documents: [
          {
            text: 'Refunds are accepted within 30 days of purchase with the original receipt.',
            metadata: { source: 'policies', team: 'support' },
          },
        ],
        chunk_size: 512,
        chunk_overlap: 64,
      },
    ],
  },
);
export type IngestBody = Static<typeof IngestBody>;

export const IngestUrlBody = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 8192, description: 'An http or https URL to download.' }),
    metadata: Type.Optional(Metadata),
    external_id: Type.Optional(ExternalId),
    language: Type.Optional(LanguageCode),
    partition: Type.Optional(PartitionName),
    access: Type.Optional(AccessList(ACCESS_ON_INGEST)),
    chunk_size: Type.Optional(ChunkSize({ description: CHUNK_SIZE_WITH_DEFAULT })),
    chunk_overlap: Type.Optional(ChunkOverlap({ description: CHUNK_OVERLAP_WITH_DEFAULT })),
  },
  {
    additionalProperties: false,
    examples: [
      {
        url: 'https://example.com/reports/annual-report-2025.pdf',
        metadata: { source: 'website', year: '2025' },
      },
    ],
  },
);
export type IngestUrlBody = Static<typeof IngestUrlBody>;

export const IngestAck = Type.Object(
  {
    status: Type.Literal('accepted'),
    org_id: Type.String({ description: 'The calling organisation.' }),
    queued: Type.Integer({ description: 'Documents queued by this request.' }),
    document_ids: Type.Array(Type.String(), {
      description: 'One ID per queued document, in the order sent; poll GET /v1/documents/{id}.',
    }),
  },
  {
    description: 'Accepted: the documents are stored and queued for processing.',
    examples: [
      {
        status: 'accepted',
        org_id: EXAMPLE_ORG_ID,
        queued: 1,
        document_ids: [EXAMPLE_DOCUMENT_ID],
      },
    ],
  },
);

export const DocumentStatusSchema = Type.Union(
  DOCUMENT_STATUSES.map((s) => Type.Literal(s)),
  { description: 'Processing state: queued → processing → ready | failed.' },
);

/** A document that was processed: the first example of a document record. */
const READY_DOCUMENT = {
  id: EXAMPLE_DOCUMENT_ID,
  org_id: EXAMPLE_ORG_ID,
  external_id: 'handbook-2026',
  partition: 'default',
  access: null,
  version: 2,
  pending_version: { version: 3, status: 'processing', error: null },
  status: 'ready',
  source: {
    type: 'file',
    filename: 'employee-handbook.pdf',
    url: null,
    content_type: 'application/pdf',
    bytes: 482_113,
  },
  metadata: { source: 'hr', year: '2026' },
  chunk_size: 512,
  chunk_overlap: 64,
  tokenizer: 'o200k_base',
  chunk_count: 37,
  token_count: 16_420,
  content_sha256: '9f2c6a0e51b84d7f3a6e2c19d0b5f87a4e3c1d2b6a9f08e7c5d4b3a2f1e0d9c8',
  ocr_pages: 0,
  language: 'en',
  error: null,
  attempts: 1,
  vectors: { status: 'ready', model: 'text-embedding-3-small', error: null },
  created_at: '2026-03-15T12:00:00.000Z',
  updated_at: '2026-03-15T12:00:04.812Z',
};

const FAILED_DOCUMENT = {
  id: EXAMPLE_OTHER_DOCUMENT_ID,
  org_id: EXAMPLE_ORG_ID,
  external_id: null,
  partition: 'support',
  access: ['group:support', 'user:42'],
  version: 1,
  pending_version: null,
  status: 'failed',
  source: {
    type: 'url',
    filename: null,
    url: 'https://example.com/reports/annual-report-2025.pdf',
    content_type: null,
    bytes: null,
  },
  metadata: {},
  chunk_size: 512,
  chunk_overlap: 64,
  tokenizer: 'o200k_base',
  chunk_count: null,
  token_count: null,
  content_sha256: null,
  ocr_pages: null,
  language: null,
  error: { code: 'url_unreachable', message: 'The server answered 404 Not Found.' },
  attempts: 1,
  vectors: { status: 'failed', model: 'text-embedding-3-small', error: null },
  created_at: '2026-03-15T11:58:10.000Z',
  updated_at: '2026-03-15T11:58:11.250Z',
};

const Nullable = <
  T extends ReturnType<typeof Type.String> | ReturnType<typeof Type.Integer> | ReturnType<typeof Type.Number>,
>(
  schema: T,
) => Type.Union([schema, Type.Null()]);

export const DocumentRecordSchema = Type.Object(
  {
    id: Type.String({ description: 'Document ID (UUID).' }),
    org_id: Type.String(),
    external_id: Type.Union([Type.String(), Type.Null()], {
      description: 'Your own key for the document, if you gave one at ingest.',
    }),
    partition: Type.String({
      description: 'The partition the document belongs to (`default` when none was named at ingest).',
    }),
    access: Type.Union([Type.Array(Type.String()), Type.Null()], {
      description:
        'The principals that may see the document (its access list); null: none, anyone who may see its partition sees it.',
    }),
    version: Type.Integer({
      minimum: 1,
      description:
        'The version that `status`, the counts, the chunks, /content and /file describe: 1, then one more for each new content (PUT /content, re-ingest of the external_id, reprocess).',
    }),
    pending_version: Type.Union(
      [
        Type.Object({
          version: Type.Integer({ minimum: 2 }),
          status: Type.Union([Type.Literal('queued'), Type.Literal('processing'), Type.Literal('failed')]),
          error: Type.Union([Type.Object({ code: Type.String(), message: Type.String() }), Type.Null()]),
        }),
        Type.Null(),
      ],
      {
        description:
          'A newer version on its way while `version` keeps answering queries; it replaces it in one step once ready. `failed`: it could not be indexed and `version` stays (the error says why). null when there is none.',
      },
    ),
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
    ocr_pages: Nullable(
      Type.Integer({
        description:
          'Pages whose text OCR recognised (an image upload counts as one page), once ready; 0 for a PDF whose every page had a text layer; null for formats that never need OCR.',
      }),
    ),
    language: Nullable(
      Type.String({
        description:
          'The language (ISO 639-1) the document’s words were analysed in, once indexed: the one given at ingest, else the one told from its text; null before, or when the server analyses without stemming (SEARCH_LANGUAGE=none).',
      }),
    ),
    error: Type.Union([Type.Object({ code: Type.String(), message: Type.String() }), Type.Null()], {
      description: 'Why processing failed (status `failed`), else null.',
    }),
    attempts: Type.Integer({ description: 'Processing runs so far.' }),
    vectors: Type.Object(
      {
        status: Type.Union(
          [Type.Literal('pending'), Type.Literal('ready'), Type.Literal('failed'), Type.Literal('disabled')],
          {
            description:
              'The second stage, embedding the chunks for semantic search (after `ready`): `disabled` without an embedding provider, `pending` until the vectors are written (a provider outage keeps it pending, with the last error), then `ready` or `failed`.',
          },
        ),
        model: Nullable(Type.String({ description: 'The embedding model (null when disabled).' })),
        error: Type.Union([Type.Object({ code: Type.String(), message: Type.String() }), Type.Null()], {
          description:
            'The last embedding failure (`unreachable`, `timeout`, `rate_limited`, `server_error`, `rejected` …), else null.',
        }),
      },
      { description: 'Where the document’s vectors stand.' },
    ),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { description: 'A document and its processing status.', examples: [READY_DOCUMENT, FAILED_DOCUMENT] },
);

export const DocumentParams = Type.Object(
  { id: Type.String({ maxLength: 64, description: 'Document ID (UUID).', examples: [EXAMPLE_DOCUMENT_ID] }) },
  { additionalProperties: false },
);

export const PAGE_LIMIT = (what: string) =>
  Type.Integer({ minimum: 1, maximum: 100, default: 20, description: `${what} per page.` });
export const PAGE_CURSOR = Type.Optional(
  Type.String({ maxLength: 512, description: 'The `next_cursor` of the previous page.' }),
);

export const ListDocumentsQuery = Type.Object(
  {
    limit: PAGE_LIMIT('Documents'),
    cursor: PAGE_CURSOR,
    status: Type.Optional(DocumentStatusSchema),
    ids: Type.Optional(
      Type.String({ maxLength: 4000, description: 'Comma-separated document IDs (at most 100).' }),
    ),
    content_sha256: Type.Optional(
      Type.String({
        pattern: '^[0-9a-f]{64}$',
        description: 'Only documents whose extracted text has this SHA-256 (lower-case hex).',
      }),
    ),
    external_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_EXTERNAL_ID_LENGTH,
        description: 'Only the document with this external_id (at most one).',
      }),
    ),
    filter: Type.Optional(
      Type.String({
        maxLength: 16_384,
        description: `A metadata filter as URL-encoded JSON. ${FILTER_LANGUAGE}`,
      }),
    ),
    partitions: Type.Optional(
      Type.String({
        maxLength: 6600,
        description:
          'Comma-separated partition names: only documents of these. Default: every partition the API key may see; one the key is not limited to is a 403 `partition_forbidden`.',
      }),
    ),
    principals: PRINCIPALS_PARAM,
  },
  { additionalProperties: false },
);
export type ListDocumentsQuery = Static<typeof ListDocumentsQuery>;

export const DocumentList = Type.Object(
  {
    documents: Type.Array(DocumentRecordSchema),
    next_cursor: Nullable(
      Type.String({ description: 'Pass as `cursor` for the next page; null on the last.' }),
    ),
  },
  {
    description: 'A page of documents, newest first.',
    examples: [{ documents: [READY_DOCUMENT, FAILED_DOCUMENT], next_cursor: EXAMPLE_CURSOR }],
  },
);

export const ChunkListQuery = Type.Object(
  { limit: PAGE_LIMIT('Chunks'), cursor: PAGE_CURSOR, principals: PRINCIPALS_PARAM },
  { additionalProperties: false },
);
export type ChunkListQuery = Static<typeof ChunkListQuery>;

export const ChunkList = Type.Object(
  {
    chunks: Type.Array(
      Type.Object({
        index: Type.Integer({ description: '0-based position of the chunk in the document.' }),
        text: Type.String(),
        token_count: Type.Integer(),
        page_start: Nullable(
          Type.Integer({ description: 'First page (PDF, 1-based); null for other formats.' }),
        ),
        page_end: Nullable(
          Type.Integer({ description: 'Last page (PDF, 1-based); null for other formats.' }),
        ),
      }),
    ),
    next_cursor: Nullable(
      Type.String({ description: 'Pass as `cursor` for the next page; null on the last.' }),
    ),
  },
  {
    description: 'A page of the document’s chunks, in order.',
    examples: [
      {
        chunks: [
          {
            index: 0,
            text: 'Employee handbook. 1. Working hours. The core hours are 10:00 to 16:00…',
            token_count: 512,
            page_start: 1,
            page_end: 2,
          },
          {
            index: 1,
            text: '…to 16:00. 2. Holidays. Each employee has 25 days of paid leave a year…',
            token_count: 498,
            page_start: 2,
            page_end: 3,
          },
        ],
        next_cursor: null,
      },
    ],
  },
);

export const QueryBody = Type.Object(
  {
    query: Type.String({ minLength: 1, maxLength: 4096, description: 'The words to search for.' }),
    top_k: Type.Integer({ minimum: 1, maximum: 100, default: 10, description: 'Chunks to return.' }),
    filter: Type.Optional(FilterSchema),
    document_ids: Type.Optional(
      Type.Array(DocumentId, {
        minItems: 1,
        maxItems: 1000,
        description: 'Search only these documents.',
      }),
    ),
    partitions: Type.Optional(PartitionNames('Search')),
    principals: Type.Optional(PrincipalNames),
    mode: Type.Optional(
      Type.Union([Type.Literal('keyword'), Type.Literal('semantic'), Type.Literal('hybrid')], {
        description:
          '`keyword` (BM25), `semantic` (vectors) or `hybrid` (both, fused). Default: `hybrid` when an embedding provider is configured, else `keyword`.',
      }),
    ),
    semantic_weight: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 1,
        description:
          'Hybrid: weight w of the semantic list in reciprocal rank fusion, score = w/(60 + rank_semantic) + (1 − w)/(60 + rank_keyword). Default 0.5.',
      }),
    ),
    max_chunks_per_document: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 100, description: 'At most this many chunks of one document.' }),
    ),
    score_threshold: Type.Optional(
      Type.Number({
        description:
          'Only results whose `score` is at least this: in keyword mode the share of the most the query could score (0–1, e.g. 0.3), cosine similarity in semantic mode, the fused score in hybrid mode; the reranker’s relevance score when the results were reranked.',
      }),
    ),
    rerank: Type.Optional(
      Type.Boolean({
        description:
          'Order the first stage’s best chunks with the configured reranker (a cross-encoder). Default: true when the server has a reranker; true without one is a 400 `rerank_unavailable`.',
      }),
    ),
    rerank_candidates: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 200,
        description:
          'With reranking: how many of the first stage’s best chunks (filters applied) the reranker orders; max(top_k, this) are taken. Default 50.',
      }),
    ),
    language: Type.Optional(
      Type.String({
        pattern: '^[a-z]{2}$',
        description:
          'The query’s language (ISO 639-1). A query is read in the languages of your documents (each is found in the forms of its own language); naming the query’s language reads it in that one too.',
        examples: ['de'],
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [
      { query: 'how many days of paid leave', top_k: 5, filter: { source: 'hr', year: { $gte: '2025' } } },
      {
        query: 'parental leave policy',
        top_k: 5,
        mode: 'hybrid',
        semantic_weight: 0.6,
        max_chunks_per_document: 2,
        filter: { source: 'hr' },
      },
      { query: 'time off after a child is born', top_k: 10, mode: 'semantic', score_threshold: 0.3 },
      { query: 'who approves parental leave', top_k: 5, rerank: true, rerank_candidates: 100 },
    ],
  },
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
    partitions: Type.Optional(PartitionNames('Delete')),
    principals: Type.Optional(PrincipalNames),
  },
  {
    additionalProperties: false,
    examples: [{ filter: { source: 'hr', year: { $lt: '2020' } } }, { document_ids: [EXAMPLE_DOCUMENT_ID] }],
  },
);
export type DeleteDocumentsBody = Static<typeof DeleteDocumentsBody>;

export const PartitionParams = Type.Object(
  { name: Type.String({ maxLength: 64, description: 'The partition’s name.', examples: ['support'] }) },
  { additionalProperties: false },
);

export const PartitionList = Type.Object(
  {
    partitions: Type.Array(
      Type.Object({
        name: Type.String({ description: 'The partition’s name.' }),
        documents: Type.Integer({ description: 'Documents in it (any status).' }),
        chunks: Type.Integer({ description: 'Their chunks (ready versions).' }),
        bytes: Type.Integer({
          description: 'The sizes of their original files and downloads, summed (JSON text counts none).',
        }),
        status: Type.Union([Type.Literal('active'), Type.Literal('deleting')], {
          description:
            '`deleting`: DELETE /v1/partitions/{name} was accepted and its documents are being purged; the counts fall as they go, and the entry disappears once it is empty.',
        }),
      }),
    ),
  },
  {
    description: 'The partitions the API key may see that hold documents or are being deleted, by name.',
    examples: [
      {
        partitions: [
          { name: 'default', documents: 1200, chunks: 18_344, bytes: 94_112_003, status: 'active' },
          { name: 'support', documents: 310, chunks: 2_207, bytes: 0, status: 'deleting' },
        ],
      },
    ],
  },
);

export const PartitionDeleteAck = Type.Object(
  {
    status: Type.Literal('accepted'),
    partition: Type.String({ description: 'The partition being deleted.' }),
  },
  {
    description: 'The partition is marked for deletion; its documents are purged in the background.',
    examples: [{ status: 'accepted', partition: 'support' }],
  },
);

export const DeleteDocumentsResponse = Type.Object(
  {
    deleted: Type.Integer({ description: 'Documents deleted by this request.' }),
    has_more: Type.Boolean({
      description: 'Whether more documents still match (past the per-request limit): send the request again.',
    }),
  },
  { description: 'What this request deleted.', examples: [{ deleted: 42, has_more: false }] },
);

export const QueryResponse = Type.Object(
  {
    org_id: Type.String(),
    mode: Type.Union([Type.Literal('keyword'), Type.Literal('semantic'), Type.Literal('hybrid')], {
      description: 'The mode used: the one asked, else the default.',
    }),
    degraded: Type.Boolean({
      description:
        'A provider was down and the answer was made without it (`degraded_reasons` says which): a hybrid query’s keyword results alone (every `scores.semantic` null), or the first stage’s order when the reranker failed (every `scores.rerank` null).',
    }),
    degraded_reasons: Type.Array(
      Type.Union([Type.Literal('embeddings_unavailable'), Type.Literal('rerank_unavailable')]),
      { description: 'Empty unless `degraded`.' },
    ),
    results: Type.Array(
      Type.Object({
        document_id: Type.String(),
        chunk_index: Type.Integer(),
        text: Type.String(),
        score: Type.Number({
          description:
            'Higher is better. Keyword mode: the chunk’s BM25 as a fraction of the most the query could score, BM25 / Σ idf × (k1 + 1) over the query words that ranked, in (0, 1] (1: every such word present with saturating frequency), comparable across queries. Semantic mode: cosine similarity. Hybrid mode: the fused reciprocal-rank score, comparable within one answer. When reranked: the reranker’s relevance score.',
        }),
        scores: Type.Object(
          {
            keyword: Nullable(Type.Number()),
            semantic: Nullable(Type.Number()),
            rerank: Nullable(Type.Number()),
          },
          {
            description:
              'The chunk’s keyword score (BM25 as a fraction of the query’s most, as `score` in keyword mode) and cosine similarity, each null when the chunk was not in that list, and the reranker’s relevance score, null when the results were not reranked.',
          },
        ),
        metadata: Type.Record(Type.String(), Type.String()),
        page_start: Nullable(Type.Integer()),
        page_end: Nullable(Type.Integer()),
      }),
      { description: 'Best first.' },
    ),
  },
  {
    description: 'The best-matching chunks.',
    examples: [
      {
        org_id: EXAMPLE_ORG_ID,
        mode: 'hybrid',
        degraded: false,
        degraded_reasons: [],
        results: [
          {
            document_id: EXAMPLE_DOCUMENT_ID,
            chunk_index: 1,
            text: '…to 16:00. 2. Holidays. Each employee has 25 days of paid leave a year…',
            score: 0.9731,
            scores: { keyword: 0.6214, semantic: 0.6812, rerank: 0.9731 },
            metadata: { source: 'hr', year: '2026' },
            page_start: 2,
            page_end: 3,
          },
        ],
      },
    ],
  },
);

export const ScopeSchema = Type.Union(
  SCOPES.map((scope) => Type.Literal(scope)),
  {
    description: `What a key may do: ${SCOPES.map((s) => `\`${s}\` (${SCOPE_MEANINGS[s]})`).join('; ')}.`,
  },
);

export const OrgResponse = Type.Object(
  {
    org_id: Type.String(),
    name: Type.String({ description: 'The name the organisation was created with.' }),
    rate_limit_rpm: Type.Integer({ description: 'Requests per minute, across every endpoint.' }),
    created_at: Type.String({ format: 'date-time' }),
    key: Type.Object(
      {
        key_id: Type.String(),
        scopes: Type.Array(ScopeSchema),
        partitions: Type.Union([Type.Array(Type.String()), Type.Null()], {
          description: 'The partitions the key is limited to; null: every partition.',
        }),
        principals: Type.Union([Type.Array(Type.String()), Type.Null()], {
          description:
            'The principals the key is bound to: every request acts for them (or a subset it names); null: unbound.',
        }),
      },
      { description: 'The API key of this request.' },
    ),
  },
  {
    description: 'The organisation the API key belongs to, and what the key may do.',
    examples: [
      {
        org_id: EXAMPLE_ORG_ID,
        name: 'Acme Corp',
        rate_limit_rpm: 600,
        created_at: '2026-03-01T09:30:00.000Z',
        key: {
          key_id: EXAMPLE_KEY_ID,
          scopes: ['ingest', 'query', 'read'],
          partitions: null,
          principals: null,
        },
      },
    ],
  },
);

export const UsageQuery = Type.Object(
  {
    partition: Type.Optional(
      Type.String({
        ...PartitionName,
        description:
          'Report this partition only: the queries that ran over it alone, and its entry in `partitions`. One the API key may not see is a 403 `partition_forbidden`.',
      }),
    ),
    by: Type.Optional(
      Type.Literal('partition', {
        description: 'Add `partitions`, the breakdown of the queries by the partitions they ran over.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const UsageResponse = Type.Object(
  {
    org_id: Type.String(),
    period_days: Type.Integer({ description: 'Length of the window in days (30).' }),
    total_queries: Type.Integer({ description: 'Queries within the window.' }),
    daily: Type.Array(Type.Object({ date: Type.String({ format: 'date' }), count: Type.Integer() }), {
      description: 'One entry per UTC day of the window, today first, days without queries included.',
    }),
    rate_limit_rpm: Type.Integer({ description: 'Requests per minute, across every endpoint.' }),
    partitions: Type.Optional(
      Type.Array(
        Type.Object({
          partition: Type.String({
            description: "A partition's name, `(several)` or `(all)`.",
          }),
          total_queries: Type.Integer({ description: 'Its queries within the window.' }),
        }),
        {
          description:
            "The window's queries by the partitions they ran over, by name, each query in one entry: a partition's name for a query over that partition alone, `(several)` for one over two or more, `(all)` for one over the whole organisation (no partition named, by a key limited to none). The entries add up to `total_queries`; those without queries are left out. Present with `?by=partition`, and with `?partition=NAME` (that partition's entry only). A key limited to partitions sees its own partitions' entries, and `total_queries` and `daily` are their sum.",
        },
      ),
    ),
  },
  {
    description: 'Query volume over the last 30 days, by partition, and the rate limit.',
    examples: [
      {
        org_id: EXAMPLE_ORG_ID,
        period_days: 30,
        total_queries: 1284,
        daily: [
          { date: '2026-03-15', count: 57 },
          { date: '2026-03-14', count: 0 },
          { date: '2026-03-13', count: 112 },
        ],
        rate_limit_rpm: 600,
        partitions: [
          { partition: '(all)', total_queries: 1060 },
          { partition: '(several)', total_queries: 24 },
          { partition: 'support', total_queries: 200 },
        ],
      },
    ],
  },
);

const PROBLEM_PROPERTIES = {
  type: Type.String({ description: 'https://docindex.dev/problems/<code>' }),
  title: Type.String(),
  status: Type.Integer(),
  detail: Type.String({ description: 'What went wrong, for a person to read.' }),
  errors: Type.Optional(
    Type.Array(
      Type.Object({
        pointer: Type.String({
          description: 'JSON Pointer into the body, or `/query/<name>`, `/header/<name>`.',
        }),
        message: Type.String(),
      }),
      { description: 'Each invalid part of the request (validation errors).' },
    ),
  ),
  request_id: Type.String({ description: 'Quote it when asking about a request; it is in the logs.' }),
};

export const Problem = Type.Object(
  { ...PROBLEM_PROPERTIES, code: Type.String({ description: 'Stable, machine-readable error code.' }) },
  { description: 'RFC 9457 problem details (application/problem+json).' },
);

/** What each error code means, for the OpenAPI document. */
const PROBLEM_MEANINGS: Partial<Record<ErrorCode, string>> = {
  invalid_request:
    'The request breaks a rule (a field, query parameter or header); `errors[].pointer` names each part.',
  unauthorized: 'No credentials, or credentials that are invalid, expired or revoked.',
  insufficient_scope: 'The API key lacks the scope this operation needs.',
  partition_forbidden:
    'The API key is limited to partitions, and the request names (or ingests into) another one.',
  principal_forbidden:
    'The API key is bound to principals, and the request names another one (or uses what spans every access list).',
  partition_mismatch:
    'A document with this external_id exists in another partition; a document’s partition never changes.',
  partition_deleting: 'The partition is being deleted; ingest into it once the purge is done.',
  not_found: 'Nothing with this id (another organisation’s ids get the same answer).',
  not_ready: 'The document is not ready: queued, processing or failed.',
  version_changed:
    'A new version of the document was swapped in since the cursor was made: start again without a cursor.',
  original_not_kept: 'The original file was deleted once indexed (KEEP_ORIGINALS=false).',
  cannot_reprocess:
    'The document has nothing to reprocess from (no text or original kept), or a newer version is already on its way.',
  payload_too_large: 'The body, the file or a form part is larger than the limit.',
  sync_in_progress: 'The source has a run queued or running; one run per source at a time.',
  secrets_key_unset:
    'The source has credentials and the server runs without `SECRETS_KEY`, so it cannot store them encrypted.',
  unsupported_media_type: 'The Content-Type, Content-Encoding or file format is not accepted.',
  idempotency_key_in_use: 'A request with this Idempotency-Key is still being handled.',
  idempotency_key_reused: 'This Idempotency-Key was already used with a different request.',
  rate_limited: 'Over the requests-per-minute limit.',
  backlog_full:
    'The webhook endpoint has `WEBHOOK_MAX_PENDING` messages waiting already: no test message is queued until its receiver catches up.',
  overloaded: 'Too many documents are waiting to be processed.',
  service_unavailable: 'A backing service (database, queue) cannot be reached.',
  semantic_search_unavailable:
    'Mode `semantic` or `hybrid` was asked, and no embedding provider is configured.',
  embeddings_unavailable:
    'Mode `semantic`: the embedding provider failed to embed the query, or failed repeatedly and is skipped for a cool-down (an outage; `hybrid` answers keyword results instead).',
  rerank_unavailable: '`rerank: true` was asked, and no reranker is configured.',
};

/** The sample error of each code that the examples show, unless a route passes its own. */
const SAMPLE_ERRORS: Partial<Record<ErrorCode, () => ApiError>> = {
  invalid_request: () =>
    ERRORS.invalid('Invalid request: /chunk_size must be <= 4096.', [
      { pointer: '/chunk_size', message: 'must be <= 4096' },
    ]),
  unauthorized: () => ERRORS.unauthorized(),
  insufficient_scope: () => ERRORS.insufficientScope('ingest', 'POST', '/v1/ingest'),
  partition_forbidden: () => ERRORS.partitionForbidden('legal'),
  principal_forbidden: () => ERRORS.principalForbidden('group:finance'),
  partition_mismatch: () => ERRORS.partitionMismatch('crm-ticket-4711', 'support'),
  partition_deleting: () => ERRORS.partitionDeleting('support'),
  not_found: () => ERRORS.documentNotFound(EXAMPLE_DOCUMENT_ID),
  not_ready: () => ERRORS.notReady(EXAMPLE_DOCUMENT_ID, 'processing'),
  version_changed: () => ERRORS.versionChanged(EXAMPLE_DOCUMENT_ID, 1, 2),
  original_not_kept: () => ERRORS.originalNotKept(EXAMPLE_DOCUMENT_ID),
  cannot_reprocess: () =>
    ERRORS.cannotReprocess(EXAMPLE_DOCUMENT_ID, 'version 3 is still being processed; retry once it is ready'),
  payload_too_large: () => ERRORS.payloadTooLarge('The request body is larger than the limit.'),
  unsupported_media_type: () =>
    ERRORS.unsupportedMediaType('Content-Type "text/plain" is not accepted here.'),
  idempotency_key_in_use: () => ERRORS.idempotencyInUse(),
  idempotency_key_reused: () => ERRORS.idempotencyReused(),
  rate_limited: () => ERRORS.rateLimited(600, 42),
  backlog_full: () => ERRORS.webhookBacklogFull('wh_8f14e45fceea167a5a36dedd4bea2543', 10_000, 60),
  overloaded: () => ERRORS.overloaded(30),
  service_unavailable: () => ERRORS.unavailable('The database'),
  semantic_search_unavailable: () => ERRORS.semanticSearchUnavailable('hybrid'),
  embeddings_unavailable: () => ERRORS.embeddingsUnavailable('server_error', 5),
  rerank_unavailable: () => ERRORS.rerankUnavailable(),
};

/** An error a route shows with its own example (and a name for the shared response it gets). */
export interface ProblemSample {
  /** PascalCase, unique per distinct sample: "OrgNotFound". */
  name: string;
  error: ApiError;
}

function sampleOf(entry: ErrorCode | ProblemSample): ProblemSample {
  if (typeof entry !== 'string') return entry;
  const error = SAMPLE_ERRORS[entry]?.() ?? new ApiError(entry, `${titleOf(entry)}.`);
  const name = entry.replace(/(^|_)([a-z])/g, (_match, _sep: string, letter: string) => letter.toUpperCase());
  return { name, error };
}

function problemExample(error: ApiError) {
  return {
    type: `https://docindex.dev/problems/${error.code}`,
    title: error.title,
    status: error.status,
    detail: error.detail,
    code: error.code,
    ...(error.extra.errors ? { errors: error.extra.errors } : {}),
    request_id: EXAMPLE_REQUEST_ID,
  };
}

/**
 * The error responses of a route, keyed by status, for its `response`: each is
 * application/problem+json whose `code` is one of the codes given for that status, with an example
 * of each, and `Retry-After` / `WWW-Authenticate` where those codes send them. Pass a ProblemSample
 * instead of a code to show a route's own detail in the example (e.g. "No organisation with id …").
 * The OpenAPI document shares each distinct response under components/responses (by its name).
 */
export function problemResponses(
  ...errors: Array<ErrorCode | ProblemSample>
): Record<number, ProblemResponse> {
  const byStatus = new Map<number, ProblemSample[]>();
  for (const entry of errors) {
    const sample = sampleOf(entry);
    const same = byStatus.get(sample.error.status) ?? [];
    if (!same.some((s) => s.error.code === sample.error.code)) same.push(sample);
    byStatus.set(sample.error.status, same);
  }
  const out: Record<number, ProblemResponse> = {};
  for (const [status, samples] of byStatus) out[status] = problemResponse(samples);
  return out;
}

/** The extension naming a problem response; openapi.ts moves the response to components/responses. */
export const PROBLEM_RESPONSE_NAME = 'x-docindex-response-name';

export interface ProblemResponse {
  description: string;
  headers?: Record<string, { type: string; minimum?: number; description: string }>;
  content: {
    'application/problem+json': {
      schema: ReturnType<typeof Type.Object>;
      examples: Record<string, { summary: string; value: unknown }>;
      [PROBLEM_RESPONSE_NAME]: string;
    };
  };
}

function problemResponse(samples: ProblemSample[]): ProblemResponse {
  const codes = samples.map((s) => s.error.code);
  const description = codes
    .map((code) => `\`${code}\`: ${PROBLEM_MEANINGS[code] ?? titleOf(code)}`)
    .join(' ');
  const retrying = samples
    .filter((s) => s.error.extra.retryAfterSeconds !== undefined)
    .map((s) => s.error.code);
  const headers: NonNullable<ProblemResponse['headers']> = {};
  if (retrying.length > 0) {
    headers['Retry-After'] = {
      type: 'integer',
      minimum: 0,
      description: `Seconds to wait before retrying (with ${retrying.map((c) => `\`${c}\``).join(', ')}).`,
    };
  }
  if (codes.includes('unauthorized')) {
    headers['WWW-Authenticate'] = {
      type: 'string',
      description: 'The challenge: `Bearer realm="docindex"`.',
    };
  }
  const schema = Type.Object(
    {
      ...PROBLEM_PROPERTIES,
      code: Type.Unsafe<ErrorCode>({
        type: 'string',
        enum: codes,
        description: 'Stable, machine-readable error code.',
      }),
    },
    { description: Problem.description },
  );
  const examples = Object.fromEntries(
    samples.map(({ error }) => [error.code, { summary: error.title, value: problemExample(error) }]),
  );
  return {
    description,
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
    content: {
      'application/problem+json': {
        schema,
        examples,
        [PROBLEM_RESPONSE_NAME]: `${samples.map((s) => s.name).join('Or')}Problem`,
      },
    },
  };
}

/** Errors every authenticated /v1 route can answer with. */
export const COMMON_ERRORS: ErrorCode[] = [
  'invalid_request',
  'unauthorized',
  'insufficient_scope',
  'rate_limited',
  'service_unavailable',
];

/** Errors of the ingest operations beyond COMMON_ERRORS: sizes, formats, Idempotency-Key, backlog. */
export const INGEST_ERRORS: ErrorCode[] = [
  'payload_too_large',
  'unsupported_media_type',
  'idempotency_key_in_use',
  'idempotency_key_reused',
  'overloaded',
  'partition_forbidden',
  'partition_mismatch',
  'partition_deleting',
];

export const VersionAck = Type.Object(
  {
    status: Type.Literal('accepted'),
    org_id: Type.String({ description: 'The calling organisation.' }),
    document_id: Type.String({ description: 'The document given a new version.' }),
    version: Type.Integer({
      minimum: 2,
      description:
        'The new version, shown as `pending_version` while the current one answers, and as `version` once it replaced it.',
    }),
  },
  {
    description: 'Accepted: the new version is stored and queued for processing.',
    examples: [{ status: 'accepted', org_id: EXAMPLE_ORG_ID, document_id: EXAMPLE_DOCUMENT_ID, version: 3 }],
  },
);

const ACCESS_ON_REPLACE = Type.Union(
  [AccessList('A new access list for the document, in force at once.'), Type.Null()],
  { description: 'A new access list (null removes it); absent keeps the document’s.' },
);

/** PUT /v1/documents/{id}/content as JSON: new text, or a URL to download. */
export const ReplaceContentJson = Type.Union(
  [
    Type.Object(
      {
        text: Type.String({ minLength: 1, description: 'The new text of the document.' }),
        language: Type.Optional(LanguageCode),
        access: Type.Optional(ACCESS_ON_REPLACE),
      },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        url: Type.String({
          minLength: 1,
          maxLength: 8192,
          description: 'An http or https URL to download the new content from.',
        }),
        language: Type.Optional(LanguageCode),
        access: Type.Optional(ACCESS_ON_REPLACE),
      },
      { additionalProperties: false },
    ),
  ],
  {
    examples: [
      { text: 'Refunds are accepted within 60 days of purchase.' },
      { url: 'https://example.com/reports/annual-report-2026.pdf' },
    ],
  },
);
export type ReplaceContentJson = Static<typeof ReplaceContentJson>;

export const ReprocessBody = Type.Object(
  {
    chunk_size: Type.Optional(ChunkSize({ description: 'Tokens per chunk (default: the document’s).' })),
    chunk_overlap: Type.Optional(
      ChunkOverlap({
        description:
          'Tokens shared by consecutive chunks (default: the document’s); smaller than chunk_size.',
      }),
    ),
  },
  { additionalProperties: false, examples: [{ chunk_size: 256, chunk_overlap: 32 }] },
);
export type ReprocessBody = Static<typeof ReprocessBody>;
