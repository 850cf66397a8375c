// A real HTTP server on 127.0.0.1 that a test can stop (every connection cut: clients see
// connection refused) and start again on the same port. The provider stand-ins extend it.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export abstract class LoopbackHttpServer {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  /** 0 until the first start; then the same port on every start. */
  protected port = 0;

  protected abstract handle(req: IncomingMessage, res: ServerResponse): Promise<void>;

  async start(): Promise<this> {
    const server = createServer((req, res) => void this.handle(req, res));
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
    return this;
  }

  /** Closes the port and every open connection: clients then see connection refused. */
  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = null;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
