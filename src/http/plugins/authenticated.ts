// The authenticated scope for /v1: every route registered inside gets API-key auth and the
// per-org rate limit (a Fastify encapsulated context, so a route cannot forget either).
// Unauthenticated requests are limited per client address before they are refused.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ERRORS } from '../../domain/errors.js';
import type { RateDecision } from '../../domain/ports.js';
import type { AppDeps } from '../deps.js';

export function authenticatedScope(deps: AppDeps) {
  return async function scope(app: FastifyInstance): Promise<void> {
    app.decorateRequest('principal', null as unknown as FastifyRequest['principal']);

    app.addHook('onRequest', async (request, reply) => {
      if (typeof request.query === 'object' && request.query !== null) {
        const query = request.query as Record<string, unknown>;
        if ('api_key' in query || 'key' in query || 'access_token' in query) {
          throw ERRORS.invalid(
            'API keys are never accepted in the query string; send `Authorization: Bearer <key>`.',
          );
        }
      }
      const principal = await deps.authenticator.authenticate(request.headers.authorization);
      if (!principal) {
        const decision = await deps.rateLimiter.consume(
          `ip:${request.ip}`,
          deps.limits.unauthenticatedRateLimitRpm,
        );
        setRateLimitHeaders(reply, decision, 'anonymous');
        if (!decision.allowed) throw ERRORS.rateLimited(decision.limit, decision.resetSeconds);
        throw ERRORS.unauthorized(
          request.headers.authorization ? 'The API key is invalid or revoked.' : undefined,
        );
      }
      request.principal = principal;
      request.log = request.log.child({ org_id: principal.org.id });
      const decision = await deps.rateLimiter.consume(`org:${principal.org.id}`, principal.org.rateLimitRpm);
      setRateLimitHeaders(reply, decision, 'org');
      if (!decision.allowed) throw ERRORS.rateLimited(decision.limit, decision.resetSeconds);
    });
  };
}

/** IETF httpapi RateLimit header fields (draft-ietf-httpapi-ratelimit-headers). */
function setRateLimitHeaders(reply: FastifyReply, decision: RateDecision, policy: string): void {
  reply.header('ratelimit-policy', `"${policy}";q=${decision.limit};w=60`);
  reply.header('ratelimit', `"${policy}";r=${decision.remaining};t=${decision.resetSeconds}`);
}
