// Runs the VectorIndex contract against the embedded index (SQLite + sqlite-vec, in a database
// file) and the scale-out one (PostgreSQL, when DATABASE_URL is set; CI refuses to skip).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PgDatabase } from '../../src/adapters/postgres/database.js';
import { PgDocumentStore } from '../../src/adapters/postgres/document-store.js';
import { PgKeywordIndex } from '../../src/adapters/postgres/keyword/index.js';
import { migratePostgres } from '../../src/adapters/postgres/migrations.js';
import { PgVectorIndex } from '../../src/adapters/postgres/vector-index.js';
import { openSqlite } from '../../src/adapters/sqlite/database.js';
import { SqliteDocumentStore } from '../../src/adapters/sqlite/document-store.js';
import { SqliteKeywordIndex } from '../../src/adapters/sqlite/keyword/index.js';
import { SqliteVectorIndex } from '../../src/adapters/sqlite/vector-index.js';
import { checkServices, describeScaleOut, dropSchema, freshSchema } from '../scale-out/services.js';
import { vectorIndexContract } from './vector-index.contract.js';

vectorIndexContract('SqliteVectorIndex (sqlite-vec, database file)', async (candidates) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'docindex-vectors-'));
  const db = openSqlite(path.join(dir, 'docindex.db'));
  const index = new SqliteKeywordIndex(db, {});
  return {
    store: new SqliteDocumentStore(db, { keyword: index }),
    // Every prefilter scan on the scan thread (by default only big partitions go there).
    vectors: new SqliteVectorIndex(db, { ...candidates, scanThreadFrom: 0 }),
    async close() {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

const services = await checkServices(['DATABASE_URL']);
const url = services.urls.DATABASE_URL ?? '';

describeScaleOut('PostgreSQL vector index', services, () => {
  vectorIndexContract('PgVectorIndex (sign-bit prefilter, exact cosine)', async (candidates) => {
    const schema = freshSchema();
    const db = new PgDatabase({ connectionString: url, schema, maxConnections: 4 });
    await migratePostgres(db);
    const index = new PgKeywordIndex(db, {});
    return {
      store: new PgDocumentStore(db, undefined, { keyword: index }),
      vectors: new PgVectorIndex(db, { ...candidates, scanThreadFrom: 0 }),
      async close() {
        await db.close();
        await dropSchema(url, schema);
      },
    };
  });
});
