// GET /v1/usage — queries per UTC day over 30 days, newest first, and the current rate limit;
// `?by=partition` adds the breakdown by partition, `?partition=NAME` reports one partition's.
import type { FastifyInstance } from 'fastify';
import { COMMON_ERRORS, problemResponses, UsageQuery, UsageResponse } from '../../../wire/index.js';
import type { AppDeps } from '../../deps.js';

export function usageRoute(app: FastifyInstance, deps: AppDeps): void {
  app.get<{ Querystring: { partition?: string; by?: 'partition' } }>(
    '/usage',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'usage',
        summary: 'Usage report',
        description:
          "Query volume for the last 30 days (today first, zero days included) and the rate limit; with `?by=partition`, by partition too. A query counts once in the total and once under the partitions it ran over: a partition's name for one, `(several)` for two or more, `(all)` for the whole organisation. `?partition=NAME` reports that partition's queries only.",
        tags: ['usage'],
        querystring: UsageQuery,
        response: { 200: UsageResponse, ...problemResponses(...COMMON_ERRORS, 'partition_forbidden') },
      },
    },
    async (request) => {
      const { org } = request.principal;
      const { partition, by } = request.query;
      return deps.usage.report(
        org.id,
        org.rateLimitRpm,
        request.principal.access,
        partition,
        by === 'partition',
      );
    },
  );
}
