// A span per HTTP request (SERVER), continuing the trace of an incoming W3C `traceparent`. The
// span is made current in the last hook before the handler, after the body is read (the body's
// stream events would not carry it), so the services' spans are its children.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Principal } from '../../domain/auth.js';
import type { Tracer, TraceSpan } from '../../domain/ports.js';

export function requestTracing(app: FastifyInstance, tracer: Tracer): void {
  const spans = new WeakMap<FastifyRequest, TraceSpan>();
  app.addHook('onRequest', async (request) => {
    // The route pattern, never the URL: ids and query strings stay out of the span's name.
    const route = request.routeOptions.url;
    const traceparent = request.headers.traceparent;
    spans.set(
      request,
      tracer.startSpan(route === undefined ? request.method : `${request.method} ${route}`, {
        kind: 'server',
        parent: typeof traceparent === 'string' ? traceparent : null,
        attributes: {
          'http.request.method': request.method,
          ...(route === undefined ? {} : { 'http.route': route }),
          'docindex.request_id': request.id,
        },
      }),
    );
  });
  app.addHook('preHandler', (request, _reply, done) => {
    const span = spans.get(request);
    if (span) tracer.withSpan(span, done);
    else done();
  });
  const finish = (request: FastifyRequest, status: number | null) => {
    const span = spans.get(request);
    if (!span) return;
    spans.delete(request);
    // Absent on routes without authentication, and before a key was checked.
    const principal = request.principal as Principal | null;
    span.setAttributes({
      ...(status === null ? { 'docindex.request.aborted': true } : { 'http.response.status_code': status }),
      ...(principal ? { 'docindex.org_id': principal.org.id } : {}),
    });
    if (status !== null && status >= 500) span.fail({ name: 'Error', code: String(status) });
    span.end();
  };
  app.addHook('onResponse', async (request, reply) => finish(request, reply.statusCode));
  app.addHook('onRequestAbort', async (request) => finish(request, null));
}
