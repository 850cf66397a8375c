// Runs the partitions and access-list contracts against the embedded stores (SQLite, FTS5, sqlite-vec) and the
// scale-out ones (PostgreSQL on RUM and on GIN, when DATABASE_URL is set; CI refuses to skip).
import { PgDocumentStore } from '../../src/adapters/postgres/document-store.js';
import { PgKeywordIndex } from '../../src/adapters/postgres/keyword/index.js';
import { PgPartitionPurgeRows } from '../../src/adapters/postgres/partition-purge-rows.js';
import { PgVectorIndex } from '../../src/adapters/postgres/vector-index.js';
import { SqliteDocumentStore } from '../../src/adapters/sqlite/document-store.js';
import { SqliteKeywordIndex } from '../../src/adapters/sqlite/keyword/index.js';
import { SqlitePartitionPurgeRows } from '../../src/adapters/sqlite/partition-purge-rows.js';
import { SqliteVectorIndex } from '../../src/adapters/sqlite/vector-index.js';
import { sqliteFile } from '../helpers/sqlite-file.js';
import { describeScaleOut, REQUIRED } from '../scale-out/services.js';
import { accessContract } from './access.contract.js';
import { type PartitionBudgets, type PartitionHarness, partitionContract } from './partitions.contract.js';
import { expectRumIndex, freshDatabase, rum, services } from './postgres-support.js';

async function sqliteHarness(budgets: PartitionBudgets): Promise<PartitionHarness> {
  const { db, close } = sqliteFile('docindex-partitions-');
  const open = () =>
    new SqliteDocumentStore(db, {
      keyword: new SqliteKeywordIndex(db, { searchRowBudget: budgets.searchRowBudget }),
    });
  const index = new SqliteKeywordIndex(db, { searchRowBudget: budgets.searchRowBudget });
  return {
    store: new SqliteDocumentStore(db, { keyword: index }),
    purgeRows: () => new SqlitePartitionPurgeRows(db),
    index,
    vectors: new SqliteVectorIndex(db, {
      minCandidates: budgets.minCandidates,
      candidatesPerHit: budgets.candidatesPerHit,
      scanThreadFrom: 0,
    }),
    reopen: open,
    close,
  };
}

partitionContract('SQLite', sqliteHarness);
accessContract('SQLite', sqliteHarness);

describeScaleOut('PostgreSQL partitions', services, () => {
  for (const withRum of [true, false]) {
    if (withRum && !rum && !REQUIRED) continue;
    const harness = async (budgets: PartitionBudgets): Promise<PartitionHarness> => {
      const { db, close } = await freshDatabase({ rum: withRum });
      if (withRum) await expectRumIndex(db);
      const index = new PgKeywordIndex(db, { searchRowBudget: budgets.searchRowBudget, rum: withRum });
      return {
        store: new PgDocumentStore(db, undefined, { keyword: index }),
        purgeRows: () => new PgPartitionPurgeRows(db),
        index,
        vectors: new PgVectorIndex(db, {
          minCandidates: budgets.minCandidates,
          candidatesPerHit: budgets.candidatesPerHit,
          scanThreadFrom: 0,
        }),
        reopen: () =>
          new PgDocumentStore(db, undefined, {
            keyword: new PgKeywordIndex(db, { searchRowBudget: budgets.searchRowBudget, rum: withRum }),
          }),
        close,
      };
    };
    partitionContract(`PostgreSQL (${withRum ? 'RUM' : 'GIN'})`, harness);
    accessContract(`PostgreSQL (${withRum ? 'RUM' : 'GIN'})`, harness);
  }
});
