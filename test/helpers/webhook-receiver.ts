// A webhook receiver on 127.0.0.1 for tests and benchmarks: every request is verified with the
// `standardwebhooks` package (a client no one here wrote) against the secret registered for its
// path, and recorded; how it answers is up to the test (a status, a hang, or nothing at all when
// stopped).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface ReceivedWebhook {
  path: string;
  id: string;
  timestamp: string;
  /** Whether `standardwebhooks` accepted the signature. */
  verified: boolean;
  body: { type: string; timestamp: string; data: Record<string, unknown> };
  /** performance.timeOrigin + now() when the request was answered. */
  receivedAt: number;
  status: number;
}

/** What to answer a request with: a status, or 'hang' (never answer). */
export type Answer = number | 'hang';

export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  private readonly secrets = new Map<string, string>();
  private readonly answers = new Map<string, (n: number) => Answer>();
  private readonly counts = new Map<string, number>();
  private server: http.Server | null = null;
  private readonly hanging = new Set<http.ServerResponse>();
  port = 0;

  /** Listens on 127.0.0.1 (a fixed port to come back on after stop(), else a free one). */
  async start(port = this.port): Promise<void> {
    const server = http.createServer((req, res) => this.handle(req, res));
    server.keepAliveTimeout = 1000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  /** Stops listening: connections are refused until start() again. */
  async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.hanging.clear();
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** Registers the secret to verify `path`'s requests with, and how to answer its n-th (1-based) request. */
  expect(path: string, secret: string, answer: (n: number) => Answer = () => 200): void {
    this.secrets.set(path, secret);
    this.answers.set(path, answer);
  }

  answerWith(path: string, answer: (n: number) => Answer): void {
    this.answers.set(path, answer);
  }

  /** Requests held unanswered ('hang') whose sender is still waiting. */
  unanswered(): number {
    return this.hanging.size;
  }

  at(path: string): ReceivedWebhook[] {
    return this.received.filter((r) => r.path === path);
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const raw = Buffer.concat(chunks).toString('utf8');
      const n = (this.counts.get(path) ?? 0) + 1;
      this.counts.set(path, n);
      const answer = (this.answers.get(path) ?? (() => 404))(n);
      if (answer === 'hang') {
        this.hanging.add(res);
        res.once('close', () => this.hanging.delete(res));
        return;
      }
      const secret = this.secrets.get(path);
      let verified = false;
      const headers = {
        'webhook-id': String(req.headers['webhook-id'] ?? ''),
        'webhook-timestamp': String(req.headers['webhook-timestamp'] ?? ''),
        'webhook-signature': String(req.headers['webhook-signature'] ?? ''),
      };
      if (secret) {
        try {
          new Webhook(secret).verify(raw, headers);
          verified = true;
        } catch {
          verified = false;
        }
      }
      let body: ReceivedWebhook['body'];
      try {
        body = JSON.parse(raw) as ReceivedWebhook['body'];
      } catch {
        body = { type: '(unparsable)', timestamp: '', data: {} };
      }
      this.received.push({
        path,
        id: headers['webhook-id'],
        timestamp: headers['webhook-timestamp'],
        verified,
        body,
        receivedAt: performance.timeOrigin + performance.now(),
        status: answer,
      });
      res.writeHead(answer, { 'content-type': 'text/plain' });
      res.end('ok');
    });
  }
}
