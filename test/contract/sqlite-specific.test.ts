// Behaviour only the embedded-mode adapters have: migrations and pragmas, the FTS5 org token,
// several OS processes sharing one database file (claims, dead-process lease recovery, exact
// rate limits), the local wake-up on enqueue, and blob keys that cannot escape their folder.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FsBlobStore } from '../../src/adapters/blob/fs-blob-store.js';
import { SqliteTableQueue } from '../../src/adapters/queue/sqlite-table-queue.js';
import {
  type Database,
  migrateSqlite,
  openSqlite,
  SQLITE_SCHEMA_VERSION,
} from '../../src/adapters/sqlite/database.js';
import { SqliteDocumentStore } from '../../src/adapters/sqlite/document-store.js';
import { indexTerms, MAX_QUERY_TERMS, matchExpression } from '../../src/adapters/sqlite/fts-terms.js';
import type { JobConsumer, JobContext } from '../../src/domain/ports.js';
import type { JobRef } from '../../src/domain/types.js';
import { jobDocument } from './job-document.js';
import { sleep, waitFor } from './support.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../..');

let work: string;
let childScript: string;
const children: ChildProcess[] = [];
const openDbs: Database[] = [];
const consumers: JobConsumer[] = [];

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'docindex-sqlite-'));
  childScript = path.join(work, 'sqlite-child.cjs');
  // Bundled to CommonJS so plain node runs it; packages stay external and resolve via NODE_PATH.
  await build({
    entryPoints: [path.join(here, 'sqlite-child.ts')],
    outfile: childScript,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    packages: 'external',
    logLevel: 'silent',
  });
});

afterEach(async () => {
  await Promise.all(consumers.splice(0).map((c) => c.stop()));
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  for (const db of openDbs.splice(0)) if (db.open) db.close();
});

afterAll(() => {
  rmSync(work, { recursive: true, force: true });
});

function dbFile(): string {
  return path.join(mkdtempSync(path.join(work, 'db-')), 'docindex.db');
}

function open(file: string): Database {
  const db = openSqlite(file);
  openDbs.push(db);
  return db;
}

interface ChildEvent {
  event: string;
  id?: string;
  attempt?: number;
  pid?: number;
  allowed?: number;
}

/** Starts sqlite-child.js; `events` fills as the child reports. */
function startChild(args: string[]): {
  child: ChildProcess;
  events: ChildEvent[];
  exited: Promise<number | null>;
} {
  const child = spawn(process.execPath, [childScript, ...args], {
    env: { ...process.env, NODE_PATH: path.join(repoRoot, 'node_modules') },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  children.push(child);
  const events: ChildEvent[] = [];
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
    events.push(JSON.parse(line) as ChildEvent);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, events, exited };
}

function refs(n: number, orgId = 'org_multi'): JobRef[] {
  return Array.from({ length: n }, () => ({ documentId: crypto.randomUUID(), orgId }));
}

describe('openSqlite / migrateSqlite', () => {
  it('applies each migration once, however often the database is opened', () => {
    const file = dbFile();
    const first = open(file);
    const second = open(file);
    expect(migrateSqlite(second)).toEqual({ applied: [] });
    const versions = first.prepare('SELECT version FROM schema_migrations ORDER BY version').pluck().all();
    expect(versions).toEqual(Array.from({ length: SQLITE_SCHEMA_VERSION }, (_, i) => i + 1));
  });

  it('sets the pragmas the stores rely on', () => {
    const db = open(dbFile());
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('synchronous', { simple: true })).toBe(1);
    expect(db.pragma('busy_timeout', { simple: true })).toBe(5000);
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
  });

  it('works in memory', async () => {
    const db = open(':memory:');
    const store = new SqliteDocumentStore(db);
    expect(await store.countPending()).toBe(0);
  });
});

describe('FTS5 terms', () => {
  it('scopes every indexed word to its org, normalised', () => {
    expect(indexTerms(1, 'Café, ﬁne-TUNED 😀 İstanbul 42')).toBe('1_cafe 1_fine 1_tuned 1_istanbul 1_42');
    expect(indexTerms(36, 'a')).toBe('10_a');
  });

  it('quotes every query word and ORs them, so no query can be FTS syntax', () => {
    expect(matchExpression(7, 'Hello, "world" NEAR(x* AND')).toBe(
      '"7_hello" OR "7_world" OR "7_near" OR "7_x" OR "7_and"',
    );
    expect(matchExpression(7, '"*()^: \u0000 😀')).toBeNull();
  });

  it('caps the number of query words and drops repeats', () => {
    const q = Array.from({ length: 200 }, (_, i) => `w${i} W${i}`).join(' ');
    expect(matchExpression(1, q)?.match(/ OR /g)).toHaveLength(MAX_QUERY_TERMS - 1);
  });

  it('cuts very long words the same way when indexing and querying', () => {
    const blob = 'x'.repeat(10_000);
    expect(indexTerms(1, blob)).toBe(`1_${'x'.repeat(64)}`);
    expect(matchExpression(1, blob)).toBe(`"1_${'x'.repeat(64)}"`);
  });

  it('gives each org its own terms: another org’s volume never enters a query', async () => {
    const db = open(':memory:');
    const store = new SqliteDocumentStore(db);
    const a = jobDocument({ documentId: crypto.randomUUID(), orgId: 'org_a' });
    const b = jobDocument({ documentId: crypto.randomUUID(), orgId: 'org_b' });
    await store.createDocuments([a, b]);
    const chunk = (text: string) => ({
      index: 0,
      text,
      tokenCount: 1,
      charStart: 0,
      charEnd: 0,
      pageStart: null,
      pageEnd: null,
    });
    await store.saveIndex(a.id, {
      chunks: [chunk('shared word')],
      tokenCount: 2,
      contentSha256: 'x',
      contentType: null,
      bytes: null,
    });
    await store.saveIndex(b.id, {
      chunks: [chunk('shared word')],
      tokenCount: 2,
      contentSha256: 'x',
      contentType: null,
      bytes: null,
    });
    const keys = db.prepare('SELECT org_id, id FROM fts_orgs ORDER BY id').all();
    expect(keys).toEqual([
      { org_id: 'org_a', id: 1 },
      { org_id: 'org_b', id: 2 },
    ]);
    const docs = (term: string) =>
      db.prepare('SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?').pluck().get(term);
    expect(docs('"1_shared"')).toBe(1);
    expect(docs('"2_shared"')).toBe(1);
    expect(docs('"shared"')).toBe(0);
  });

  it('drops a document’s index rows with it', async () => {
    const db = open(':memory:');
    const store = new SqliteDocumentStore(db);
    const doc = jobDocument({ documentId: crypto.randomUUID(), orgId: 'org_fts' });
    await store.createDocuments([doc]);
    const chunks = ['one', 'two', 'three'].map((text, index) => ({
      index,
      text: `${text} words`,
      tokenCount: 2,
      charStart: 0,
      charEnd: 0,
      pageStart: null,
      pageEnd: null,
    }));
    const rows = () =>
      db.prepare('SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?').pluck().get('"1_words"');
    await store.saveIndex(doc.id, {
      chunks,
      tokenCount: 6,
      contentSha256: 'x',
      contentType: null,
      bytes: null,
    });
    await store.saveIndex(doc.id, {
      chunks,
      tokenCount: 6,
      contentSha256: 'x',
      contentType: null,
      bytes: null,
    });
    expect(rows()).toBe(3);
    await store.deleteDocument('org_fts', doc.id);
    expect(rows()).toBe(0);
    expect(db.prepare('SELECT count(*) FROM chunks').pluck().get()).toBe(0);
  });
});

describe('search row budget', () => {
  const chunk = (index: number, text: string) => ({
    index,
    text,
    tokenCount: 3,
    charStart: 0,
    charEnd: 0,
    pageStart: null,
    pageEnd: null,
  });

  async function storeWith(texts: string[]) {
    const db = open(':memory:');
    const store = new SqliteDocumentStore(db, { searchRowBudget: 5 });
    const doc = jobDocument({ documentId: crypto.randomUUID(), orgId: 'org_budget' });
    await store.createDocuments([doc]);
    await store.saveIndex(doc.id, {
      chunks: texts.map((t, i) => chunk(i, t)),
      tokenCount: texts.length,
      contentSha256: 'x',
      contentType: null,
      bytes: null,
    });
    return store;
  }
  const search = (store: SqliteDocumentStore, query: string) =>
    store.search({ orgId: 'org_budget', query, topK: 50, filter: {}, documentIds: null });

  it('drops a query word too common to rank within the budget when rarer words match', async () => {
    const commons = Array.from({ length: 10 }, (_, i) => `common filler ${i}`);
    const store = await storeWith([...commons, 'rare and common', 'rare alone']);
    const hits = await search(store, 'rare common');
    expect(hits.map((h) => h.chunkIndex).sort()).toEqual([10, 11]);
    // Within the budget every word counts: "alone" (1 row) and "rare" (2 rows) are both ranked.
    expect((await search(store, 'rare alone'))[0]?.chunkIndex).toBe(11);
  });

  it('ranks a query of only very common words among their newest matches', async () => {
    const store = await storeWith(Array.from({ length: 12 }, (_, i) => `common filler ${i}`));
    const hits = await search(store, 'common');
    expect(hits.map((h) => h.chunkIndex).sort((a, b) => a - b)).toEqual([7, 8, 9, 10, 11]);
  });
});

describe('SqliteTableQueue in one process', () => {
  it('wakes an idle local consumer on enqueue, without waiting for the poll', async () => {
    const db = open(dbFile());
    const documents = new SqliteDocumentStore(db);
    const queue = new SqliteTableQueue(db, { pollMs: 10_000 });
    let startedAt = 0;
    consumers.push(
      queue.consume(
        async () => {
          startedAt = Date.now();
        },
        { concurrency: 1 },
      ),
    );
    await sleep(100);
    const jobs = refs(1);
    const t0 = Date.now();
    await documents.createDocuments(jobs.map(jobDocument));
    await queue.enqueue(jobs);
    await waitFor('the job to start', () => startedAt > 0, 2000);
    expect(startedAt - t0).toBeLessThan(200);
  });

  it('revives a finished job on enqueue only while its document still waits', async () => {
    const db = open(dbFile());
    const documents = new SqliteDocumentStore(db);
    const queue = new SqliteTableQueue(db, { pollMs: 20 });
    const [waiting, ready] = refs(2) as [JobRef, JobRef];
    await documents.createDocuments([waiting, ready].map(jobDocument));
    await documents.saveIndex(ready.documentId, {
      chunks: [],
      tokenCount: 0,
      contentSha256: 'x',
      contentType: null,
      bytes: null,
    });
    // Both jobs ran to their end, but only one document reached a final status.
    db.prepare(`UPDATE documents SET job_state = 'done', job_attempts = 5`).run();
    expect(await queue.has(waiting.documentId)).toBe(false);

    await queue.enqueue([waiting, ready]);
    expect(await queue.has(waiting.documentId)).toBe(true);
    expect(await queue.has(ready.documentId)).toBe(false);
    const seen: JobContext[] = [];
    consumers.push(
      queue.consume(
        async (ctx) => {
          seen.push(ctx);
        },
        { concurrency: 2 },
      ),
    );
    await waitFor('the revived job', () => seen.length === 1);
    await sleep(100);
    expect(seen.map((c) => [c.documentId, c.attempt])).toEqual([[waiting.documentId, 1]]);
  });

  it('releases leases of a dead earlier process with our pid at once, but not live or foreign ones', async () => {
    const db = open(dbFile());
    const documents = new SqliteDocumentStore(db);
    const [samePid, livePid, otherHost] = refs(3) as [JobRef, JobRef, JobRef];
    await documents.createDocuments([samePid, livePid, otherHost].map(jobDocument));
    const lease = db.prepare(
      `UPDATE documents SET job_state = 'leased', lease_owner = ?, lease_until = ?, job_attempts = 1 WHERE id = ?`,
    );
    const farFuture = Date.now() + 3_600_000;
    // Same host and pid as this process but another process token: a predecessor (pid reuse).
    lease.run(`${hostname()}/${process.pid}/deadbeef/1`, farFuture, samePid.documentId);
    // The parent of this test process is alive.
    lease.run(`${hostname()}/${process.ppid}/cafebabe/1`, farFuture, livePid.documentId);
    lease.run(`some-other-host/${process.pid}/deadbeef/1`, farFuture, otherHost.documentId);

    const seen: JobContext[] = [];
    const queue = new SqliteTableQueue(db, { pollMs: 20 });
    consumers.push(
      queue.consume(
        async (ctx) => {
          seen.push(ctx);
        },
        { concurrency: 4 },
      ),
    );
    await waitFor('the orphaned job', () => seen.length >= 1, 2000);
    await sleep(300);
    expect(seen.map((c) => [c.documentId, c.attempt])).toEqual([[samePid.documentId, 2]]);
    expect(await queue.has(livePid.documentId)).toBe(true);
    expect(await queue.has(otherHost.documentId)).toBe(true);
  });

  it('aborts a running job whose document is deleted, and records nothing for it', async () => {
    const db = open(dbFile());
    const documents = new SqliteDocumentStore(db);
    const queue = new SqliteTableQueue(db, { leaseMs: 150, pollMs: 20 });
    const [job] = refs(1) as [JobRef];
    await documents.createDocuments([jobDocument(job)]);
    let aborted = false;
    consumers.push(
      queue.consume(
        async (ctx) => {
          await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
          aborted = true;
        },
        { concurrency: 1 },
      ),
    );
    await waitFor('the job to be leased', () => queue.has(job.documentId));
    await sleep(50);
    await documents.deleteDocument(job.orgId, job.documentId);
    await waitFor('the abort', () => aborted, 2000);
    expect(db.prepare('SELECT count(*) FROM documents').pluck().get()).toBe(0);
  });
});

describe('several processes on one database file', () => {
  it('claims each job exactly once across processes', async () => {
    const file = dbFile();
    const db = open(file);
    const documents = new SqliteDocumentStore(db);
    const jobs = refs(150);
    const procs = [startChild(['consume', file, '5000']), startChild(['consume', file, '5000'])];
    await waitFor(
      'children to start',
      () => procs.every((p) => p.events.some((e) => e.event === 'ready')),
      10_000,
    );

    // A consumer in this process competes too.
    const local: string[] = [];
    const queue = new SqliteTableQueue(db, { pollMs: 10 });
    consumers.push(
      queue.consume(
        async (ctx) => {
          local.push(ctx.documentId);
          await sleep(3);
        },
        { concurrency: 4 },
      ),
    );
    for (let i = 0; i < jobs.length; i += 25) {
      await documents.createDocuments(jobs.slice(i, i + 25).map(jobDocument));
      await queue.enqueue(jobs.slice(i, i + 25));
    }

    const ended = () => procs.flatMap((p) => p.events.filter((e) => e.event === 'end'));
    await waitFor('every job to run', () => ended().length + local.length >= jobs.length, 20_000);
    await sleep(300);
    const started = [
      ...procs.flatMap((p) => p.events.filter((e) => e.event === 'start').map((e) => e.id)),
      ...local,
    ];
    expect(started).toHaveLength(jobs.length);
    expect(new Set(started)).toEqual(new Set(jobs.map((j) => j.documentId)));
    // Every process got work, so the claims really did contend.
    for (const p of procs) expect(p.events.some((e) => e.event === 'start')).toBe(true);
    expect(db.prepare(`SELECT count(*) FROM documents WHERE job_state != 'done'`).pluck().get()).toBe(0);

    for (const p of procs) p.child.kill('SIGTERM');
    expect(await Promise.all(procs.map((p) => p.exited))).toEqual([0, 0]);
  });

  it('resumes at once the job of a killed process on this host, despite a long lease', async () => {
    const file = dbFile();
    const db = open(file);
    const documents = new SqliteDocumentStore(db);
    const [job] = refs(1) as [JobRef];
    await documents.createDocuments([jobDocument(job)]);

    const proc = startChild(['hold', file, '600000']);
    await waitFor('the child to take the job', () => proc.events.some((e) => e.event === 'start'), 10_000);
    proc.child.kill('SIGKILL');
    await proc.exited;
    const leaseUntil = db
      .prepare('SELECT lease_until FROM documents WHERE id = ?')
      .pluck()
      .get(job.documentId);
    expect(leaseUntil).toBeGreaterThan(Date.now() + 500_000);

    const seen: JobContext[] = [];
    const queue = new SqliteTableQueue(db, { leaseMs: 600_000, pollMs: 20 });
    const t0 = Date.now();
    consumers.push(
      queue.consume(
        async (ctx) => {
          seen.push(ctx);
        },
        { concurrency: 1 },
      ),
    );
    await waitFor('the job to resume', () => seen.length === 1, 2000);
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(seen[0]?.attempt).toBe(2);
  });

  it('keeps a rate limit exact across processes', async () => {
    const file = dbFile();
    open(file);
    const procs = [1, 2, 3, 4].map(() => startChild(['ratelimit', file, 'org:shared', '60', '100']));
    await waitFor(
      'children to start',
      () => procs.every((p) => p.events.some((e) => e.event === 'ready')),
      10_000,
    );
    for (const p of procs) p.child.stdin?.write('go\n');
    const codes = await Promise.all(procs.map((p) => p.exited));
    expect(codes).toEqual([0, 0, 0, 0]);
    const allowed = procs.map((p) => p.events.find((e) => e.event === 'done')?.allowed ?? -1);
    expect(allowed.reduce((s, n) => s + n, 0)).toBe(100);
  });
});

describe('FsBlobStore keys', () => {
  it('refuses a key that is not one of its own, so no path can escape the folder', async () => {
    const dir = mkdtempSync(path.join(work, 'blobs-'));
    const store = new FsBlobStore(dir);
    for (const key of ['../../etc/passwd', '/etc/passwd', 'ab/../../x', '', 'ab\u0000/x']) {
      expect(() => store.pathOf(key), key).toThrow();
      expect(await store.exists(key)).toBe(false);
      await store.delete(key);
    }
  });
});
