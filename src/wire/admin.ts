// Request and response schemas of the admin API (/admin/v1): organisations, their keys and the
// purge receipt. One source for validation, serialisation, the OpenAPI document and the client.
import { type Static, Type } from '@sinclair/typebox';
import { ERRORS, type ErrorCode } from '../domain/errors.js';
import { MAX_PARTITIONS_PER_REQUEST } from '../domain/partitions.js';
import { ACCESS_MAX_PRINCIPALS, PRINCIPAL_MAX_LENGTH } from '../domain/principals.js';
import { SCOPES } from '../domain/scopes.js';
import { EXAMPLE_CURSOR, EXAMPLE_KEY_ID, EXAMPLE_ORG_ID, PartitionName, ScopeSchema } from './common.js';
import type { ProblemSample } from './problem-details.js';

/** The partitions a key is limited to, as the admin API shows them (null: every partition). */
const KeyPartitions = Type.Union([Type.Array(Type.String()), Type.Null()], {
  description:
    'The partitions the key is limited to: it ingests only into them and sees nothing else. null: every partition.',
});

/** The principals a key is bound to, as the admin API shows them (null: unbound). */
const KeyPrincipals = Type.Union([Type.Array(Type.String()), Type.Null()], {
  description:
    'The principals the key is bound to: every request of it sees only documents without an access list or whose list names one of them, and may name only these. null: unbound.',
});

const EXAMPLE_OTHER_KEY_ID = 'key_2e9d7b5a3c1f4e8d9a0b6c4e2f1d3a5b';
/** Not a working key: the shape of one (`dix_` and 43 base64url characters). */
const EXAMPLE_API_KEY = 'dix_EXAMPLEonlyNotARealKey0123456789abcdefghijk';

const RATE_LIMIT = {
  minimum: 1,
  maximum: 10_000_000,
  description: 'Requests per minute, across every endpoint.',
};
const ORG_NAME = { minLength: 1, maxLength: 200, pattern: '^[^\\u0000]*$' };

export const OrgParams = Type.Object(
  { id: Type.String({ maxLength: 64, description: 'Organisation ID (org_…).', examples: [EXAMPLE_ORG_ID] }) },
  { additionalProperties: false },
);
export const KeyParams = Type.Object(
  { key_id: Type.String({ maxLength: 64, description: 'API key ID (key_…).', examples: [EXAMPLE_KEY_ID] }) },
  { additionalProperties: false },
);

export const CreateOrgBody = Type.Object(
  {
    name: Type.String(ORG_NAME),
    rate_limit_rpm: Type.Optional(Type.Integer(RATE_LIMIT)),
  },
  { additionalProperties: false, examples: [{ name: 'Acme Corp', rate_limit_rpm: 600 }] },
);
export type CreateOrgBody = Static<typeof CreateOrgBody>;

export const UpdateOrgBody = Type.Object(
  {
    name: Type.Optional(Type.String(ORG_NAME)),
    rate_limit_rpm: Type.Optional(Type.Integer(RATE_LIMIT)),
  },
  { additionalProperties: false, minProperties: 1, examples: [{ rate_limit_rpm: 1200 }] },
);
export type UpdateOrgBody = Static<typeof UpdateOrgBody>;

export const CreateKeyBody = Type.Object(
  {
    scopes: Type.Optional(
      Type.Array(ScopeSchema, {
        minItems: 1,
        maxItems: SCOPES.length,
        uniqueItems: true,
        description: 'Every scope when left out.',
      }),
    ),
    expires_at: Type.Optional(
      Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
        description:
          'RFC 3339 date-time in the future; after it the key is refused (401). Never, when null or left out.',
      }),
    ),
    partitions: Type.Optional(
      Type.Array(PartitionName, {
        minItems: 1,
        maxItems: MAX_PARTITIONS_PER_REQUEST,
        description:
          'Limits the key to these partitions: it ingests only into them (403 `partition_forbidden` elsewhere) and any other partition’s document is a 404 to it. Every partition when left out.',
      }),
    ),
    principals: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: PRINCIPAL_MAX_LENGTH }), {
        maxItems: ACCESS_MAX_PRINCIPALS,
        description:
          'Binds the key to these principals (e.g. the user a backend mints the key for and their groups): every request of it sees only documents without an access list or whose list names one of them, and may narrow them but never name another (403 `principal_forbidden`). An empty list: only documents without an access list. Unbound when left out.',
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [
      { scopes: ['query', 'read'], expires_at: '2027-01-01T00:00:00Z' },
      { scopes: ['ingest', 'query', 'read'], partitions: ['support'] },
      { scopes: ['query', 'read'], principals: ['user:42', 'group:eng'] },
    ],
  },
);
export type CreateKeyBody = Static<typeof CreateKeyBody>;

export const ListOrgsQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Organisations per page.' }),
    cursor: Type.Optional(
      Type.String({ maxLength: 512, description: 'The `next_cursor` of the previous page.' }),
    ),
  },
  { additionalProperties: false },
);
export type ListOrgsQuery = Static<typeof ListOrgsQuery>;

const EXAMPLE_ORG = {
  org_id: EXAMPLE_ORG_ID,
  name: 'Acme Corp',
  rate_limit_rpm: 600,
  created_at: '2026-01-05T09:30:00.000Z',
  usage: { period_days: 30, total_queries: 1284 },
  active_keys: 2,
};

const EXAMPLE_KEY = {
  key_id: EXAMPLE_KEY_ID,
  org_id: EXAMPLE_ORG_ID,
  prefix: EXAMPLE_API_KEY.slice(0, 12),
  scopes: ['query', 'read'],
  expires_at: '2027-01-01T00:00:00.000Z',
  partitions: null,
  principals: null,
  created_at: '2026-03-15T12:00:00.000Z',
  revoked_at: null,
};

export const OrgSchema = Type.Object(
  {
    org_id: Type.String(),
    name: Type.String(),
    rate_limit_rpm: Type.Integer({ description: RATE_LIMIT.description }),
    created_at: Type.String({ format: 'date-time' }),
    usage: Type.Object({
      period_days: Type.Integer(),
      total_queries: Type.Integer({ description: 'Queries over the last period_days days.' }),
    }),
    active_keys: Type.Integer({ description: 'API keys of the organisation neither revoked nor expired.' }),
  },
  { description: 'An organisation with its usage.', examples: [EXAMPLE_ORG] },
);

export const OrgList = Type.Object(
  {
    orgs: Type.Array(OrgSchema),
    next_cursor: Type.Union([Type.String(), Type.Null()], {
      description: 'Pass as `cursor` for the next page; null on the last.',
    }),
  },
  {
    description: 'A page of organisations, newest first.',
    examples: [{ orgs: [EXAMPLE_ORG], next_cursor: EXAMPLE_CURSOR }],
  },
);

export const CreatedOrgSchema = Type.Object(
  {
    org_id: Type.String(),
    name: Type.String(),
    rate_limit_rpm: Type.Integer(),
    key_id: Type.String(),
    api_key: Type.String({ description: 'The first key of the org, with every scope: shown once.' }),
  },
  {
    description: 'Created: the organisation and its first API key.',
    examples: [
      {
        org_id: EXAMPLE_ORG_ID,
        name: 'Acme Corp',
        rate_limit_rpm: 600,
        key_id: EXAMPLE_OTHER_KEY_ID,
        api_key: EXAMPLE_API_KEY,
      },
    ],
  },
);

export const IssuedKeySchema = Type.Object(
  {
    key_id: Type.String(),
    api_key: Type.String({ description: 'The key itself: shown once, never again.' }),
    scopes: Type.Array(ScopeSchema),
    expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    partitions: KeyPartitions,
    principals: KeyPrincipals,
  },
  {
    description: 'Created: the new API key.',
    examples: [
      {
        key_id: EXAMPLE_KEY_ID,
        api_key: EXAMPLE_API_KEY,
        scopes: ['query', 'read'],
        expires_at: '2027-01-01T00:00:00.000Z',
        partitions: ['support'],
        principals: null,
      },
    ],
  },
);

export const KeySchema = Type.Object(
  {
    key_id: Type.String(),
    org_id: Type.String(),
    prefix: Type.String({ description: 'The first characters of the key, to tell keys apart.' }),
    scopes: Type.Array(ScopeSchema),
    expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    partitions: KeyPartitions,
    principals: KeyPrincipals,
    created_at: Type.String({ format: 'date-time' }),
    revoked_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  {
    description: 'An API key (never the key itself).',
    examples: [{ ...EXAMPLE_KEY, revoked_at: '2026-03-20T08:15:00.000Z' }],
  },
);

export const KeyList = Type.Object(
  { keys: Type.Array(KeySchema) },
  {
    description: 'The organisation’s keys, oldest first.',
    examples: [
      {
        keys: [
          {
            ...EXAMPLE_KEY,
            key_id: EXAMPLE_OTHER_KEY_ID,
            scopes: [...SCOPES],
            expires_at: null,
            created_at: '2026-01-05T09:30:00.000Z',
          },
          EXAMPLE_KEY,
        ],
      },
    ],
  },
);

export const PurgeReceiptSchema = Type.Object(
  {
    org_id: Type.String(),
    documents: Type.Integer(),
    chunks: Type.Integer(),
    vectors: Type.Integer(),
    blobs: Type.Integer({ description: 'Stored original files removed from the blob store.' }),
    webhooks: Type.Integer(),
    keys: Type.Integer(),
    usage_days: Type.Integer({ description: 'Daily usage counters removed.' }),
    idempotency_keys: Type.Integer({ description: 'Idempotency-Key records removed.' }),
    evaluations: Type.Integer({ description: 'Evaluations removed, with their results.' }),
  },
  {
    description: 'What the purge removed.',
    examples: [
      {
        org_id: EXAMPLE_ORG_ID,
        documents: 312,
        chunks: 9540,
        vectors: 0,
        blobs: 57,
        webhooks: 0,
        keys: 3,
        usage_days: 30,
        idempotency_keys: 12,
        evaluations: 2,
      },
    ],
  },
);

/** Errors every admin route can answer with (the 401's example is the admin token's). */
export const ADMIN_ERRORS: Array<ErrorCode | ProblemSample> = [
  'invalid_request',
  { name: 'AdminUnauthorized', error: ERRORS.adminUnauthorized() },
  'rate_limited',
  'service_unavailable',
];
