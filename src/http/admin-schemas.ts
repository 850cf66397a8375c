// Request and response schemas of the admin API (/admin/v1): organisations, their keys and the
// purge receipt. One source for validation, serialisation, the OpenAPI document and the client.
import { type Static, Type } from '@sinclair/typebox';
import type { ErrorCode } from '../domain/errors.js';
import { SCOPE_MEANINGS, SCOPES } from '../domain/scopes.js';

const RATE_LIMIT = {
  minimum: 1,
  maximum: 10_000_000,
  description: 'Requests per minute, across every endpoint.',
};
const ORG_NAME = { minLength: 1, maxLength: 200, pattern: '^[^\\u0000]*$' };

export const ScopeSchema = Type.Union(
  SCOPES.map((scope) => Type.Literal(scope)),
  {
    description: `What a key may do: ${SCOPES.map((s) => `\`${s}\` (${SCOPE_MEANINGS[s]})`).join('; ')}.`,
  },
);

export const OrgParams = Type.Object({ id: Type.String({ maxLength: 64 }) }, { additionalProperties: false });
export const KeyParams = Type.Object(
  { key_id: Type.String({ maxLength: 64 }) },
  { additionalProperties: false },
);

export const CreateOrgBody = Type.Object(
  {
    name: Type.String(ORG_NAME),
    rate_limit_rpm: Type.Optional(Type.Integer(RATE_LIMIT)),
  },
  { additionalProperties: false },
);
export type CreateOrgBody = Static<typeof CreateOrgBody>;

export const UpdateOrgBody = Type.Object(
  {
    name: Type.Optional(Type.String(ORG_NAME)),
    rate_limit_rpm: Type.Optional(Type.Integer(RATE_LIMIT)),
  },
  { additionalProperties: false, minProperties: 1 },
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
  },
  { additionalProperties: false },
);
export type CreateKeyBody = Static<typeof CreateKeyBody>;

export const ListOrgsQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
    cursor: Type.Optional(Type.String({ maxLength: 512 })),
  },
  { additionalProperties: false },
);
export type ListOrgsQuery = Static<typeof ListOrgsQuery>;

export const OrgSchema = Type.Object({
  org_id: Type.String(),
  name: Type.String(),
  rate_limit_rpm: Type.Integer(),
  created_at: Type.String({ format: 'date-time' }),
  usage: Type.Object({
    period_days: Type.Integer(),
    total_queries: Type.Integer({ description: 'Queries over the last period_days days.' }),
  }),
});

export const OrgList = Type.Object({
  orgs: Type.Array(OrgSchema),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});

export const CreatedOrgSchema = Type.Object({
  org_id: Type.String(),
  name: Type.String(),
  rate_limit_rpm: Type.Integer(),
  key_id: Type.String(),
  api_key: Type.String({ description: 'The first key of the org, with every scope: shown once.' }),
});

export const IssuedKeySchema = Type.Object({
  key_id: Type.String(),
  api_key: Type.String({ description: 'The key itself: shown once, never again.' }),
  scopes: Type.Array(ScopeSchema),
  expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

export const KeySchema = Type.Object({
  key_id: Type.String(),
  org_id: Type.String(),
  prefix: Type.String({ description: 'The first characters of the key, to tell keys apart.' }),
  scopes: Type.Array(ScopeSchema),
  expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
  revoked_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

export const KeyList = Type.Object({ keys: Type.Array(KeySchema) });

export const PurgeReceiptSchema = Type.Object({
  org_id: Type.String(),
  documents: Type.Integer(),
  chunks: Type.Integer(),
  vectors: Type.Integer(),
  blobs: Type.Integer({ description: 'Stored original files removed from the blob store.' }),
  webhooks: Type.Integer(),
  keys: Type.Integer(),
  usage_days: Type.Integer({ description: 'Daily usage counters removed.' }),
  idempotency_keys: Type.Integer({ description: 'Idempotency-Key records removed.' }),
});

/** Errors every admin route can answer with. */
export const ADMIN_ERRORS: ErrorCode[] = [
  'invalid_request',
  'unauthorized',
  'rate_limited',
  'service_unavailable',
];
