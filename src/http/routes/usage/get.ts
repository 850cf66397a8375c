// GET /v1/usage — queries per UTC day over 30 days, newest first, by partition, and the current
// rate limit; `?partition=NAME` for one partition's.
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../../deps.js';
import { COMMON_ERRORS, problemResponses, UsageQuery, UsageResponse } from '../../schemas.js';

export function usageRoute(app: FastifyInstance, deps: AppDeps): void {
  app.get<{ Querystring: { partition?: string } }>(
    '/usage',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'usage',
        summary: 'Usage report',
        description:
          "Query volume for the last 30 days (today first, zero days included), by partition, and the rate limit. A query counts once in the total and once under the partitions it ran over: a partition's name for one, `(several)` for two or more, `(all)` for the whole organisation. `?partition=NAME` reports that partition's queries only.",
        tags: ['usage'],
        querystring: UsageQuery,
        response: { 200: UsageResponse, ...problemResponses(...COMMON_ERRORS, 'partition_forbidden') },
      },
    },
    async (request) => {
      const { org } = request.principal;
      return deps.usage.report(org.id, org.rateLimitRpm, request.principal.access, request.query.partition);
    },
  );
}
