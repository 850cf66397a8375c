// Schemas of GET /v1/usage: the query string and the report.
import { Type } from '@sinclair/typebox';
import { EXAMPLE_ORG_ID, PartitionName } from './common.js';

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
