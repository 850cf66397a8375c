// The authenticated scope for /v1 and /mcp: every route registered inside gets API-key auth, the
// per-org rate limit and its scope check (a Fastify encapsulated context, so a route cannot forget
// any of them). Each route declares the one key scope it needs as `config: { scope }`; a route
// without one stops the app from starting. Only in a context made with `perToolScopes` (the MCP
// endpoint) may a route declare `'per_tool'` instead: any valid key gets in, and each tool it runs
// checks its own scope. Unauthenticated requests are limited per client address before they are
// refused.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ERRORS } from '../../domain/errors.js';
import {
  accessOfRequest,
  type DocumentAccess,
  requireEveryPartition,
  type WholeOrgFeature,
} from '../../domain/partitions.js';
import type { RateDecision } from '../../domain/ports.js';
import { parsePrincipalsParam } from '../../domain/principals.js';
import { isScope, SCOPES, type Scope } from '../../domain/scopes.js';
import type { AppDeps } from '../deps.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The API-key scope a route needs; `'per_tool'` only where the context allows it. */
    scope?: Scope | typeof PER_TOOL;
    /** Set on routes that work on the whole org: keys limited to partitions get 403. */
    wholeOrg?: WholeOrgFeature;
  }
}

/** A route whose handler checks the scope of each operation it runs (the MCP tools). */
export const PER_TOOL = 'per_tool';

export function authenticatedScope(deps: AppDeps, options: { perToolScopes?: boolean } = {}) {
  return async function scope(app: FastifyInstance): Promise<void> {
    app.decorateRequest('principal', null as unknown as FastifyRequest['principal']);
    app.decorateRequest('access', null as unknown as DocumentAccess);

    app.addHook('onRoute', (route) => {
      const declared = (route.config as { scope?: unknown } | undefined)?.scope;
      if (declared === PER_TOOL && options.perToolScopes) return;
      if (!isScope(declared)) {
        throw new Error(
          `${[route.method].flat().join(',')} ${route.url} declares no key scope: add config: { scope } (one of ${SCOPES.join(', ')})`,
        );
      }
      // The OpenAPI document names the scope with the bearer requirement and in the description.
      if (route.schema) {
        const description = route.schema.description ? `${route.schema.description}\n\n` : '';
        route.schema = {
          ...route.schema,
          description: `${description}Needs an API key with the \`${declared}\` scope.`,
          security: [{ bearer: [declared] }],
        };
      }
    });

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
          request.headers.authorization ? 'The API key is invalid, expired or revoked.' : undefined,
        );
      }
      request.principal = principal;
      request.log = request.log.child({ org_id: principal.org.id });
      const decision = await deps.rateLimiter.consume(`org:${principal.org.id}`, principal.org.rateLimitRpm);
      setRateLimitHeaders(reply, decision, 'org');
      if (!decision.allowed) throw ERRORS.rateLimited(decision.limit, decision.resetSeconds);
      // Checked after the rate limit: a key that keeps calling what it may not still counts.
      const needed = request.routeOptions.config.scope as Scope | typeof PER_TOOL;
      if (needed !== PER_TOOL && !principal.scopes.has(needed)) {
        throw ERRORS.insufficientScope(needed, request.method, request.routeOptions.url ?? request.url);
      }
      const wholeOrg = request.routeOptions.config.wholeOrg;
      if (wholeOrg !== undefined) requireEveryPartition(principal.access, wholeOrg);
    });

    // The principals a request acts for, once its body is read and validated: `principals` of a
    // JSON body (POST /v1/query, POST /v1/documents/delete), else `?principals=a,b`. A bound
    // key's request may name only principals of its key (403 principal_forbidden).
    app.addHook('preHandler', async (request) => {
      request.access = requestAccess(request);
    });

    // The handler runs inside the org's scope: the last hook before it, after the body is read
    // (the body's stream events would not carry the scope), calls `done` from within it.
    const orgScope = deps.orgScope;
    if (orgScope) {
      app.addHook('preHandler', (request, _reply, done) => {
        orgScope.run(request.principal.org.id, done);
      });
    }
  };
}

function requestAccess(request: FastifyRequest): DocumentAccess {
  const key = request.principal.access;
  const body = request.body;
  if (typeof body === 'object' && body !== null && !Array.isArray(body) && 'principals' in body) {
    const named = (body as { principals?: unknown }).principals;
    if (named === undefined || named === null) return key;
    if (!Array.isArray(named)) {
      throw ERRORS.invalid('principals is a list of strings.', [
        { pointer: '/principals', message: 'must be array' },
      ]);
    }
    return accessOfRequest(key, named, '/principals');
  }
  const raw = (request.query as Record<string, unknown> | undefined)?.principals;
  if (raw === undefined) return key;
  if (typeof raw !== 'string') {
    throw ERRORS.invalid('principals is given once, comma-separated: ?principals=a,b.', [
      { pointer: '/query/principals', message: 'must be string' },
    ]);
  }
  return accessOfRequest(key, parsePrincipalsParam(raw), '/query/principals');
}

/** IETF httpapi RateLimit header fields (draft-ietf-httpapi-ratelimit-headers). */
export function setRateLimitHeaders(reply: FastifyReply, decision: RateDecision, policy: string): void {
  reply.header('ratelimit-policy', `"${policy}";q=${decision.limit};w=60`);
  reply.header('ratelimit', `"${policy}";r=${decision.remaining};t=${decision.resetSeconds}`);
}
