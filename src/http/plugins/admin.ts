// The admin scope for /admin/v1: every route registered inside needs `Authorization: Bearer
// <ADMIN_TOKEN>` (compared in constant time). Admin requests never count against an org's rate
// limit: a request with the right token is not limited at all, and a wrong or missing token counts
// against a bucket of its own per client address (`admin-ip:<address>`, at
// UNAUTHENTICATED_RATE_LIMIT_RPM), so guessing is slowed and tenants are never affected.
import type { FastifyInstance } from 'fastify';
import { ERRORS } from '../../domain/errors.js';
import { sameSecret, secretDigest } from '../../domain/keys.js';
import type { AppDeps } from '../deps.js';
import { setRateLimitHeaders } from './authenticated.js';

export function adminScope(deps: AppDeps, token: string) {
  const expected = secretDigest(token);
  return async function scope(app: FastifyInstance): Promise<void> {
    // The OpenAPI document shows every admin route behind the admin token, not an API key.
    app.addHook('onRoute', (route) => {
      if (route.schema) route.schema = { ...route.schema, security: [{ adminToken: [] }] };
    });
    app.addHook('onRequest', async (request, reply) => {
      const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(request.headers.authorization ?? '');
      if (match && sameSecret(match[1]!, expected)) return;
      const decision = await deps.rateLimiter.consume(
        `admin-ip:${request.ip}`,
        deps.limits.unauthenticatedRateLimitRpm,
      );
      setRateLimitHeaders(reply, decision, 'admin-anonymous');
      if (!decision.allowed) throw ERRORS.rateLimited(decision.limit, decision.resetSeconds);
      throw ERRORS.adminUnauthorized();
    });
  };
}
