// Structured logs (pino) to stderr, so stdout carries only results. Keys and bodies are never logged.
import pino from 'pino';

export function createLogger(level: string) {
  return pino(
    {
      level,
      base: { service: 'docindex' },
      redact: {
        paths: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization'],
        remove: true,
      },
      serializers: {
        req: (req: { method: string; url: string; id: string }) => ({
          method: req.method,
          // Query strings may carry signatures or tokens by mistake: log the path only.
          path: req.url.split('?')[0],
          request_id: req.id,
        }),
      },
    },
    pino.destination({ fd: 2, sync: false }),
  );
}

export type Logger = ReturnType<typeof createLogger>;
