// An evaluation survives SIGKILL (embedded): the server is killed while the evaluation is
// `running`; on restart its job is taken again (the dead process's lease released at start) and it
// runs from the start to `done`, with every run and every query's figures, never stuck `running`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { type ServerProcess, startServer, stopServer } from '../helpers/process.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const QUERIES = 1_000;
const RUNS = 10;

describe('SIGKILL during an evaluation (embedded)', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'docindex-evaluation-restart-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('runs it again after the restart, to done', { timeout: 300_000 }, async () => {
    const env = { DATA_DIR: dataDir, DEFAULT_RATE_LIMIT_RPM: '1000000' };
    let server: ServerProcess = await startServer(['serve'], env);
    const key = /api_key: (\S+)/.exec(server.stdout())![1]!;
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const api = async (method: string, url: string, body?: unknown) => {
      const res = await fetch(`${server.baseUrl}${url}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    try {
      const words = ['amber', 'basalt', 'cobalt', 'dune', 'ember', 'fjord', 'glacier', 'harbour'];
      const documents = words.map((w) => ({ external_id: w, text: `${w} field notes` }));
      const ingested = await api('POST', '/v1/ingest', { documents });
      expect(ingested.status).toBe(202);
      for (;;) {
        const ids = (ingested.body.document_ids as string[]).join(',');
        const listed = await api('GET', `/v1/documents?limit=100&ids=${ids}`);
        const docs = listed.body.documents as { status: string }[];
        if (docs.length === words.length && docs.every((d) => d.status === 'ready')) break;
        await sleep(50);
      }
      const queries = Array.from({ length: QUERIES }, (_, i) => ({
        query: `${words[i % words.length]} notes`,
        relevant: [{ external_id: words[i % words.length]! }],
      }));
      const created = await api('POST', '/v1/evaluations', {
        queries,
        runs: Array.from({ length: RUNS }, () => ({ mode: 'keyword' })),
      });
      expect(created.status).toBe(202);
      const id = created.body.evaluation_id as string;
      for (;;) {
        const e = await api('GET', `/v1/evaluations/${id}`);
        expect(e.body.status).not.toBe('done');
        if (e.body.status === 'running') break;
        await sleep(20);
      }
      await stopServer(server, 'SIGKILL');

      const db = new Database(path.join(dataDir, 'docindex.db'), { readonly: true });
      const killed = db
        .prepare('SELECT status, job_state, job_attempts FROM evaluations WHERE id = ?')
        .get(id);
      db.close();
      // Killed mid-run: nothing of it was written, its lease held by a process that is gone.
      expect(killed).toEqual({ status: 'running', job_state: 'leased', job_attempts: 1 });

      server = await startServer(['serve'], env);
      let finished: Record<string, unknown> = {};
      const deadline = Date.now() + 240_000;
      while (Date.now() < deadline) {
        finished = (await api('GET', `/v1/evaluations/${id}`)).body;
        if (finished.status === 'done' || finished.status === 'failed') break;
        await sleep(200);
      }
      expect(finished).toMatchObject({
        status: 'done',
        query_count: QUERIES,
        queries_evaluated: QUERIES,
        error: null,
      });
      const runs = finished.runs as { ndcg_at_10: number; queries: unknown[] }[];
      expect(runs).toHaveLength(RUNS);
      for (const run of runs) {
        expect(run.queries).toHaveLength(QUERIES);
        expect(run.ndcg_at_10).toBe(1);
      }
      const after = new Database(path.join(dataDir, 'docindex.db'), { readonly: true });
      expect(after.prepare('SELECT job_state, job_attempts FROM evaluations WHERE id = ?').get(id)).toEqual({
        job_state: 'done',
        job_attempts: 2,
      });
      after.close();
    } finally {
      await stopServer(server);
    }
  });
});
