// Deletes, purges and one tenant's held connections on PostgreSQL while a large document is being
// indexed: the index write holds its document's row for as long as it writes chunks, and nothing
// another request does may wait for it. One runtime (API and worker) on a schema of its own,
// served over HTTP on 127.0.0.1; the PostgreSQL table queue runs the jobs.
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/index.js';
import { createLogger } from '../../src/start/logger.js';
import { createRuntime, type Runtime } from '../../src/start/runtime.js';
import { checkServices, describeScaleOut, dropSchema, freshSchema } from './services.js';

const services = await checkServices(['DATABASE_URL']);
const ADMIN_TOKEN = 'admin-token-for-delete-during-indexing-tests';
/** About 4 MB of text: its index write takes seconds, during which it holds the document's row. */
const LARGE_TEXT = Array.from(
  { length: 50_000 },
  (_, i) => `Line ${i} of the gannet survey counts the nests on the stack.`,
).join('\n');

describeScaleOut('deletes during indexing (PostgreSQL)', services, () => {
  const databaseUrl = services.urls.DATABASE_URL ?? '';
  const schema = freshSchema();
  let runtime: Runtime;
  let app: FastifyInstance;
  let worker: { stop(): Promise<void> };
  let base = '';
  let work = '';
  let client: pg.Client;

  beforeAll(async () => {
    work = mkdtempSync(path.join(tmpdir(), 'docindex-delete-indexing-'));
    const config = loadConfig({
      DATABASE_URL: databaseUrl,
      DATABASE_SCHEMA: schema,
      DATA_DIR: work,
      LOG_LEVEL: 'silent',
      DEFAULT_RATE_LIMIT_RPM: '1000000',
      ADMIN_TOKEN,
      MAX_JSON_BODY_BYTES: String(16 * 1024 * 1024),
    });
    runtime = await createRuntime(config, createLogger('silent'));
    app = await buildApp(runtime.appDeps);
    await app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    worker = runtime.startWorker();
    client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
  });

  afterAll(async () => {
    await client?.end();
    await app?.close();
    await worker?.stop();
    await runtime?.close();
    await dropSchema(databaseUrl, schema);
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const call = async (key: string, method: string, url: string, body?: unknown) => {
    const res = await fetch(`${base}${url}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  };

  /**
   * Ingests the large text and resolves once its index write holds the document's row, kept
   * there by a SHARE lock on the chunks table (reads go on; the write's chunk writes wait), so
   * the write lasts until `release` whatever the machine's speed. A request that waited for the
   * write would wait until then: the tests release it only after their requests answered, or
   * after 20 s.
   */
  const largeDocumentBeingIndexed = async (key: string) => {
    const holder = new pg.Client({ connectionString: databaseUrl });
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query(`LOCK TABLE "${schema}".chunks IN SHARE MODE`);
    const release = async () => {
      await holder.query('ROLLBACK');
      await holder.end();
    };
    try {
      const ack = await call(key, 'POST', '/v1/ingest', { documents: [{ text: LARGE_TEXT }] });
      expect(ack.status).toBe(202);
      const id = (ack.json.document_ids as string[])[0] as string;
      await eventually(async () => {
        const { rows } = await client.query(
          `SELECT 1 FROM pg_locks AS l JOIN pg_class AS c ON c.oid = l.relation
           JOIN pg_namespace AS n ON n.oid = c.relnamespace
           WHERE NOT l.granted AND c.relname = 'chunks' AND n.nspname = $1`,
          [schema],
        );
        return rows.length > 0;
      }, 'the index write waiting to write chunks');
      return { id, release };
    } catch (error) {
      await release();
      throw error;
    }
  };

  /** What `work` answers, or 'still waiting' after 20 s (then `release` lets it finish). */
  const answeredWhileHeld = async <T>(work: Promise<T>, release: () => Promise<void>) => {
    const outcome = await Promise.race([
      work.then(() => 'answered' as const),
      new Promise<'still waiting'>((resolve) => setTimeout(() => resolve('still waiting'), 20_000)),
    ]);
    await release();
    return { outcome, result: await work };
  };

  /** Document and chunk rows left of one document (`id`) or one org (`org_id`). */
  const rowsLeft = async (by: 'id' | 'org_id', value: string) => {
    const chunkColumn = by === 'id' ? 'document_id' : 'org_id';
    const { rows } = await client.query<{ docs: number; chunks: number }>(
      `SELECT (SELECT count(*) FROM "${schema}".documents WHERE ${by} = $1)::int AS docs,
              (SELECT count(*) FROM "${schema}".chunks WHERE ${chunkColumn} = $1)::int AS chunks`,
      [value],
    );
    return rows[0];
  };

  /** Polls until `check` holds; the write gives up at its next batch, so this is soon. */
  const eventually = async (check: () => Promise<boolean>, what: string) => {
    const deadline = Date.now() + 60_000;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`${what}: not within 60 s`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  it('answers 15 concurrent deletes of a document being indexed at once, and another org keeps working', async () => {
    const a = await runtime.admin.createOrg('deleter');
    const b = await runtime.admin.createOrg('bystander');
    const [other] = (await call(b.api_key, 'POST', '/v1/ingest', { documents: [{ text: 'puffins nest' }] }))
      .json.document_ids as string[];
    await eventually(
      async () => (await call(b.api_key, 'GET', `/v1/documents/${other}`)).json.status === 'ready',
      'the other org’s document ready',
    );
    const { id, release } = await largeDocumentBeingIndexed(a.api_key);

    // Before, each delete waited for the write (up to the 60 s statement timeout, then 500) and
    // held a pooled connection meanwhile, so the other org's requests found none (503).
    const { outcome, result } = await answeredWhileHeld(
      Promise.all([
        Promise.all(Array.from({ length: 15 }, () => call(a.api_key, 'DELETE', `/v1/documents/${id}`))),
        call(b.api_key, 'POST', '/v1/query', { query: 'puffins' }),
        call(b.api_key, 'GET', '/v1/usage'),
      ]),
      release,
    );
    const [deletes, query, usage] = result;
    expect(outcome).toBe('answered');
    const statuses = deletes.map((d) => d.status).sort();
    expect(statuses).toEqual([204, ...Array<number>(14).fill(404)]);
    expect(query.status).toBe(200);
    expect((query.json.results as { document_id: string }[]).map((r) => r.document_id)).toEqual([other]);
    expect(usage.status).toBe(200);

    expect((await call(a.api_key, 'GET', `/v1/documents/${id}`)).status).toBe(404);
    expect((await call(a.api_key, 'GET', '/v1/documents')).json.documents).toEqual([]);
    // The write gives up at its next batch and removes the row with any chunks.
    await eventually(async () => {
      const left = await rowsLeft('id', id);
      return left?.docs === 0 && left.chunks === 0;
    }, 'the deleted document’s rows removed');
  });

  it('purges an org whose large document is being indexed at once, leaving nothing of it', async () => {
    const c = await runtime.admin.createOrg('purged');
    const { release } = await largeDocumentBeingIndexed(c.api_key);
    // Before, the purge waited for the write and failed at the 60 s statement timeout with a 500.
    const { outcome, result: res } = await answeredWhileHeld(
      fetch(`${base}/admin/v1/orgs/${c.org_id}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      }),
      release,
    );
    expect(outcome).toBe('answered');
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ org_id: c.org_id, documents: 1 });
    expect((await call(c.api_key, 'GET', '/v1/documents')).status).toBe(401);
    await eventually(async () => {
      const left = await rowsLeft('org_id', c.org_id);
      const org = await client.query(`SELECT 1 FROM "${schema}".orgs WHERE id = $1`, [c.org_id]);
      return left?.docs === 0 && left.chunks === 0 && org.rowCount === 0;
    }, 'nothing of the purged org left');
  });

  it('keeps one org’s requests to its share of the pool: another org’s answer while they wait', async () => {
    const a = await runtime.admin.createOrg('hog');
    const b = await runtime.admin.createOrg('neighbour');
    const [id] = (await call(a.api_key, 'POST', '/v1/ingest', { documents: [{ text: 'gannets' }] })).json
      .document_ids as string[];
    await eventually(
      async () => (await call(a.api_key, 'GET', `/v1/documents/${id}`)).json.status === 'ready',
      'the document ready',
    );
    // The row held from outside: every PATCH of it waits, holding what it took from the pool.
    const holder = new pg.Client({ connectionString: databaseUrl });
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query(`SELECT 1 FROM "${schema}".documents WHERE id = $1 FOR UPDATE`, [id]);
    let patches: Promise<{ status: number; json: Record<string, unknown> }[]> | null = null;
    try {
      patches = Promise.all(
        Array.from({ length: 16 }, (_, i) =>
          call(a.api_key, 'PATCH', `/v1/documents/${id}`, { metadata: { n: String(i) } }),
        ),
      );
      const waiting = async () =>
        Number(
          (
            await client.query(
              `SELECT count(*)::int AS n FROM pg_stat_activity
               WHERE wait_event_type = 'Lock' AND query LIKE $1`,
              [`%"${schema}"."documents"%FOR NO KEY UPDATE%`],
            )
          ).rows[0].n,
        );
      await eventually(async () => (await waiting()) >= 2, 'the PATCHes waiting on the row');
      // Give the rest their chance to take connections (without a share they take all of them).
      await new Promise((resolve) => setTimeout(resolve, 500));
      const query = await call(b.api_key, 'POST', '/v1/query', { query: 'gannets' });
      expect(query.status).toBe(200);
      // The pool holds max(10, 2 × 4 + 4) = 12 connections; one org's share is half of them.
      expect(await waiting()).toBeLessThanOrEqual(6);
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
    // Each PATCH either ran once the row was free, or gave up waiting for the org's share.
    for (const p of (await patches) ?? []) {
      expect([200, 503]).toContain(p.status);
      if (p.status === 503) expect(p.json.code).toBe('overloaded');
    }
  });
});
