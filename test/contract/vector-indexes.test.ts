// Runs the VectorSearch and VectorStageStore contracts against the embedded vector index (SQLite +
// sqlite-vec, in a database file) and the scale-out one (PostgreSQL, when DATABASE_URL is set; CI
// refuses to skip): each backend's index is both ports, so one harness serves both suites.
import { PgDatabase } from '../../src/adapters/postgres/database.js';
import { PgDocumentStore } from '../../src/adapters/postgres/document-store.js';
import { PgKeywordIndex } from '../../src/adapters/postgres/keyword/index.js';
import { migratePostgres } from '../../src/adapters/postgres/migrations.js';
import { PgVectorIndex } from '../../src/adapters/postgres/vector-index.js';
import { SqliteDocumentStore } from '../../src/adapters/sqlite/document-store.js';
import { SqliteKeywordIndex } from '../../src/adapters/sqlite/keyword/index.js';
import { SqliteVectorIndex } from '../../src/adapters/sqlite/vector-index.js';
import { sqliteFile } from '../helpers/sqlite-file.js';
import { checkServices, describeScaleOut, dropSchema, freshSchema } from '../scale-out/services.js';
import {
  type CandidateBudget,
  type VectorSearchHarness,
  vectorSearchContract,
} from './vector-search.contract.js';
import { vectorStageStoreContract } from './vector-stage-store.contract.js';

async function sqliteHarness(candidates?: CandidateBudget): Promise<VectorSearchHarness> {
  const { db, close } = sqliteFile('docindex-vectors-');
  const index = new SqliteKeywordIndex(db, {});
  // Every prefilter scan on the scan thread (by default only big partitions go there).
  const vectors = new SqliteVectorIndex(db, { ...candidates, scanThreadFrom: 0 });
  return {
    store: new SqliteDocumentStore(db, { keyword: index }),
    stage: vectors,
    vectors,
    close,
  };
}

vectorSearchContract('SqliteVectorIndex (sqlite-vec, database file)', sqliteHarness);
vectorStageStoreContract('SqliteVectorIndex (database file)', () => sqliteHarness());

const services = await checkServices(['DATABASE_URL']);
const url = services.urls.DATABASE_URL ?? '';

async function postgresHarness(candidates?: CandidateBudget): Promise<VectorSearchHarness> {
  const schema = freshSchema();
  const db = new PgDatabase({ connectionString: url, schema, maxConnections: 4 });
  await migratePostgres(db);
  const index = new PgKeywordIndex(db, {});
  const vectors = new PgVectorIndex(db, { ...candidates, scanThreadFrom: 0 });
  return {
    store: new PgDocumentStore(db, undefined, { keyword: index }),
    stage: vectors,
    vectors,
    async close() {
      await db.close();
      await dropSchema(url, schema);
    },
  };
}

describeScaleOut('PostgreSQL vector index', services, () => {
  vectorSearchContract('PgVectorIndex (sign-bit prefilter, exact cosine)', postgresHarness);
  vectorStageStoreContract('PgVectorIndex', () => postgresHarness());
});
