// Schemas of reading documents: the document record (with its examples), one document's path,
// the list of documents and a document's chunks.
import { type Static, Type } from '@sinclair/typebox';
import { DOCUMENT_STATUSES, MAX_EXTERNAL_ID_LENGTH } from '../domain/types.js';
import {
  EXAMPLE_CURSOR,
  EXAMPLE_DOCUMENT_ID,
  EXAMPLE_ORG_ID,
  EXAMPLE_OTHER_DOCUMENT_ID,
  FILTER_LANGUAGE,
  Nullable,
  PAGE_CURSOR,
  PAGE_LIMIT,
  PRINCIPALS_PARAM,
} from './common.js';

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
