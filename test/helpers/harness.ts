// Builds a real docindex (real SQLite file in a temp dir, real workers, real HTTP handling via
// inject) for HTTP tests. With TEST_BACKEND=scale-out and DATABASE_URL/REDIS_URL set, the same
// tests run against PostgreSQL (a fresh schema) and Redis (a fresh prefix).
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/index.js';
import type { Clock } from '../../src/domain/ports.js';
import { createLogger } from '../../src/start/logger.js';
import { createRuntime, type Runtime } from '../../src/start/runtime.js';
import { deleteRedisPrefix, dropSchema } from '../scale-out/services.js';

export class FakeClock implements Clock {
  constructor(private current = new Date('2026-03-15T12:00:00.000Z')) {}
  now(): Date {
    return new Date(this.current);
  }
  set(at: Date | string): void {
    this.current = new Date(at);
  }
  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms);
  }
}

export interface TestOrg {
  orgId: string;
  keyId: string;
  apiKey: string;
}

export interface Harness {
  app: FastifyInstance;
  runtime: Runtime;
  orgA: TestOrg;
  orgB: TestOrg;
  dataDir: string;
  request(
    method: InjectOptions['method'],
    url: string,
    options?: {
      key?: string | null;
      body?: unknown;
      headers?: Record<string, string>;
      payload?: InjectOptions['payload'];
    },
  ): Promise<LightMyRequestResponse>;
  /** Ingests text documents as `org` and returns their ids. */
  ingest(org: TestOrg, texts: string[], extra?: Record<string, unknown>): Promise<string[]>;
  /**
   * Everything the blob store holds, unfinished uploads included (to check nothing is left
   * behind): files under the blob folder (`.part` ones are uploads in progress), or the blob rows
   * of PostgreSQL with the bytes of their chunk rows.
   */
  blobObjects(): Promise<{ name: string; bytes: number; complete: boolean }[]>;
  /** The names of blobObjects(). */
  blobFiles(): Promise<string[]>;
  /** Polls until every document is ready or failed; returns their records. */
  waitForDone(org: TestOrg, ids: string[], timeoutMs?: number): Promise<Record<string, unknown>[]>;
  /** Polls until every document is ready and its vectors are too (an embedding provider set). */
  waitForVectors(org: TestOrg, ids: string[], timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export const scaleOutBackend = process.env.TEST_BACKEND === 'scale-out';

export async function startHarness(
  options: { clock?: Clock; env?: Record<string, string>; worker?: boolean } = {},
): Promise<Harness> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'docindex-test-'));
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    // Polling in tests would trip the default limit; rate-limit tests set their own.
    DEFAULT_RATE_LIMIT_RPM: '1000000',
    UNAUTHENTICATED_RATE_LIMIT_RPM: '1000000',
    ...options.env,
  };
  if (scaleOutBackend) {
    env.DATABASE_URL = requireEnv('DATABASE_URL');
    env.REDIS_URL = requireEnv('REDIS_URL');
    env.DATABASE_SCHEMA = `t_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
    env.REDIS_PREFIX = `t-${randomUUID()}`;
  }
  const config = loadConfig(env);
  const runtime = await createRuntime(config, createLogger('silent'), options.clock);
  const app = await buildApp(runtime.appDeps);
  const worker = options.worker === false ? null : runtime.startWorker();
  const a = await runtime.admin.createOrg('org-a');
  const b = await runtime.admin.createOrg('org-b');
  const orgA = { orgId: a.org_id, keyId: a.key_id, apiKey: a.api_key };
  const orgB = { orgId: b.org_id, keyId: b.key_id, apiKey: b.api_key };

  const request: Harness['request'] = (method, url, opts = {}) => {
    const headers: Record<string, string> = { ...opts.headers };
    const key = opts.key === undefined ? orgA.apiKey : opts.key;
    if (key !== null) headers.authorization = `Bearer ${key}`;
    const inject: InjectOptions = { method, url, headers };
    if (opts.body !== undefined) {
      inject.payload = JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    } else if (opts.payload !== undefined) {
      inject.payload = opts.payload;
    }
    return app.inject(inject);
  };

  let blobDb: pg.Pool | undefined;
  const harness: Harness = {
    app,
    runtime,
    orgA,
    orgB,
    dataDir,
    request,
    async blobObjects() {
      if (config.blobStore === 'postgres') {
        blobDb ??= new pg.Pool({ connectionString: config.databaseUrl ?? '', max: 1 });
        const schema = `"${config.databaseSchema}"`;
        const { rows } = await blobDb.query<{ key: string; complete: boolean; bytes: string }>(
          `SELECT b.key, b.complete, COALESCE(SUM(octet_length(c.data)), 0) AS bytes
           FROM ${schema}.blobs b LEFT JOIN ${schema}.blob_chunks c USING (key)
           GROUP BY b.key, b.complete ORDER BY b.key`,
        );
        return rows.map((r) => ({ name: r.key, bytes: Number(r.bytes), complete: r.complete }));
      }
      if (config.blobStore !== 'fs')
        throw new Error(`the harness cannot list BLOB_STORE=${config.blobStore}`);
      const walk = (dir: string): string[] => {
        try {
          return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
            e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)],
          );
        } catch {
          return [];
        }
      };
      return walk(config.blobDir).map((file) => ({
        name: file,
        bytes: statSync(file, { throwIfNoEntry: false })?.size ?? 0,
        complete: !file.endsWith('.part'),
      }));
    },
    async blobFiles() {
      return (await harness.blobObjects()).map((o) => o.name);
    },
    async ingest(org, texts, extra = {}) {
      const res = await request('POST', '/v1/ingest', {
        key: org.apiKey,
        body: { documents: texts.map((text) => ({ text })), ...extra },
      });
      if (res.statusCode !== 202) throw new Error(`ingest failed: ${res.statusCode} ${res.body}`);
      return res.json().document_ids as string[];
    },
    async waitForVectors(org, ids, timeoutMs = 30_000) {
      await harness.waitForDone(org, ids, timeoutMs);
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const res = await request('GET', `/v1/documents?limit=100&ids=${ids.join(',')}`, { key: org.apiKey });
        const documents = res.json().documents as Array<{ vectors: { status: string } }>;
        if (documents.every((d) => d.vectors.status === 'ready')) return;
        if (Date.now() > deadline) throw new Error(`vectors not ready after ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async waitForDone(org, ids, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      const done = new Map<string, Record<string, unknown>>();
      const lastSeen = new Map<string, Record<string, unknown>>();
      while (Date.now() < deadline) {
        const pending = ids.filter((id) => !done.has(id));
        for (let i = 0; i < pending.length; i += 100) {
          const batch = pending.slice(i, i + 100);
          const res = await request('GET', `/v1/documents?limit=100&ids=${batch.join(',')}`, {
            key: org.apiKey,
          });
          for (const doc of res.json().documents as Record<string, unknown>[]) {
            lastSeen.set(doc.id as string, doc);
            if (doc.status === 'ready' || doc.status === 'failed') done.set(doc.id as string, doc);
          }
        }
        if (done.size === ids.length) return ids.map((id) => done.get(id)!);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      throw new Error(
        `documents not done within ${timeoutMs} ms: ${ids
          .filter((id) => !done.has(id))
          .map((id) => `${id} (last seen: ${JSON.stringify(lastSeen.get(id) ?? null)})`)
          .join(', ')}`,
      );
    },
    async close() {
      await app.close();
      await worker?.stop();
      await runtime.close();
      await blobDb?.end();
      if (scaleOutBackend) await dropScaleOutState(env.DATABASE_SCHEMA!, env.REDIS_PREFIX!);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return harness;
}

/** Removes this harness's PostgreSQL schema and Redis keys, so test runs leave nothing behind. */
async function dropScaleOutState(schema: string, prefix: string): Promise<void> {
  await dropSchema(requireEnv('DATABASE_URL'), schema);
  await deleteRedisPrefix(requireEnv('REDIS_URL'), prefix);
}

function requireEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`TEST_BACKEND=scale-out needs ${name}`);
  return value;
}
