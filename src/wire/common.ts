// The pieces several resources' schemas share: the example ids, metadata, access lists and
// principals, the filter language, external ids, partitions, languages, chunk settings, paging,
// and the key scopes.
import { type Static, Type } from '@sinclair/typebox';
import { CHUNK_OVERLAP, CHUNK_SIZE } from '../domain/chunk-settings.js';
import {
  FILTER_MAX_CONDITIONS,
  FILTER_MAX_DEPTH,
  FILTER_MAX_LIST_VALUES,
  type FilterJson,
} from '../domain/filter.js';
import { METADATA_MAX_KEY_LENGTH, METADATA_MAX_KEYS, METADATA_MAX_VALUE_LENGTH } from '../domain/metadata.js';
import { MAX_PARTITIONS_PER_REQUEST, PARTITION_PATTERN } from '../domain/partitions.js';
import { ACCESS_MAX_PRINCIPALS, PRINCIPAL_MAX_LENGTH } from '../domain/principals.js';
import { SCOPE_MEANINGS, SCOPES } from '../domain/scopes.js';
import { MAX_EXTERNAL_ID_LENGTH } from '../domain/types.js';

// Sample values for the examples on the schemas of wire/. Each example is checked against its own
// schema by test/openapi/document.test.ts and by Spectral.
export const EXAMPLE_ORG_ID = 'org_5d1f0c9e8b7a4e2f9c3d6a1b0e4f7c2d';
export const EXAMPLE_KEY_ID = 'key_7c4e2a9b1d3f4e6a8b0c2d4e6f8a1b3c';
export const EXAMPLE_DOCUMENT_ID = '3f8c1a52-9d4e-4b7a-8e21-6c0d5f9a7b13';
export const EXAMPLE_OTHER_DOCUMENT_ID = 'b21e7d44-0c5a-4f3e-9a86-d1f27c3e5b90';
export const EXAMPLE_REQUEST_ID = 'req_9b2f4c1d7e8a4f0b8c6d2e1f3a5b7c9d';
export const EXAMPLE_CURSOR = 'eyJ0IjoiMjAyNi0wMy0xNVQxMjowMDowMC4wMDBaIiwiaSI6IjNmOGMxYTUyIn0';

/** Keys are kept as sent: a NUL in one could not be stored apart from the key without it. */
export const METADATA_KEY = { minLength: 1, maxLength: METADATA_MAX_KEY_LENGTH, pattern: '^[^\\u0000]*$' };

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

export const DocumentId = Type.String({
  format: 'uuid',
  description: 'Document ID (UUID).',
  examples: [EXAMPLE_DOCUMENT_ID],
});

export const FILTER_LANGUAGE = `Metadata filter. \`{"key": "v"}\` (equal), \`{"key": ["a", "b"]}\` (any of), or an operator object \`{"key": {"$eq"|"$ne"|"$gt"|"$gte"|"$lt"|"$lte": "v", "$in"|"$nin": ["a"], "$exists": true|false}}\`; \`{"$and": [f, …]}\`, \`{"$or": [f, …]}\`, \`{"$not": f}\`. Several entries in one object must all hold. Values are strings and compare by Unicode code point (ISO-8601 dates order correctly). A comparison or $in on a missing key is false, so $ne, $nin and $not match documents without the key. At most ${FILTER_MAX_DEPTH} levels of nesting, ${FILTER_MAX_CONDITIONS} conditions and ${FILTER_MAX_LIST_VALUES} values per list; lists and $and/$or may not be empty. A filter outside the language is a 400 whose \`errors[].pointer\` names the bad part.`;

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
export const PartitionNames = (what: string) =>
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

/** The schema, or null: a record's field that has no value yet, or none for this record. */
export const Nullable = <
  T extends ReturnType<typeof Type.String> | ReturnType<typeof Type.Integer> | ReturnType<typeof Type.Number>,
>(
  schema: T,
) => Type.Union([schema, Type.Null()]);

/** The paging of a list: `limit` (what it counts) and `cursor`. */
export const PAGE_LIMIT = (what: string) =>
  Type.Integer({ minimum: 1, maximum: 100, default: 20, description: `${what} per page.` });
export const PAGE_CURSOR = Type.Optional(
  Type.String({ maxLength: 512, description: 'The `next_cursor` of the previous page.' }),
);

export const ScopeSchema = Type.Union(
  SCOPES.map((scope) => Type.Literal(scope)),
  {
    description: `What a key may do: ${SCOPES.map((s) => `\`${s}\` (${SCOPE_MEANINGS[s]})`).join('; ')}.`,
  },
);
