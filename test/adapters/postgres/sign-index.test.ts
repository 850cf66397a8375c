// What only the PostgreSQL vector index has to prove about its in-memory sign bits: every API
// node holds its own copy, so a vector written, rewritten or deleted through one node must be
// found (or not) by the next search on another, including a write whose transaction began before
// that node last read and committed after it (a sequence-numbered feed would skip it for ever).
import { afterEach, beforeEach, expect, it } from 'vitest';
import { PgDatabase } from '../../../src/adapters/postgres/database.js';
import { PgDocumentStore } from '../../../src/adapters/postgres/document-store.js';
import { PgKeywordIndex } from '../../../src/adapters/postgres/keyword/index.js';
import { migratePostgres } from '../../../src/adapters/postgres/migrations.js';
import { PgVectorIndex } from '../../../src/adapters/postgres/vector-index.js';
import type { ChunkVector } from '../../../src/domain/ports.js';
import { indexedInto } from '../../contract/document-fixtures.js';
import { checkServices, describeScaleOut, dropSchema, freshSchema } from '../../scale-out/services.js';

const services = await checkServices(['DATABASE_URL']);
const url = services.urls.DATABASE_URL ?? '';

// Every (document, chunk) of these tests gets an axis of its own.
const D = 128;
/** 2 candidates from 40 vectors: searches go through the in-memory sign bits. */
const BUDGET = { minCandidates: 2, candidatesPerHit: 1, scanThreadFrom: 0 };

function axis(i: number, tilt = 0.05): Float32Array {
  const v = new Float32Array(D).fill(-0.01);
  v[i % D] = 1;
  v[(i + 1) % D] = tilt;
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

/** The stored form of a vector (migration 110): float4send's bytes, element after element. */
function bigEndianFloats(v: Float32Array): Buffer {
  const bytes = Buffer.alloc(v.length * 4);
  for (let j = 0; j < v.length; j++) bytes.writeFloatBE(v[j]!, j * 4);
  return bytes;
}

describeScaleOut('PgVectorIndex: sign bits held by each node', services, () => {
  let schema: string;
  let writerDb: PgDatabase;
  let readerDb: PgDatabase;
  let store: PgDocumentStore;
  let writer: PgVectorIndex;
  let reader: PgVectorIndex;
  let profile: number;
  const orgId = 'org_signs';

  beforeEach(async () => {
    schema = freshSchema();
    writerDb = new PgDatabase({ connectionString: url, schema, maxConnections: 4 });
    await migratePostgres(writerDb);
    readerDb = new PgDatabase({ connectionString: url, schema, maxConnections: 4 });
    store = new PgDocumentStore(writerDb, undefined, { keyword: new PgKeywordIndex(writerDb, {}) });
    writer = new PgVectorIndex(writerDb, BUDGET);
    reader = new PgVectorIndex(readerDb, BUDGET);
    profile = await writer.profileId({ provider: 'test', model: 'signs', dimensions: D });
  });
  afterEach(async () => {
    await writerDb.close();
    await readerDb.close();
    await dropSchema(url, schema);
  });

  /** Ready documents of 8 chunks, chunk i of document d along axis d * 8 + i. */
  async function documents(count: number, first = 0) {
    const ids: string[] = [];
    for (let d = first; d < first + count; d++) {
      const doc = await indexedInto(
        store,
        orgId,
        Array.from({ length: 8 }, (_, i) => `document ${d} chunk ${i}`),
      );
      const vectors: ChunkVector[] = Array.from({ length: 8 }, (_, chunkIndex) => ({
        documentId: doc.id,
        chunkIndex,
        vector: axis(d * 8 + chunkIndex, 0.05 + d * 0.001),
      }));
      expect(await writer.writeVectors(orgId, profile, vectors)).toBe(true);
      ids.push(doc.id);
    }
    return ids;
  }

  const top = async (vector: Float32Array) =>
    (await reader.search({ orgId, profileId: profile, vector, limit: 1 })).map((h) => [
      h.documentId,
      h.chunkIndex,
    ]);

  it("sees another node's writes, rewrites and deletions at its next search", async () => {
    const ids = await documents(5);
    // The reader loads its copy now.
    expect(await top(axis(3, 0.05))).toEqual([[ids[0], 3]]);

    // A rewrite moves chunk 5 of the last document onto a direction nobody else has.
    const lonely = new Float32Array(D).fill(1 / Math.sqrt(D));
    expect(
      await writer.writeVectors(orgId, profile, [{ documentId: ids[4]!, chunkIndex: 5, vector: lonely }]),
    ).toBe(true);
    expect(await top(lonely)).toEqual([[ids[4], 5]]);

    // A new document, then the deletion of the first one.
    const [added] = await documents(1, 9);
    expect(await top(axis(9 * 8 + 2, 0.059))).toEqual([[added, 2]]);
    await store.deleteDocument(orgId, ids[0]!);
    const after = await reader.search({ orgId, profileId: profile, vector: axis(3, 0.05), limit: 5 });
    expect(after.map((h) => h.documentId)).not.toContain(ids[0]);
    expect(after).toHaveLength(5);
  });

  it('sees a write whose transaction began before its last read and committed after it', async () => {
    const ids = await documents(5);
    const [late] = await documents(1, 7);
    // The late document's vectors are deleted, then written again inside a transaction held open
    // across the reader's next search.
    await writerDb.query(`DELETE FROM ${writerDb.table('chunk_vectors')} WHERE document_id = $1`, [late]);
    expect(await top(axis(7 * 8 + 1, 0.057))).not.toEqual([[late, 1]]);

    const client = await writerDb.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(
        `INSERT INTO ${writerDb.table('chunk_vectors')} (document_id, chunk_index, profile_id, org_id, embedding, signs)
         VALUES ($1, 1, $2, $3, $4, $5::bit varying)`,
        [
          late,
          profile,
          orgId,
          bigEndianFloats(axis(7 * 8 + 1, 0.057)),
          Array.from(axis(7 * 8 + 1, 0.057), (x) => (x > 0 ? '1' : '0')).join(''),
        ],
      );
      // Another write commits meanwhile, and the reader reads past both transactions' ids.
      await documents(1, 11);
      expect(await top(axis(7 * 8 + 1, 0.057))).not.toEqual([[late, 1]]);
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    expect(await top(axis(7 * 8 + 1, 0.057))).toEqual([[late, 1]]);
    expect(ids).toHaveLength(5);
  });

  it('keeps an hour of deletions in its log: older entries go with the next deletion', async () => {
    const ids = await documents(2);
    const gone = writerDb.table('chunk_vectors_gone');
    await writerDb.query(
      `INSERT INTO ${gone} (at, org_id, profile_id, document_id, chunk_index)
       SELECT clock_timestamp() - interval '61 minutes', $1, $2, 'old-' || i, 0 FROM generate_series(1, 3) AS i`,
      [orgId, profile],
    );
    const count = async () =>
      Number((await writerDb.query<{ n: string }>(`SELECT count(*) AS n FROM ${gone}`)).rows[0]!.n);
    expect(await count()).toBe(3);
    await store.deleteDocument(orgId, ids[0]!);
    // The document's 8 vectors logged, the 3 old entries dropped.
    expect(await count()).toBe(8);
  });

  it('converts vectors written before migration 110 (real[]) to the bytes it ranks, scores unchanged', async () => {
    const old = freshSchema();
    const db = new PgDatabase({ connectionString: url, schema: old, maxConnections: 2 });
    try {
      await migratePostgres(db, { upTo: 100 });
      // This release's store writes the language columns of migration 120, migration 140's
      // partition, migration 150's job_traceparent and migration 170's access, and reads
      // migration 130's deleted_at and migration 140's partition_deletions (each migration adds
      // them only if they are missing): added ahead, so it can write the documents of a
      // version-100 schema.
      await db.query(
        `ALTER TABLE ${db.table('documents')} ADD COLUMN language text, ADD COLUMN requested_language text,
           ADD COLUMN deleted_at timestamptz, ADD COLUMN partition text NOT NULL DEFAULT 'default',
           ADD COLUMN job_traceparent text, ADD COLUMN access text[];
         CREATE TABLE ${db.table('search_languages')} (org_id text NOT NULL, language text NOT NULL, PRIMARY KEY (org_id, language));
         CREATE TABLE ${db.table('partition_deletions')} (org_id text NOT NULL, name text NOT NULL,
           marked_at timestamptz NOT NULL, PRIMARY KEY (org_id, name))`,
      );
      const oldStore = new PgDocumentStore(db, undefined, { keyword: new PgKeywordIndex(db, {}) });
      const doc = await indexedInto(
        oldStore,
        orgId,
        Array.from({ length: 3 }, (_, i) => `chunk ${i}`),
      );
      await db.query(
        `INSERT INTO ${db.table('vector_profiles')} (id, provider, model, dimensions) VALUES (1, 'test', 'signs', ${D})`,
      );
      const stored = [axis(5), axis(1), axis(2)];
      for (let i = 0; i < 3; i++) {
        await db.query(
          `INSERT INTO ${db.table('chunk_vectors')} (document_id, chunk_index, profile_id, org_id, embedding, signs)
           VALUES ($1, $2, 1, $3, $4::real[], $5::bit varying)`,
          [
            doc.id,
            i,
            orgId,
            `{${Array.from(stored[i]!).join(',')}}`,
            Array.from(stored[i]!, (x) => (x > 0 ? '1' : '0')).join(''),
          ],
        );
      }
      await migratePostgres(db);
      const index = new PgVectorIndex(db);
      const hits = await index.search({ orgId, profileId: 1, vector: axis(1), limit: 3 });
      expect(hits.map((h) => h.chunkIndex)).toEqual([1, 2, 0]);
      expect(hits[0]!.score).toBeCloseTo(1, 5);
      const exact = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, j) => sum + x * b[j]!, 0);
      expect(hits[1]!.score).toBeCloseTo(exact(axis(1), stored[2]!), 5);
      expect(hits[2]!.score).toBeCloseTo(exact(axis(1), stored[0]!), 5);
    } finally {
      await db.close();
      await dropSchema(url, old);
    }
  });

  it('reads the whole org again after more changes than its feed takes, missing nothing', async () => {
    const bulk = new PgVectorIndex(readerDb, { ...BUDGET, feedLimit: 10 });
    const ids = await documents(2);
    const first = await bulk.search({ orgId, profileId: profile, vector: axis(8 + 3, 0.051), limit: 1 });
    expect(first.map((h) => [h.documentId, h.chunkIndex])).toEqual([[ids[1], 3]]);
    // 24 vectors written and 8 deleted since: past the feed's 10. Sign bits tie between these
    // vectors, so a copy that had not taken the new ones would offer the first document's chunks
    // (live, and wrong) as the candidates.
    const added = await documents(3, 4);
    await store.deleteDocument(orgId, ids[1]!);
    const found = await bulk.search({ orgId, profileId: profile, vector: axis(5 * 8 + 6, 0.055), limit: 1 });
    expect(found.map((h) => [h.documentId, h.chunkIndex])).toEqual([[added[1], 6]]);
    const near = await bulk.search({ orgId, profileId: profile, vector: axis(8 + 3, 0.051), limit: 5 });
    expect(near.map((h) => h.documentId)).not.toContain(ids[1]);
    expect(near).toHaveLength(5);
  });

  it('searches that arrive together, right after a write, all see it', async () => {
    const ids = await documents(2);
    expect(await top(axis(3, 0.05))).toEqual([[ids[0], 3]]);
    const [added] = await documents(1, 6);
    // The first starts the node's read; the others wait for one more read after it.
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        reader.search({ orgId, profileId: profile, vector: axis(6 * 8 + 2, 0.056), limit: 1 }),
      ),
    );
    for (const hits of answers) expect(hits.map((h) => [h.documentId, h.chunkIndex])).toEqual([[added, 2]]);
  });
});
