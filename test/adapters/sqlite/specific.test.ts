// Behaviour only the embedded-mode adapters have: migrations and pragmas, the FTS5 org token,
// several OS processes sharing one database file (claims, dead-process lease recovery), the
// local wake-up on enqueue, and blob keys that cannot escape their folder.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FsBlobStore } from '../../../src/adapters/blob/fs-blob-store.js';
import {
  type Database,
  migrateSqlite,
  openSqlite,
  SQLITE_SCHEMA_VERSION,
  SQLITE_SCHEMA_VERSIONS,
} from '../../../src/adapters/sqlite/database.js';
import { SqliteDocumentStore } from '../../../src/adapters/sqlite/document-store.js';
import { averagesRowCount } from '../../../src/adapters/sqlite/fts-row-count.js';
import { indexTerms, queryTerms } from '../../../src/adapters/sqlite/fts-terms.js';
import { SqliteKeywordIndex } from '../../../src/adapters/sqlite/keyword/index.js';
import { SqliteTableQueue } from '../../../src/adapters/sqlite/table-queue.js';
import { BlobNotFoundError, type JobConsumer, type JobContext } from '../../../src/domain/ports.js';
import { analyzer } from '../../../src/domain/search-words.js';

const searchWords = (text: string) => analyzer('none').words(text);

import type { JobRef, NewDocument } from '../../../src/domain/types.js';
import { newDoc } from '../../contract/document-fixtures.js';
import { jobDocument, urlDocument } from '../../contract/job-document.js';
import { sleep, waitFor } from '../../contract/support.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../../..');

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
    entryPoints: [path.join(here, 'child.ts')],
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

/** Starts child.ts (bundled); `events` fills as the child reports. */
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

const documentCount = (db: Database) => db.prepare('SELECT count(*) FROM documents').pluck().get();

/** Frames in the WAL file; every COMMIT appends at least one. */
function walFrames(db: Database): number {
  const [result] = db.pragma('wal_checkpoint(PASSIVE)') as { log: number }[];
  return result?.log ?? -1;
}

/** The EXPLAIN QUERY PLAN lines of every statement `act` prepares on `db`. */
function plansOf(db: Database, act: () => void): string[] {
  const sqls: string[] = [];
  const prepare = db.prepare.bind(db);
  db.prepare = ((sql: string) => {
    sqls.push(sql);
    return prepare(sql);
  }) as typeof db.prepare;
  try {
    act();
  } finally {
    db.prepare = prepare;
  }
  const params = {
    now: Date.now(),
    owner: 'host/1/token/1',
    leaseUntil: Date.now(),
    skip: '[]',
    recent: '[]',
  };
  return sqls.flatMap((sql) =>
    (prepare(`EXPLAIN QUERY PLAN ${sql}`).all(params) as { detail: string }[]).map((r) => r.detail),
  );
}

describe('openSqlite / migrateSqlite', () => {
  it('applies each migration once, however often the database is opened', () => {
    const file = dbFile();
    const first = open(file);
    const second = open(file);
    expect(migrateSqlite(second)).toEqual({ applied: [] });
    const versions = first.prepare('SELECT version FROM schema_migrations ORDER BY version').pluck().all();
    expect(versions).toEqual(SQLITE_SCHEMA_VERSIONS);
    expect(versions.at(-1)).toBe(SQLITE_SCHEMA_VERSION);
  });

  it('fills the metadata entries of documents written before migration 70', async () => {
    const db = open(dbFile());
    db.exec(`DROP TRIGGER documents_metadata_insert; DROP TRIGGER documents_metadata_update;
      DROP TRIGGER documents_metadata_delete; DROP TABLE document_metadata;
      DELETE FROM schema_migrations WHERE version = 70;`);
    const store = new SqliteDocumentStore(db, { keyword: new SqliteKeywordIndex(db) });
    const tagged = newDoc('org_a', { metadata: { team: 'red', 'odd.key "$[0]"': 'x' } });
    await store.createDocuments([tagged, newDoc('org_b', { metadata: {} })]);
    expect(migrateSqlite(db)).toEqual({ applied: [70] });
    const entries = () =>
      db.prepare('SELECT document_id, key, org_id, value FROM document_metadata ORDER BY key').all();
    expect(entries()).toEqual([
      { document_id: tagged.id, key: 'odd.key "$[0]"', org_id: 'org_a', value: 'x' },
      { document_id: tagged.id, key: 'team', org_id: 'org_a', value: 'red' },
    ]);
    // And the triggers keep them from then on.
    await store.updateMetadata('org_a', tagged.id, () => ({ team: 'blue' }));
    expect(entries()).toEqual([{ document_id: tagged.id, key: 'team', org_id: 'org_a', value: 'blue' }]);
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
    const store = new SqliteDocumentStore(db, { keyword: new SqliteKeywordIndex(db) });
    expect(await store.countPending()).toBe(0);
  });

  it('indexes pending jobs by lane, and each lane claims through its own index only', async () => {
    const db = open(dbFile());
    const indexes = db
      .prepare(
        `SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'documents_job_%' ORDER BY name`,
      )
      .pluck()
      .all();
    expect(indexes).toEqual([
      'documents_job_leased',
      'documents_job_pending_download',
      'documents_job_pending_download_org',
      'documents_job_pending_process',
      'documents_job_pending_process_org',
    ]);
    const documents = new SqliteDocumentStore(db, { keyword: new SqliteKeywordIndex(db) });
    const [text1, text2, url1, url2] = refs(4) as [JobRef, JobRef, JobRef, JobRef];
    await documents.createDocuments([
      jobDocument(text1),
      jobDocument(text2),
      urlDocument(url1),
      urlDocument(url2),
    ]);
    const claimPlan = (lane: 'download' | 'process' | 'any') => {
      const queue = new SqliteTableQueue(db, { lane });
      let claimed: string | undefined;
      const plan = plansOf(db, () => {
        claimed = queue.rows.claim('host/1/token/1', queue.leaseMs)?.id;
      });
      return { claimed, plan: plan.join('\n') };
    };

    const download = claimPlan('download');
    expect(download.claimed).toBe(url1.documentId);
    expect(download.plan).toContain('USING INDEX documents_job_pending_download');
    expect(download.plan).not.toContain('documents_job_pending_process');
    const process = claimPlan('process');
    expect(process.claimed).toBe(text1.documentId);
    expect(process.plan).toContain('USING INDEX documents_job_pending_process');
    expect(process.plan).not.toContain('documents_job_pending_download');
    const any = claimPlan('any');
    // Both left were created together (the same run_at): either is the oldest due job.
    expect([text2.documentId, url2.documentId]).toContain(any.claimed);
    expect(any.plan).toContain('USING INDEX documents_job_pending_process');
    expect(any.plan).toContain('USING INDEX documents_job_pending_download');
    // No lane reads the whole table to find its next job; the leased jobs' partial index (as few
    // rows as the consumers' concurrency) is read whole to count each org's running jobs.
    for (const { plan } of [download, process, any]) {
      expect(plan).not.toMatch(/SCAN documents\b(?! USING (?:COVERING )?INDEX documents_job_leased\b)/);
    }
  });
});

describe('SqliteDocumentStore group commit', () => {
  it('writes the documents of calls made in one turn in shared commits, acknowledging each after it', async () => {
    const file = dbFile();
    const db = open(file);
    const reader = open(file);
    const store = new SqliteDocumentStore(db, { keyword: new SqliteKeywordIndex(db) });
    const docs = refs(50).map(jobDocument);
    db.pragma('wal_checkpoint(TRUNCATE)');

    const visibleWhenAcknowledged: unknown[] = [];
    const calls = docs.map((d) =>
      store.createDocuments([d]).then(() => {
        visibleWhenAcknowledged.push(
          reader.prepare('SELECT count(*) FROM documents WHERE id = ?').pluck().get(d.id),
        );
      }),
    );
    expect(documentCount(reader)).toBe(0);
    await Promise.all(calls);
    expect(documentCount(reader)).toBe(docs.length);
    expect(visibleWhenAcknowledged).toEqual(docs.map(() => 1));
    const shared = walFrames(db);
    expect(shared).toBeGreaterThan(0);
    expect(shared).toBeLessThan(docs.length);

    // The same calls one at a time take a commit each: the frame count tells the two apart.
    db.pragma('wal_checkpoint(TRUNCATE)');
    for (const d of refs(50).map(jobDocument)) await store.createDocuments([d]);
    expect(walFrames(db)).toBeGreaterThanOrEqual(docs.length);
  });

  it('fails only the call whose rows fail; the other calls of the same commit land', async () => {
    const file = dbFile();
    const db = open(file);
    const reader = open(file);
    const store = new SqliteDocumentStore(db, { keyword: new SqliteKeywordIndex(db) });
    const [existing, a, b, c, d] = refs(5).map(jobDocument) as [
      NewDocument,
      NewDocument,
      NewDocument,
      NewDocument,
      NewDocument,
    ];
    await store.createDocuments([existing]);

    const results = await Promise.allSettled([
      store.createDocuments([a]),
      // Fails on its second row: its first must not stay behind.
      store.createDocuments([b, { ...d, id: existing.id }]),
      store.createDocuments([c]),
      // The same id as an earlier call of this batch: the later one fails.
      store.createDocuments([{ ...d, id: a.id }]),
      store.createDocuments([d]),
    ]);
    expect(results.map((r) => r.status)).toEqual([
      'fulfilled',
      'rejected',
      'fulfilled',
      'rejected',
      'fulfilled',
    ]);
    for (const i of [1, 3]) {
      expect((results[i] as PromiseRejectedResult).reason).toMatchObject({
        code: 'SQLITE_CONSTRAINT_PRIMARYKEY',
      });
    }
    const ids = reader.prepare('SELECT id FROM documents').pluck().all();
    expect(new Set(ids)).toEqual(new Set([existing.id, a.id, c.id, d.id]));
    expect(await store.countPending()).toBe(4);
  });

  it('rejects every call of a commit that cannot be made, and then works again', async () => {
    const file = dbFile();
    const db = open(file);
    const other = open(file);
    const store = new SqliteDocumentStore(db, { keyword: new SqliteKeywordIndex(db) });
    db.pragma('busy_timeout = 50');
    other.exec('BEGIN IMMEDIATE');
    const docs = refs(3).map(jobDocument);
    const results = await Promise.allSettled(docs.map((d) => store.createDocuments([d])));
    other.exec('ROLLBACK');
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect((results[0] as PromiseRejectedResult).reason).toMatchObject({ code: 'SQLITE_BUSY' });
    expect(documentCount(other)).toBe(0);

    await Promise.all(docs.map((d) => store.createDocuments([d])));
    expect(documentCount(other)).toBe(3);
  });

  it('rejects calls still waiting when the database closes, instead of crashing', async () => {
    const db = open(':memory:');
    const store = new SqliteDocumentStore(db, { keyword: new SqliteKeywordIndex(db) });
    const waiting = store.createDocuments(refs(2).map(jobDocument));
    db.close();
    await expect(waiting).rejects.toThrow(/not open/);
  });

  it('writes a full batch at once rather than holding every call of a burst until the turn ends', async () => {
    const file = dbFile();
    const db = open(file);
    const reader = open(file);
    const store = new SqliteDocumentStore(db, { keyword: new SqliteKeywordIndex(db) });
    const calls = refs(2500).map((r) => store.createDocuments([jobDocument(r)]));
    // Still in the turn that made the calls: the earlier ones are already committed.
    const early = documentCount(reader) as number;
    expect(early).toBeGreaterThan(0);
    expect(early).toBeLessThan(2500);
    await Promise.all(calls);
    expect(documentCount(reader)).toBe(2500);
  });
});

/** A query's terms OR-ed, as the store's MATCH expression joins them; null when it has none. */
function matchExpression(orgKey: number, query: string): string | null {
  const terms = queryTerms(orgKey, analyzer('english').queryWords(query));
  return terms.length === 0 ? null : terms.join(' OR ');
}

describe('FTS5 terms', () => {
  it('scopes every indexed word to its org, normalised', () => {
    expect(indexTerms(1, searchWords('Café, ﬁne-TUNED 😀 İstanbul 42'))).toBe(
      '1_cafe 1_fine 1_tuned 1_istanbul 1_42',
    );
    expect(indexTerms(36, searchWords('a'))).toBe('10_a');
    expect(indexTerms(36, searchWords('😀 ...'))).toBe('');
    // Capitals that only decomposition makes are lower-cased too, in indexed text and queries alike.
    expect(searchWords('Redis™ 𝕏 Ⅻ')).toBe('redistm x xii');
    expect(matchExpression(1, 'REDIS™')).toBe('"1_redistm"');
  });

  it('quotes every query word and ORs them, so no query can be FTS syntax', () => {
    expect(matchExpression(7, 'Hello, "world" NEAR(x* AND')).toBe(
      '"7_hello" OR "7_world" OR "7_near" OR "7_x" OR "7_and"',
    );
    expect(matchExpression(7, '"*()^: \u0000 😀')).toBeNull();
  });

  it('drops repeated query words (the store, not the parser, picks which words to rank with)', () => {
    const q = Array.from({ length: 200 }, (_, i) => `w${i} W${i}`).join(' ');
    expect(matchExpression(1, q)?.match(/ OR /g)).toHaveLength(199);
  });

  it('cuts very long words the same way when indexing and querying', () => {
    const blob = 'x'.repeat(10_000);
    expect(indexTerms(1, searchWords(blob))).toBe(`1_${'x'.repeat(64)}`);
    expect(matchExpression(1, blob)).toBe(`"1_${'x'.repeat(64)}"`);
  });

  it('gives each org its own terms: another org’s volume never enters a query', async () => {
    const db = open(':memory:');
    const store = new SqliteDocumentStore(db, { keyword: new SqliteKeywordIndex(db) });
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
    expect(docs('"1_share"')).toBe(1);
    expect(docs('"2_share"')).toBe(1);
    expect(docs('"share"')).toBe(0);
  });

  it('indexes a chunk by the words the pipeline computed, or computes the same words itself', async () => {
    const db = open(':memory:');
    const index = new SqliteKeywordIndex(db);
    const store = new SqliteDocumentStore(db, { keyword: index });
    const text = 'Crème brûlée at the Café';
    const given = jobDocument({ documentId: crypto.randomUUID(), orgId: 'org_w' });
    const computed = jobDocument({ documentId: crypto.randomUUID(), orgId: 'org_w' });
    await store.createDocuments([given, computed]);
    const base = {
      index: 0,
      text,
      tokenCount: 6,
      charStart: 0,
      charEnd: text.length,
      pageStart: null,
      pageEnd: null,
    };
    const result = { tokenCount: 6, contentSha256: 'x', contentType: null, bytes: null };
    await store.saveIndex(given.id, {
      ...result,
      chunks: [{ ...base, words: analyzer('english').words(text) }],
    });
    await store.saveIndex(computed.id, { ...result, chunks: [base] });
    // The table is contentless: what it holds shows in what matches.
    const matching = (expression: string) =>
      db.prepare('SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?').pluck().get(expression);
    for (const word of ['creme', 'brule', 'at', 'the', 'cafe']) expect(matching(`"1_${word}"`)).toBe(2);
    expect(matching('"1_crème"')).toBe(0);
    const hits = await index.search({
      orgId: 'org_w',
      query: 'brulee',
      topK: 10,
      filter: null,
      documentIds: null,
    });
    expect(hits.map((h) => h.documentId).sort()).toEqual([given.id, computed.id].sort());
  });

  it('drops a document’s index rows with it', async () => {
    const db = open(':memory:');
    const store = new SqliteDocumentStore(db, { keyword: new SqliteKeywordIndex(db) });
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
      db.prepare('SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?').pluck().get('"1_word"');
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

  it('removes a large deleted document’s rows a slice at a time, and resumes after a restart', async () => {
    const file = path.join(work, `purge-${crypto.randomUUID()}.db`);
    const db = open(file);
    const store = new SqliteDocumentStore(db, { keyword: new SqliteKeywordIndex(db) });
    const large = (doc: NewDocument) =>
      store.saveIndex(doc.id, {
        chunks: Array.from({ length: 2_000 }, (_, index) => ({
          index,
          text: `heron ${index} ${'wading bird of rivers and lakes '.repeat(8)}`,
          tokenCount: 50,
          charStart: 0,
          charEnd: 0,
          pageStart: null,
          pageEnd: null,
        })),
        tokenCount: 100_000,
        contentSha256: 'x',
        contentType: null,
        bytes: null,
      });
    const [a, b] = [0, 1].map(() => jobDocument({ documentId: crypto.randomUUID(), orgId: 'org_purge' }));
    await store.createDocuments([a!, b!]);
    await large(a!);
    await large(b!);
    const left = (id: string) => ({
      chunks: db.prepare('SELECT count(*) FROM chunks WHERE document_id = ?').pluck().get(id),
      rows: db.prepare('SELECT count(*) FROM documents WHERE id = ?').pluck().get(id),
    });

    // Answered before the chunks are gone: they go afterwards, with the event loop free between.
    await store.deleteDocument('org_purge', a!.id);
    expect(left(a!.id).chunks).toBeGreaterThan(0);
    await waitFor('the purge of a', () => left(a!.id).rows === 0);
    expect(left(a!.id)).toEqual({ chunks: 0, rows: 0 });

    // Closed straight after a delete (a restart): the next store on the file finishes the purge.
    await store.deleteDocument('org_purge', b!.id);
    db.close();
    const reopened = open(file);
    new SqliteDocumentStore(reopened, { keyword: new SqliteKeywordIndex(reopened) });
    await waitFor('the resumed purge of b', () => {
      const n = reopened.prepare('SELECT count(*) FROM documents WHERE id = ?').pluck().get(b!.id);
      return n === 0;
    });
    expect(reopened.prepare('SELECT count(*) FROM chunks').pluck().get()).toBe(0);
  });
});

describe('keyword scores', () => {
  const english = analyzer('en');
  /** A new document of `orgId`, and the call that indexes English chunks of `texts` as its own. */
  async function toIndex(store: SqliteDocumentStore, orgId: string, texts: string[]) {
    const doc = jobDocument({ documentId: crypto.randomUUID(), orgId });
    await store.createDocuments([doc]);
    const chunks = texts.map((text, index) => ({
      index,
      text,
      words: english.words(text),
      tokenCount: 4,
      charStart: 0,
      charEnd: 0,
      pageStart: null,
      pageEnd: null,
    }));
    const result = { tokenCount: 4 * texts.length, contentSha256: 'x', contentType: null, bytes: null };
    return { doc, write: () => store.saveIndex(doc.id, { ...result, chunks, language: 'en' }) };
  }

  /** Indexes English chunks of `texts` as one document of `orgId`. */
  async function indexed(store: SqliteDocumentStore, orgId: string, texts: string[]) {
    const { doc, write } = await toIndex(store, orgId, texts);
    expect(await write()).toBe(true);
    return doc;
  }

  it('writes one FTS5 segment for the documents indexed in one turn', async () => {
    const db = open(':memory:');
    const store = new SqliteDocumentStore(db, { keyword: new SqliteKeywordIndex(db) });
    const segments = () =>
      db.prepare('SELECT count(*) FROM chunks_fts_data WHERE id > 10').pluck().get() as number;
    const before = segments();
    const docs = await Promise.all([1, 2, 3].map((n) => toIndex(store, 'org_turn', [`tern skua ${n}`])));
    // The three index writes start in the same turn, so the group commit gives them one
    // transaction, and FTS5 writes their terms out once, at its commit.
    expect(await Promise.all(docs.map(({ write }) => write()))).toEqual([true, true, true]);
    expect(segments() - before).toBe(1);
  });

  it('reads the row count FTS5 keeps, as count(*) gives it', () => {
    const db = open(':memory:');
    const insert = db.prepare('INSERT INTO chunks_fts (rowid, terms) VALUES (?, ?)');
    const block = () => db.prepare('SELECT block FROM chunks_fts_data WHERE id = 1').pluck().get() as Buffer;
    // 300 rows: a count of two varint bytes.
    for (let i = 1; i <= 300; i += 1) insert.run(i, `1_word 1_n${i}`);
    expect(averagesRowCount(block())).toBe(300);
    expect(db.prepare('SELECT count(*) FROM chunks_fts').pluck().get()).toBe(300);
    expect(averagesRowCount(undefined)).toBe(0);
  });

  it('divides by the most the query could score with the IDFs FTS5 ranked with, deleted and other orgs’ rows counted', async () => {
    const db = open(':memory:');
    const index = new SqliteKeywordIndex(db);
    const store = new SqliteDocumentStore(db, { keyword: index });
    // Four words a chunk, in every chunk ever written, so the length normalisation is 1.
    const other = await indexed(store, 'org_other', ['gull tern skua puffin', 'gull gull tern auk']);
    const mine = await indexed(store, 'org_birds', [
      'heron egret stork crane',
      'heron heron heron ibis',
      'heron coot teal rail',
      'stork stork crane ibis',
      'coot teal rail wren',
    ]);
    await store.deleteDocument('org_other', other.id);
    await waitFor(
      'the other org’s chunks to go',
      () => db.prepare('SELECT count(*) FROM chunks').pluck().get() === 5,
    );
    // FTS5's IDF of a word, as it ranks: the BM25 of a chunk holding it once (the saturated
    // frequency of tf 1 at length normalisation 1 is exactly 1).
    const rowid = (index: number) =>
      db
        .prepare('SELECT id FROM chunks WHERE document_id = ? AND chunk_index = ?')
        .pluck()
        .get(mine.id, index);
    const idf = (word: string, index: number) =>
      db
        .prepare('SELECT -bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ? AND rowid = ?')
        .pluck()
        .get(
          `"${db.prepare('SELECT id FROM fts_orgs WHERE org_id = ?').pluck().get('org_birds')}_${word}"`,
          rowid(index),
        ) as number;
    const heron = idf('heron', 0);
    const wren = idf('wren', 4);
    const saturated = (tf: number) => (tf * 2.2) / (tf + 1.2);
    const most = 2.2 * (heron + wren);
    const hits = await index.search({
      orgId: 'org_birds',
      query: 'heron wren',
      topK: 10,
      filter: null,
      documentIds: null,
    });
    expect(hits.map((h) => [h.chunkIndex, h.score])).toEqual([
      [4, expect.closeTo(wren / most, 12)],
      [1, expect.closeTo((heron * saturated(3)) / most, 12)],
      [0, expect.closeTo(heron / most, 12)],
      [2, expect.closeTo(heron / most, 12)],
    ]);
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

  async function indexWith(texts: string[]) {
    const db = open(':memory:');
    const index = new SqliteKeywordIndex(db, { searchRowBudget: 5 });
    const store = new SqliteDocumentStore(db, { keyword: index });
    const doc = jobDocument({ documentId: crypto.randomUUID(), orgId: 'org_budget' });
    await store.createDocuments([doc]);
    await store.saveIndex(doc.id, {
      chunks: texts.map((t, i) => chunk(i, t)),
      tokenCount: texts.length,
      contentSha256: 'x',
      contentType: null,
      bytes: null,
    });
    return index;
  }
  const search = (index: SqliteKeywordIndex, query: string) =>
    index.search({ orgId: 'org_budget', query, topK: 50, filter: null, documentIds: null });

  it('drops a query word too common to rank within the budget when rarer words match', async () => {
    const commons = Array.from({ length: 10 }, (_, i) => `common filler ${i}`);
    const index = await indexWith([...commons, 'rare and common', 'rare alone']);
    const hits = await search(index, 'rare common');
    expect(hits.map((h) => h.chunkIndex).sort()).toEqual([10, 11]);
    // Within the budget every word counts: "alone" (1 row) and "rare" (2 rows) are both ranked.
    expect((await search(index, 'rare alone'))[0]?.chunkIndex).toBe(11);
  });

  it('ranks a query of only very common words among their newest matches', async () => {
    const index = await indexWith(Array.from({ length: 12 }, (_, i) => `common filler ${i}`));
    const hits = await search(index, 'common');
    expect(hits.map((h) => h.chunkIndex).sort((a, b) => a - b)).toEqual([7, 8, 9, 10, 11]);
  });
});

describe('SqliteTableQueue in one process', () => {
  it('wakes an idle local consumer on enqueue, without waiting for the poll', async () => {
    const db = open(dbFile());
    const documents = new SqliteDocumentStore(db, { keyword: new SqliteKeywordIndex(db) });
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

  it('enqueues just-created jobs without writing, so another process holding the write lock does not stall it', async () => {
    const file = dbFile();
    const db = open(file);
    const other = open(file);
    const documents = new SqliteDocumentStore(db, { keyword: new SqliteKeywordIndex(db) });
    const queue = new SqliteTableQueue(db, { pollMs: 10_000 });
    const jobs = refs(3);
    await documents.createDocuments(jobs.map(jobDocument));
    db.pragma('busy_timeout = 50');
    other.exec('BEGIN IMMEDIATE');
    try {
      await expect(queue.enqueue(jobs)).resolves.toBeUndefined();
    } finally {
      other.exec('ROLLBACK');
    }
    for (const job of jobs) expect(await queue.has(job.documentId)).toBe(true);
  });

  it('takes the oldest due job of either lane when it serves both', async () => {
    const db = open(dbFile());
    const documents = new SqliteDocumentStore(db, { keyword: new SqliteKeywordIndex(db) });
    const queue = new SqliteTableQueue(db);
    const [oldUrl, midText, newUrl] = refs(3) as [JobRef, JobRef, JobRef];
    const at = (doc: NewDocument, ms: number): NewDocument => ({
      ...doc,
      createdAt: new Date(Date.now() - ms),
    });
    await documents.createDocuments([
      at(jobDocument(midText), 2000),
      at(urlDocument(newUrl), 1000),
      at(urlDocument(oldUrl), 3000),
    ]);
    const order = [1, 2, 3, 4].map(() => queue.rows.claim('host/1/token/1', queue.leaseMs)?.id ?? null);
    expect(order).toEqual([oldUrl.documentId, midText.documentId, newUrl.documentId, null]);
  });

  it('revives a finished job on enqueue only while its document still waits', async () => {
    const db = open(dbFile());
    const documents = new SqliteDocumentStore(db, { keyword: new SqliteKeywordIndex(db) });
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
    const documents = new SqliteDocumentStore(db, { keyword: new SqliteKeywordIndex(db) });
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

  it('a claim marks its queued document processing, as the processor would, and leaves other statuses alone', async () => {
    const db = open(dbFile());
    const documents = new SqliteDocumentStore(db, { keyword: new SqliteKeywordIndex(db) });
    const queue = new SqliteTableQueue(db);
    const [retried, finished] = refs(2) as [JobRef, JobRef];
    await documents.createDocuments([retried, finished].map(jobDocument));
    // One is queued again after a failed try; the other is ready but still has a job pending.
    await documents.markProcessing(retried.documentId);
    await documents.markRetrying(retried.documentId, { code: 'url_unreachable', message: 'try again' });
    db.prepare(`UPDATE documents SET status = 'ready' WHERE id = ?`).run(finished.documentId);
    const before = Date.now();
    const claimed = [
      queue.rows.claim('host/1/token/1', queue.leaseMs),
      queue.rows.claim('host/1/token/1', queue.leaseMs),
    ];
    expect(claimed.map((c) => c?.id).sort()).toEqual([retried.documentId, finished.documentId].sort());

    const again = await documents.getDocument(retried.orgId, retried.documentId);
    expect(again).toMatchObject({ status: 'processing', attempts: 2, error: null });
    expect(again!.updatedAt.getTime()).toBeGreaterThanOrEqual(before);
    expect(await documents.getDocument(finished.orgId, finished.documentId)).toMatchObject({
      status: 'ready',
      attempts: 0,
    });
  });

  it('the index write ends the document’s job: a late settle finds nothing to write', async () => {
    const db = open(dbFile());
    const documents = new SqliteDocumentStore(db, { keyword: new SqliteKeywordIndex(db) });
    const queue = new SqliteTableQueue(db);
    const [job] = refs(1) as [JobRef];
    await documents.createDocuments([jobDocument(job)]);
    const row = queue.rows.claim('host/1/token/1', queue.leaseMs)!;
    expect(await queue.has(job.documentId)).toBe(true);
    await documents.saveIndex(job.documentId, {
      chunks: [],
      tokenCount: 0,
      contentSha256: 'x',
      contentType: null,
      bytes: null,
    });
    expect(await queue.has(job.documentId)).toBe(false);
    const frames = walFrames(db);
    // Even a stale run asking for a retry cannot bring the finished job back.
    queue.rows.settle('host/1/token/1', row, { state: 'pending', delayMs: 0 });
    expect(walFrames(db)).toBe(frames);
    expect(await queue.has(job.documentId)).toBe(false);
    expect(await documents.getDocument(job.orgId, job.documentId)).toMatchObject({ status: 'ready' });
  });

  it('aborts a running job whose document is deleted, and records nothing for it', async () => {
    const db = open(dbFile());
    const documents = new SqliteDocumentStore(db, { keyword: new SqliteKeywordIndex(db) });
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
    const documents = new SqliteDocumentStore(db, { keyword: new SqliteKeywordIndex(db) });
    const jobs = refs(150);
    const procs = [startChild(['consume', file, '5000']), startChild(['consume', file, '5000'])];
    await waitFor(
      'children to start',
      () => procs.every((p) => p.events.some((e) => e.event === 'ready')),
      10_000,
    );

    // A consumer in this process competes too. Its jobs take 50 ms, so alone it would need
    // ~1.9 s for all of them: a child that the machine's load keeps off the CPU for a while
    // (they poll every 10 ms; a loaded CI run once kept one away for the whole of 750 ms) still
    // finds work.
    const local: string[] = [];
    const queue = new SqliteTableQueue(db, { pollMs: 10 });
    consumers.push(
      queue.consume(
        async (ctx) => {
          local.push(ctx.documentId);
          await sleep(50);
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
    // Jobs were claimed by more than one process, so the claims really did contend. (Which
    // processes win is the scheduler's business: under a loaded CI run one child has been kept
    // off the CPU until the others had taken everything.)
    const perProcess = [
      ...procs.map((p) => p.events.filter((e) => e.event === 'start').length),
      local.length,
    ];
    expect(
      perProcess.filter((n) => n > 0).length,
      `jobs per process: ${perProcess.join(', ')}`,
    ).toBeGreaterThanOrEqual(2);
    expect(db.prepare(`SELECT count(*) FROM documents WHERE job_state != 'done'`).pluck().get()).toBe(0);

    for (const p of procs) p.child.kill('SIGTERM');
    expect(await Promise.all(procs.map((p) => p.exited))).toEqual([0, 0]);
  });

  it('resumes at once the job of a killed process on this host, despite a long lease', async () => {
    const file = dbFile();
    const db = open(file);
    const documents = new SqliteDocumentStore(db, { keyword: new SqliteKeywordIndex(db) });
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
});

describe('FsBlobStore keys', () => {
  it('refuses a key that is not one of its own, so no path can escape the folder', async () => {
    const dir = mkdtempSync(path.join(work, 'blobs-'));
    const store = new FsBlobStore(dir);
    for (const key of ['../../etc/passwd', '/etc/passwd', 'ab/../../x', '', 'ab\u0000/x']) {
      await expect(store.put(key, Readable.from([Buffer.from('x')])), key).rejects.toThrow(
        'invalid blob key',
      );
      await expect(store.openRead(key), key).rejects.toBeInstanceOf(BlobNotFoundError);
      await expect(
        store.withLocalFile(key, async (file) => file),
        key,
      ).rejects.toBeInstanceOf(BlobNotFoundError);
      await store.delete(key);
    }
    expect(readdirSync(dir)).toEqual([]);
  });
});
