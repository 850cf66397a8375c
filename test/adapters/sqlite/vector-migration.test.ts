// Migration 90 on a database that already holds vectors: they move from the WITHOUT ROWID
// chunk_vectors into the rowid table, get their sign bits when the vector index opens, and are
// found by the two-step search as vectors written afterwards are.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { migrateSqlite, openSqlite } from '../../../src/adapters/sqlite/database.js';
import { SqliteDocumentStore } from '../../../src/adapters/sqlite/document-store.js';
import { SqliteKeywordIndex } from '../../../src/adapters/sqlite/keyword/index.js';
import { SqliteVectorIndex } from '../../../src/adapters/sqlite/vector-index.js';
import { indexedInto } from '../../contract/document-fixtures.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A unit vector along `axis` of 16, tilted a little towards the next one. */
function along(axis: number): Float32Array {
  const v = new Float32Array(16);
  v[axis] = 1;
  v[(axis + 1) % 16] = 0.2;
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

it('vectors stored before migration 90 are moved, signed and searched; deletes still cascade', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'docindex-vector-migration-'));
  dirs.push(dir);
  const db = openSqlite(path.join(dir, 'docindex.db'));
  try {
    const store = new SqliteDocumentStore(db, { keyword: new SqliteKeywordIndex(db, {}) });
    const orgId = `org_${randomUUID()}`;
    const doc = await indexedInto(
      store,
      orgId,
      Array.from({ length: 16 }, (_, i) => `chunk ${i}`),
    );
    // The schema as it was before version 90, with a document's vectors in it.
    db.exec(`
      DROP TRIGGER chunk_vectors_gone_log;
      DROP TABLE chunk_vectors_gone;
      DROP TABLE chunk_vectors;
      CREATE TABLE chunk_vectors (
        document_id TEXT NOT NULL,
        chunk_index INTEGER NOT NULL,
        profile_id INTEGER NOT NULL REFERENCES vector_profiles(id),
        org_id TEXT NOT NULL,
        embedding BLOB NOT NULL,
        PRIMARY KEY (document_id, chunk_index, profile_id),
        FOREIGN KEY (document_id, chunk_index) REFERENCES chunks(document_id, chunk_index) ON DELETE CASCADE ON UPDATE CASCADE
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX chunk_vectors_org ON chunk_vectors(org_id, profile_id);
      INSERT INTO vector_profiles (provider, model, dimensions) VALUES ('test', 'old', 16);
      DELETE FROM schema_migrations WHERE version = 90;
    `);
    const insert = db.prepare(
      'INSERT INTO chunk_vectors (document_id, chunk_index, profile_id, org_id, embedding) VALUES (?, ?, 1, ?, ?)',
    );
    for (let i = 0; i < 16; i++) {
      const v = along(i);
      insert.run(doc.id, i, orgId, Buffer.from(v.buffer, v.byteOffset, v.byteLength));
    }

    expect(migrateSqlite(db).applied).toEqual([90]);
    expect(db.prepare('SELECT count(*) FROM chunk_vectors WHERE signs IS NULL').pluck().get()).toBe(16);

    // Two candidates for one hit among 16 vectors: the prefilter path, which needs the sign bits.
    const vectors = new SqliteVectorIndex(db, { minCandidates: 2, candidatesPerHit: 2 });
    expect(db.prepare('SELECT count(*) FROM chunk_vectors WHERE signs IS NULL').pluck().get()).toBe(0);
    const profileId = await vectors.profileId({ provider: 'test', model: 'old', dimensions: 16 });
    for (const axis of [0, 7, 15]) {
      const [hit] = await vectors.search({ orgId, profileId, vector: along(axis), limit: 1 });
      expect([hit!.documentId, hit!.chunkIndex, hit!.text]).toEqual([doc.id, axis, `chunk ${axis}`]);
      expect(hit!.score).toBeCloseTo(1, 5);
    }

    await store.deleteDocument(orgId, doc.id);
    expect(await vectors.countVectors(doc.id, profileId)).toBe(0);
    expect(await vectors.search({ orgId, profileId, vector: along(3), limit: 1 })).toEqual([]);

    // The deletions' log names vectors, not orgs: once the org is purged, no row of any table
    // mentions it.
    await store.purgeOrg(orgId);
    const tables = db
      .prepare<[], string>(`SELECT name FROM sqlite_master WHERE type = 'table'`)
      .pluck()
      .all();
    expect(tables).toContain('chunk_vectors_gone');
    expect(db.prepare('SELECT count(*) FROM chunk_vectors_gone').pluck().get()).toBe(16);
    const mentioning = tables.filter((table) =>
      (db.prepare(`SELECT * FROM "${table}"`).raw().all() as unknown[][]).some((row) =>
        row.some((value) => typeof value === 'string' && value.includes(orgId)),
      ),
    );
    expect(mentioning).toEqual([]);
  } finally {
    db.close();
  }
});
