// What a user sees while PostgreSQL or Redis is down, end to end through the HTTP layer of a
// scale-out runtime. The outage is a TCP proxy between docindex and the real server that the test
// cuts and restores, so the shared test servers themselves are never stopped.
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterEach, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/index.js';
import { createLogger } from '../../src/start/logger.js';
import { createRuntime, type Runtime } from '../../src/start/runtime.js';
import {
  checkServices,
  deleteRedisPrefix,
  describeScaleOut,
  dropSchema,
  freshPrefix,
  freshSchema,
} from './services.js';

const services = await checkServices(['DATABASE_URL', 'REDIS_URL']);

/** A TCP proxy to `target` that can cut every connection (refusing new ones) and come back. */
class CuttableProxy {
  private server: net.Server | null = null;
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async start(): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.target);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => {});
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  /** Drops every open connection and refuses new ones, as a stopped server would. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => server?.close(() => resolve()) ?? resolve());
  }

  async restore(): Promise<void> {
    await this.start();
  }
}

function through(url: string, proxy: CuttableProxy): string {
  const u = new URL(url);
  u.hostname = '127.0.0.1';
  u.port = String(proxy.port);
  return u.toString();
}

function targetOf(url: string, defaultPort: number): { host: string; port: number } {
  const u = new URL(url);
  return { host: u.hostname, port: Number(u.port || defaultPort) };
}

describeScaleOut('scale-out outages', services, () => {
  const databaseUrl = services.urls.DATABASE_URL ?? '';
  const redisUrl = services.urls.REDIS_URL ?? '';
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function start(env: Record<string, string>): Promise<{ runtime: Runtime; app: FastifyInstance }> {
    const schema = freshSchema();
    const prefix = freshPrefix();
    const dataDir = mkdtempSync(path.join(tmpdir(), 'docindex-outage-'));
    const config = loadConfig({
      DATABASE_SCHEMA: schema,
      REDIS_PREFIX: prefix,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'silent',
      DEFAULT_RATE_LIMIT_RPM: '1000000',
      ...env,
    });
    const runtime = await createRuntime(config, createLogger('silent'));
    const app = await buildApp(runtime.appDeps);
    cleanups.push(async () => {
      await dropSchema(databaseUrl, schema);
      await deleteRedisPrefix(redisUrl, prefix);
      rmSync(dataDir, { recursive: true, force: true });
    });
    cleanups.push(async () => {
      await app.close();
      await runtime.close();
    });
    return { runtime, app };
  }

  it('PostgreSQL down: requests get 503 at once, /readyz fails, and both recover with the server', async () => {
    const proxy = new CuttableProxy(targetOf(databaseUrl, 5432));
    await proxy.start();
    cleanups.push(() => proxy.cut());
    const { runtime, app } = await start({ DATABASE_URL: through(databaseUrl, proxy), REDIS_URL: redisUrl });
    const { api_key } = await runtime.admin.createOrg('outage');
    const usage = () =>
      app.inject({ method: 'GET', url: '/v1/usage', headers: { authorization: `Bearer ${api_key}` } });
    expect((await usage()).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);

    await proxy.cut();
    const t0 = Date.now();
    const down = await usage();
    expect(Date.now() - t0).toBeLessThan(6000);
    expect(down.statusCode).toBe(503);
    expect(down.json()).toMatchObject({ status: 503, code: 'service_unavailable' });
    expect(down.headers['retry-after']).toBe('5');
    const ready = await app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json().checks).toMatchObject({ redis: 'ok' });
    expect(ready.json().checks.postgres).not.toBe('ok');

    await proxy.restore();
    expect((await usage()).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
  });

  it('Redis down: the API keeps answering, ingest is accepted, and the document is processed once Redis is back', async () => {
    const proxy = new CuttableProxy(targetOf(redisUrl, 6379));
    await proxy.start();
    cleanups.push(() => proxy.cut());
    const { runtime, app } = await start({
      DATABASE_URL: databaseUrl,
      REDIS_URL: through(redisUrl, proxy),
      RECONCILE_INTERVAL_MS: '1000',
    });
    const worker = runtime.startWorker();
    cleanups.push(() => worker.stop());
    const { api_key } = await runtime.admin.createOrg('outage');
    const headers = { authorization: `Bearer ${api_key}`, 'content-type': 'application/json' };

    await proxy.cut();
    const t0 = Date.now();
    const limited = await app.inject({ method: 'GET', url: '/v1/usage', headers });
    // The limiter decided from its in-process fallback: still counted, still answered.
    expect(limited.statusCode).toBe(200);
    expect(limited.headers.ratelimit).toMatch(/r=\d+/);
    const ingest = await app.inject({
      method: 'POST',
      url: '/v1/ingest',
      headers,
      payload: JSON.stringify({ documents: [{ text: 'The okapi lives in the Ituri rainforest.' }] }),
    });
    expect(ingest.statusCode).toBe(202);
    expect(Date.now() - t0).toBeLessThan(5000);
    const [id] = ingest.json().document_ids as string[];
    const ready = await app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json().checks).toMatchObject({ postgres: 'ok' });
    expect(ready.json().checks.redis).not.toBe('ok');

    await proxy.restore();
    const deadline = Date.now() + 30_000;
    let status = '';
    while (Date.now() < deadline) {
      const doc = await app.inject({ method: 'GET', url: `/v1/documents/${id}`, headers });
      status = doc.json().status;
      if (status === 'ready') break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(status).toBe('ready');
    expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
  });
});
