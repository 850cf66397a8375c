// A span per HTTP request (SERVER), continuing the trace of an incoming W3C `traceparent`. The
// span is `request.traceSpan`: handlers pass it to the services as the parent of their spans.
// With tracing off no hook is added and `request.traceSpan` is null: a request pays nothing.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Principal } from '../../domain/auth.js';
import { noopTracer, type Tracer } from '../../domain/ports.js';

export function requestTracing(app: FastifyInstance, tracer: Tracer): void {
  app.decorateRequest('traceSpan', null);
  if (tracer === noopTracer) return;
  // Callback hooks, not async ones: a request pays no promise for its span.
  app.addHook('onRequest', (request, _reply, done) => {
    // The route pattern, never the URL: ids and query strings stay out of the span's name.
    const route = request.routeOptions.url;
    const traceparent = request.headers.traceparent;
    request.traceSpan = tracer.startSpan(
      route === undefined ? request.method : `${request.method} ${route}`,
      {
        kind: 'server',
        parent: typeof traceparent === 'string' ? traceparent : null,
        attributes: () => ({
          'http.request.method': request.method,
          'http.route': route,
          'docindex.request_id': request.id,
        }),
      },
    );
    done();
  });
  const finish = (request: FastifyRequest, status: number | null) => {
    const span = request.traceSpan;
    if (!span) return;
    request.traceSpan = null;
    // Absent on routes without authentication, and before a key was checked.
    const principal = request.principal as Principal | null;
    span.setAttributes(() => ({
      'http.response.status_code': status ?? undefined,
      'docindex.request.aborted': status === null ? true : undefined,
      'docindex.org_id': principal?.org.id,
    }));
    if (status !== null && status >= 500) span.fail({ name: 'Error', code: String(status) });
    span.end();
  };
  app.addHook('onResponse', (request, reply, done) => {
    finish(request, reply.statusCode);
    done();
  });
  app.addHook('onRequestAbort', (request, done) => {
    finish(request, null);
    done();
  });
}
