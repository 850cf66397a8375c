// The Tracer port's contract: what the services may rely on whichever tracer they are given
// (the no-op one while tracing is off, OpenTelemetry's when on). A traced step behaves exactly as
// the untraced one would: its value and its error pass through unchanged, nothing it runs is
// lost, and no call of the port throws.
import { describe, expect, it } from 'vitest';
import type { Tracer } from '../../src/domain/ports.js';

export function tracerContract(name: string, tracer: Tracer): void {
  describe(name, () => {
    it('returns what a traced step returns, and throws what it throws', async () => {
      await expect(
        tracer.inSpan('step', { attributes: () => ({ 'docindex.chunks': 2 }) }, async () => 42),
      ).resolves.toBe(42);
      const error = Object.assign(new Error('boom'), { code: 'internal' });
      await expect(tracer.inSpan('step', {}, async () => Promise.reject(error))).rejects.toBe(error);
    });

    it('runs nested steps and steps under a span started elsewhere, in order', async () => {
      const ran: string[] = [];
      await tracer.inSpan(
        'outer',
        { kind: 'consumer', parent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01` },
        async (outer) => {
          ran.push('outer');
          await tracer.inSpan('inner', { parent: outer }, async () => {
            ran.push('inner');
          });
        },
      );
      const span = tracer.startSpan('request', {
        kind: 'server',
        startTime: Date.now() - 10,
        parent: 'not a traceparent',
      });
      ran.push(await tracer.inSpan('handler', { parent: span }, async () => 'handler'));
      span.setAttributes(() => ({ 'http.response.status_code': 200, 'docindex.document.ids': ['a', 'b'] }));
      span.fail({ code: '500' });
      span.end();
      expect(ran).toEqual(['outer', 'inner', 'handler']);
    });

    it('hands on a span as a W3C traceparent, or null when it is not traced', () => {
      const span = tracer.startSpan('job');
      expect(span.traceparent() ?? 'none').toMatch(/^(00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]|none)$/);
      span.end();
    });
  });
}
