// Shared by the client tests: a docindex listening on 127.0.0.1 (a real HTTP server over the test
// harness), and a fetch that records what the client sent and what it got back.
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';

export async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  return `http://127.0.0.1:${port}`;
}

export interface RecordedExchange {
  method: string;
  url: URL;
  headers: Headers;
  status: number;
  retryAfter: string | null;
  at: number;
}

/** A fetch that passes every request to the real one and remembers it. */
export function recordingFetch(): { fetch: typeof globalThis.fetch; exchanges: RecordedExchange[] } {
  const exchanges: RecordedExchange[] = [];
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const request = new Request(input, init);
    const response = await globalThis.fetch(request);
    exchanges.push({
      method: request.method,
      url: new URL(request.url),
      headers: request.headers,
      status: response.status,
      retryAfter: response.headers.get('retry-after'),
      at: Date.now(),
    });
    return response;
  };
  return { fetch, exchanges };
}
