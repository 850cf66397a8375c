// Schema of GET /v1/org: the organisation of the API key, and what the key may do.
import { Type } from '@sinclair/typebox';
import { EXAMPLE_KEY_ID, EXAMPLE_ORG_ID, ScopeSchema } from './common.js';

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
