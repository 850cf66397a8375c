// DocumentService.deleteMany on a real SQLite store: a request deletes at most its limit of
// documents, says whether more still match, and a caller repeating it while `hasMore` deletes
// exactly the matching ones.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Database, openSqlite } from '../../src/adapters/sqlite/database.js';
import { SqliteDocumentStore } from '../../src/adapters/sqlite/document-store.js';
import { SqliteKeywordIndex } from '../../src/adapters/sqlite/keyword/index.js';
import { DocumentService } from '../../src/domain/documents.js';
import { ALL_PARTITIONS } from '../../src/domain/partitions.js';
import { list, newDoc } from '../contract/document-fixtures.js';
import { MemoryBlobs } from './fakes.js';

const ORG = 'org_delete_many';

describe('DocumentService.deleteMany', () => {
  let db: Database;
  let store: SqliteDocumentStore;
  beforeEach(() => {
    db = openSqlite(':memory:');
    store = new SqliteDocumentStore(db, { keyword: new SqliteKeywordIndex(db) });
  });
  afterEach(() => db.close());

  const seed = async (matching: number, others: number) => {
    const docs = [
      ...Array.from({ length: matching }, () => newDoc(ORG, { metadata: { group: 'old' } })),
      ...Array.from({ length: others }, () => newDoc(ORG, { metadata: { group: 'new' } })),
    ];
    await store.createDocuments(docs);
  };
  const remaining = async () =>
    (await store.listDocuments(list(ORG, { limit: 10_000 }))).map((d) => d.metadata);

  it('deletes at most its limit per request and says when more match', async () => {
    await seed(620, 15);
    const service = new DocumentService(store, new MemoryBlobs(), { maxDeletePerRequest: 250 });
    const answers = [];
    for (;;) {
      const answer = await service.deleteMany(ORG, ALL_PARTITIONS, {
        filter: { group: 'old' },
        documentIds: undefined,
      });
      answers.push(answer);
      if (!answer.hasMore) break;
    }
    expect(answers).toEqual([
      { deleted: 250, hasMore: true },
      { deleted: 250, hasMore: true },
      { deleted: 120, hasMore: false },
    ]);
    const left = await remaining();
    expect(left).toHaveLength(15);
    for (const metadata of left) expect(metadata).toEqual({ group: 'new' });
  });

  it('answers hasMore false when exactly the limit matched', async () => {
    await seed(250, 3);
    const service = new DocumentService(store, new MemoryBlobs(), { maxDeletePerRequest: 250 });
    expect(
      await service.deleteMany(ORG, ALL_PARTITIONS, { filter: { group: 'old' }, documentIds: undefined }),
    ).toEqual({
      deleted: 250,
      hasMore: false,
    });
    expect(await remaining()).toHaveLength(3);
  });
});
