// GET /v1/usage — queries per UTC day over 30 days, newest first, and the current rate limit.
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../../deps.js';
import { COMMON_ERRORS, problemResponses, UsageResponse } from '../../schemas.js';

export function usageRoute(app: FastifyInstance, deps: AppDeps): void {
  app.get(
    '/usage',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'usage',
        summary: 'Usage report',
        description:
          'Query volume for the last 30 days (today first, zero days included) and the rate limit.',
        tags: ['usage'],
        response: { 200: UsageResponse, ...problemResponses(...COMMON_ERRORS) },
      },
    },
    async (request) => {
      const { org } = request.principal;
      return deps.usage.report(org.id, org.rateLimitRpm);
    },
  );
}
