// Schemas of changing documents: PATCH of the metadata and access list, new content (PUT
// /content) and reprocessing with the new version they answer, and deleting by filter or ids.
import { type Static, Type } from '@sinclair/typebox';
import { METADATA_MAX_KEYS, METADATA_MAX_VALUE_LENGTH, type MetadataPatch } from '../domain/metadata.js';
import {
  AccessList,
  ChunkOverlap,
  ChunkSize,
  DocumentId,
  EXAMPLE_DOCUMENT_ID,
  EXAMPLE_ORG_ID,
  FilterSchema,
  LanguageCode,
  METADATA_KEY,
  PartitionNames,
  PrincipalNames,
} from './common.js';

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

export const DeleteDocumentsResponse = Type.Object(
  {
    deleted: Type.Integer({ description: 'Documents deleted by this request.' }),
    has_more: Type.Boolean({
      description: 'Whether more documents still match (past the per-request limit): send the request again.',
    }),
  },
  { description: 'What this request deleted.', examples: [{ deleted: 42, has_more: false }] },
);

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
