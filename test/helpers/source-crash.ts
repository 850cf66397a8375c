// A docindex server (dist/, embedded) for source-run crash tests: create a source over HTTP, start
// a run, SIGKILL the server once the run has added some items, start it again and wait for the
// run to end; then read the documents and items the database holds for the source.
import path from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'vitest';
import { type ServerProcess, startServer, stopServer } from './process.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export type Run = Record<string, number | string>;

export class CrashableServer {
  private server: ServerProcess | undefined;

  constructor(
    private readonly env: Record<string, string> & { DATA_DIR: string },
    private apiKey = '',
  ) {}

  async start(): Promise<void> {
    this.server = await startServer(['serve'], this.env);
    this.apiKey ||= /api_key: (\S+)/.exec(this.server.stdout())![1]!;
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    if (this.server) await stopServer(this.server, signal);
    this.server = undefined;
  }

  async api(method: string, url: string, body?: unknown) {
    const authorization = `Bearer ${this.apiKey}`;
    const res = await fetch(`${this.server!.baseUrl}${url}`, {
      method,
      headers: body === undefined ? { authorization } : { authorization, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, json: (await res.json().catch(() => null)) as Record<string, unknown> };
  }

  async createSource(body: Record<string, unknown>): Promise<string> {
    const created = await this.api('POST', '/v1/sources', body);
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    return created.json.id as string;
  }

  private async runOf(sourceId: string, runId: string): Promise<Run> {
    const { json } = await this.api('GET', `/v1/sources/${sourceId}/runs`);
    return (json.runs as Run[]).find((r) => r.run_id === runId)!;
  }

  /** Starts a run, kills the server once it has added `killAfter` items, restarts, waits for the end. */
  async runWithKill(sourceId: string, killAfter: number): Promise<Run> {
    const started = await this.api('POST', `/v1/sources/${sourceId}/sync`);
    expect(started.status).toBe(202);
    const runId = started.json.run_id as string;
    for (;;) {
      const run = await this.runOf(sourceId, runId);
      expect(run.status === 'completed' || run.status === 'failed', 'the run ended before the kill').toBe(
        false,
      );
      if ((run.added as number) >= killAfter) break;
      await sleep(10);
    }
    await this.stop('SIGKILL');
    await this.start();
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      const run = await this.runOf(sourceId, runId);
      if (run.status === 'completed' || run.status === 'failed') return run;
      await sleep(100);
    }
    throw new Error('the run did not finish after the restart');
  }

  /** The external_ids of the source's documents and how many items it has, read from the stopped server's database. */
  storedOf(sourceId: string): { externalIds: string[]; items: number } {
    const db = new Database(path.join(this.env.DATA_DIR, 'docindex.db'), { readonly: true });
    try {
      const externalIds = db
        .prepare<[string], { external_id: string }>(
          'SELECT external_id FROM documents WHERE external_id LIKE ?',
        )
        .all(`${sourceId}:%`)
        .map((r) => r.external_id)
        .sort();
      const items = (
        db.prepare('SELECT count(*) AS n FROM source_items WHERE source_id = ?').get(sourceId) as {
          n: number;
        }
      ).n;
      return { externalIds, items };
    } finally {
      db.close();
    }
  }
}
