// GroupCommit: the writes of one event-loop turn share a transaction, yet each lands or fails on
// its own, and what fails takes nothing of itself into the database.
import { afterEach, describe, expect, it } from 'vitest';
import { type Database, openSqlite } from '../../../src/adapters/sqlite/database.js';
import { GroupCommit } from '../../../src/adapters/sqlite/group-commit.js';

const dbs: Database[] = [];
afterEach(() => {
  for (const db of dbs.splice(0)) if (db.open) db.close();
});

function setup(maxWeight?: number) {
  const db = openSqlite(':memory:');
  dbs.push(db);
  db.exec('CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER NOT NULL)');
  const insert = (k: string, v = 1) => db.prepare('INSERT INTO t (k, v) VALUES (?, ?)').run(k, v).changes;
  const keys = () => db.prepare('SELECT k FROM t ORDER BY k').pluck().all();
  return { db, commits: new GroupCommit(db, maxWeight), insert, keys };
}

describe('GroupCommit', () => {
  it('writes a turn’s calls in one transaction and resolves each with its own result', async () => {
    const { db, commits, insert, keys } = setup();
    let transactions = 0;
    const transaction = db.transaction.bind(db);
    db.transaction = ((fn: () => unknown) => {
      transactions++;
      return transaction(fn);
    }) as typeof db.transaction;
    const results = await Promise.all(['a', 'b', 'c'].map((k) => commits.run(() => `${k}:${insert(k)}`)));
    expect(results).toEqual(['a:1', 'b:1', 'c:1']);
    expect(keys()).toEqual(['a', 'b', 'c']);
    expect(transactions).toBe(1);
  });

  it('a write that violates a constraint or throws fails alone, leaving none of its rows', async () => {
    const { commits, insert, keys } = setup();
    insert('taken');
    const outcomes = await Promise.allSettled([
      commits.run(() => insert('a')),
      commits.run(() => {
        insert('half-done');
        insert('taken');
      }),
      commits.run(() => insert('b')),
      commits.run(() => {
        insert('also-half-done');
        throw new RangeError('a bug in the write');
      }),
      commits.run(() => insert('c')),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual([
      'fulfilled',
      'rejected',
      'fulfilled',
      'rejected',
      'fulfilled',
    ]);
    expect((outcomes[1] as PromiseRejectedResult).reason.code).toBe('SQLITE_CONSTRAINT_PRIMARYKEY');
    expect((outcomes[3] as PromiseRejectedResult).reason).toBeInstanceOf(RangeError);
    expect(keys()).toEqual(['a', 'b', 'c', 'taken']);
  });

  it('an error that is not the write’s own (I/O, full disk) fails the whole batch at once', async () => {
    const { commits, insert, keys } = setup();
    let attempts = 0;
    const ioError = Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR_WRITE' });
    const outcomes = await Promise.allSettled([
      commits.run(() => insert('a')),
      commits.run(() => {
        attempts++;
        throw ioError;
      }),
      commits.run(() => insert('b')),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(attempts).toBe(1);
    expect(keys()).toEqual([]);
  });

  it('writes a full batch at once, before the turn ends', async () => {
    const { commits, insert, keys } = setup(10);
    const calls = Array.from({ length: 25 }, (_, i) =>
      commits.run(() => insert(`k${String(i).padStart(2, '0')}`)),
    );
    expect(keys()).toHaveLength(20);
    await Promise.all(calls);
    expect(keys()).toHaveLength(25);
  });

  it('rejects every waiting write when the database is closed before they run', async () => {
    const { db, commits, insert } = setup();
    const pending = commits.run(() => insert('late'));
    db.close();
    await expect(pending).rejects.toThrow(/not open/);
  });
});
