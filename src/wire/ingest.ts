// Schemas of the ingest routes (POST /v1/ingest, /v1/ingest/url; the form of /v1/ingest/file is
// described by its route), their answer, and the errors they share.
import { type Static, Type } from '@sinclair/typebox';
import { CHUNK_OVERLAP, CHUNK_SIZE } from '../domain/chunk-settings.js';
import type { ErrorCode } from '../domain/errors.js';
import { PARTITION_PATTERN } from '../domain/partitions.js';
import {
  AccessList,
  CHUNK_OVERLAP_WITH_DEFAULT,
  CHUNK_SIZE_WITH_DEFAULT,
  ChunkOverlap,
  ChunkSize,
  EXAMPLE_DOCUMENT_ID,
  EXAMPLE_ORG_ID,
  ExternalId,
  LanguageCode,
  Metadata,
  PartitionName,
} from './common.js';

const ACCESS_ON_INGEST =
  'The principals that may see the document: a request acting for principals sees it only if one of them is here. Absent: no access list (anyone who may see its partition). A new version by `external_id` takes the access list of its request, as it takes its metadata.';

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

/** Errors of the ingest operations beyond COMMON_ERRORS: sizes, formats, Idempotency-Key, backlog. */
export const INGEST_ERRORS: ErrorCode[] = [
  'payload_too_large',
  'unsupported_media_type',
  'idempotency_key_in_use',
  'idempotency_key_reused',
  'overloaded',
  'partition_forbidden',
  'principal_forbidden',
  'partition_mismatch',
  'partition_deleting',
];
