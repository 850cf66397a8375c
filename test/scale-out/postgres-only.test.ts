// The scale-out deployment without Redis: PostgreSQL stores, the PostgreSQL table queue (both
// lanes) and the PostgreSQL rate limiter. Two runtimes stand for two processes (each its own
// pool, queue consumers and limiter): documents posted to both, URL downloads included, end
// `ready` once each, and the rate limit is exact across the two.
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/index.js';
import { chunkText } from '../../src/pipeline/chunk/chunker.js';
import { createLogger } from '../../src/start/logger.js';
import { createRuntime, type Runtime } from '../../src/start/runtime.js';
import { checkServices, describeScaleOut, dropSchema, freshSchema } from './services.js';

const services = await checkServices(['DATABASE_URL']);

const DOCS = 60;

describeScaleOut('scale-out without Redis', services, () => {
  const databaseUrl = services.urls.DATABASE_URL ?? '';
  const schema = freshSchema();
  const nodes: { runtime: Runtime; app: FastifyInstance; worker: { stop(): Promise<void> } }[] = [];
  let origin = '';
  let server: http.Server;
  let work = '';

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(`Downloaded capybara notes from ${req.url}.\n`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    origin = `http://127.0.0.1:${port}`;
    work = mkdtempSync(path.join(tmpdir(), 'docindex-pg-only-'));
    const config = loadConfig({
      DATABASE_URL: databaseUrl,
      DATABASE_SCHEMA: schema,
      BLOB_DIR: path.join(work, 'blobs'),
      DATA_DIR: work,
      LOG_LEVEL: 'silent',
      URL_FETCH_ALLOW: `127.0.0.1:${port}`,
      DEFAULT_RATE_LIMIT_RPM: '1000000',
    });
    for (let i = 0; i < 2; i++) {
      const runtime = await createRuntime(config, createLogger('silent'));
      nodes.push({ runtime, app: await buildApp(runtime.appDeps), worker: runtime.startWorker() });
    }
  });

  afterAll(async () => {
    for (const node of nodes) {
      await node.app.close();
      await node.worker.stop();
      await node.runtime.close();
    }
    await new Promise((resolve) => server?.close(resolve));
    await dropSchema(databaseUrl, schema);
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('runs every job once across two processes and limits exactly, with PostgreSQL alone', async () => {
    const [a, b] = nodes as [(typeof nodes)[0], (typeof nodes)[0]];
    expect((await a.app.inject({ method: 'GET', url: '/readyz' })).json().checks).toEqual({ postgres: 'ok' });
    const org = await a.runtime.admin.createOrg('pg-only');
    const headers = { authorization: `Bearer ${org.api_key}`, 'content-type': 'application/json' };

    const texts = Array.from(
      { length: DOCS },
      (_, i) => `Document ${i}. ${'The capybara is the largest living rodent. '.repeat(20 + (i % 15))}`,
    );
    const ids: string[] = [];
    for (let i = 0; i < DOCS; i++) {
      const res = await (i % 2 ? b : a).app.inject({
        method: 'POST',
        url: '/v1/ingest',
        headers,
        payload: JSON.stringify({ documents: [{ text: texts[i] }], chunk_size: 128, chunk_overlap: 16 }),
      });
      expect(res.statusCode).toBe(202);
      ids.push(res.json().document_ids[0]);
    }
    const urlIds: string[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await (i % 2 ? b : a).app.inject({
        method: 'POST',
        url: '/v1/ingest/url',
        headers,
        payload: JSON.stringify({ url: `${origin}/notes-${i}.txt?sig=secret` }),
      });
      expect(res.statusCode).toBe(202);
      urlIds.push(res.json().document_ids[0]);
    }

    const all = [...ids, ...urlIds];
    const deadline = Date.now() + 60_000;
    let done: Record<string, unknown>[] = [];
    while (Date.now() < deadline) {
      const res = await a.app.inject({
        method: 'GET',
        url: `/v1/documents?limit=100&ids=${all.join(',')}`,
        headers,
      });
      done = (res.json().documents as Record<string, unknown>[]).filter(
        (d) => d.status === 'ready' || d.status === 'failed',
      );
      if (done.length === all.length) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(done.map((d) => d.status)).toEqual(all.map(() => 'ready'));
    const byId = new Map(done.map((d) => [d.id as string, d]));
    for (let i = 0; i < DOCS; i++) {
      const expected = chunkText(texts[i]!, { chunkSize: 128, chunkOverlap: 16 }).chunks.length;
      expect(byId.get(ids[i]!)?.chunk_count).toBe(expected);
    }
    for (const id of urlIds)
      expect(byId.get(id)).toMatchObject({ source: { type: 'url', content_type: 'text/plain' } });

    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query(
        `SELECT count(*)::int AS n FROM (SELECT 1 FROM "${schema}".chunks GROUP BY document_id, chunk_index HAVING count(*) > 1) AS d`,
      );
      expect(rows[0].n).toBe(0);
      // Every job ran to its end: none pending or leased is left behind. A run records its end
      // just after its document's (the handler returns, then the queue settles), so a job may
      // still be leased for a moment after the last document turned ready.
      const states = async () =>
        (
          await client.query(
            `SELECT job_state, status, count(*)::int AS n FROM "${schema}".documents GROUP BY 1, 2 ORDER BY 1, 2`,
          )
        ).rows;
      const settledBy = Date.now() + 15_000;
      let jobs = await states();
      while (Date.now() < settledBy && !(jobs.length === 1 && jobs[0].job_state === 'done')) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        jobs = await states();
      }
      expect(jobs).toEqual([{ job_state: 'done', status: 'ready', n: all.length }]);
    } finally {
      await client.end();
    }

    const limited = await a.runtime.admin.createOrg('pg-only-limited');
    expect(await a.runtime.admin.setRateLimit(limited.org_id, 10)).toBe(true);
    const statuses = await Promise.all(
      Array.from({ length: 30 }, async (_, i) => {
        const res = await (i % 2 ? b : a).app.inject({
          method: 'GET',
          url: '/v1/usage',
          headers: { authorization: `Bearer ${limited.api_key}` },
        });
        return res.statusCode;
      }),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(20);
  });
});
