// Operational endpoints, outside /v1 and without auth: liveness, readiness, the OpenAPI document.
// /readyz also shows the providers queries call (kind, model, circuit state; `embeddings` and
// `rerank` say which model each is, or "none"): a provider that is down does not make the instance
// unready, as queries still answer without it (`degraded`).
import type { FastifyInstance } from 'fastify';
import { withTimeout } from '../../domain/timeout.js';
import type { AppDeps } from '../deps.js';

const READINESS_TIMEOUT_MS = 2_000;

export function operationsRoutes(app: FastifyInstance, deps: AppDeps): void {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    const checks: Record<string, string> = {};
    let ready = true;
    await Promise.all(
      deps.readiness.map(async ({ name, check }) => {
        try {
          await withTimeout(check(), READINESS_TIMEOUT_MS, 'no answer');
          checks[name] = 'ok';
        } catch (error) {
          ready = false;
          checks[name] = error instanceof Error ? error.message : 'failed';
        }
      }),
    );
    const configured = deps.providers ?? [];
    const providers = Object.fromEntries(
      configured.map((p) => [p.name, { kind: p.kind, model: p.model, state: p.state() }]),
    );
    // Which embedding model and reranker this instance uses, or "none": never a URL or a key.
    const active = (name: string) => {
      const provider = configured.find((p) => p.name === name);
      return provider ? { provider: provider.kind, model: provider.model } : 'none';
    };
    return reply.code(ready ? 200 : 503).send({
      status: ready ? 'ready' : 'unavailable',
      checks,
      providers,
      embeddings: active('embeddings'),
      rerank: active('rerank'),
    });
  });

  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  const metrics = deps.metrics;
  if (metrics) {
    app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
      const { contentType, body } = await metrics.render();
      return reply.type(contentType).send(body);
    });
    app.addHook('onResponse', async (request, reply) => {
      // The route pattern, not the URL: ids would make every request its own series.
      const route = request.routeOptions.url ?? 'unmatched';
      metrics.observeRequest(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
    });
  }
}
