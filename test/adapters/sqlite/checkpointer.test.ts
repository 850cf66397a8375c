// The WAL checkpoint thread: while it runs, the event loop's connection never checkpoints, yet
// the WAL is still copied into the database file; when the thread stops or fails, the connection
// checkpoints again.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startCheckpointer } from '../../../src/adapters/sqlite/checkpointer.js';
import { type Database, openSqlite } from '../../../src/adapters/sqlite/database.js';
import { sleep, waitFor } from '../../contract/support.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function database(): { db: Database; file: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'docindex-ckpt-'));
  const file = path.join(dir, 'd.db');
  const db = openSqlite(file);
  db.exec('CREATE TABLE blobs (b BLOB NOT NULL)');
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  cleanups.push(() => {
    if (db.open) db.close();
  });
  return { db, file };
}

const autocheckpoint = (db: Database) => db.pragma('wal_autocheckpoint', { simple: true });
/** Writes about 4 MB in 100 commits. */
function write(db: Database): void {
  const insert = db.prepare('INSERT INTO blobs (b) VALUES (?)');
  for (let i = 0; i < 100; i++) insert.run(Buffer.alloc(40_000, i));
}

describe('startCheckpointer', () => {
  it('checkpoints from its thread while the connection does not', async () => {
    const { db, file } = database();
    const checkpointer = startCheckpointer(db, file, { intervalMs: 50 });
    cleanups.push(() => checkpointer.close());
    await waitFor('the thread to take over checkpoints', () => autocheckpoint(db) === 0);
    const before = statSync(file).size;
    write(db);
    // Nothing on this connection copies the WAL into the file any more: the thread does.
    await waitFor('the WAL to reach the database file', () => statSync(file).size > before + 3_000_000);
  });

  it('starts the WAL over once it is past its limit, even while writes never pause', async () => {
    const { db, file } = database();
    const checkpointer = startCheckpointer(db, file, { intervalMs: 10, restartFrames: 256 });
    cleanups.push(() => checkpointer.close());
    await waitFor('the thread to take over checkpoints', () => autocheckpoint(db) === 0);
    // Commits of 40 KB, ten at a time with only a millisecond between them: a PASSIVE checkpoint
    // never catches up, so without restarts the WAL file holds everything written and more (each
    // 40 KB blob takes ~49.6 KB of frames). Past 256 frames (1 MB) the thread restarts the WAL, and
    // the file, which never shrinks, then stays smaller than what went through. How soon depends
    // on when the thread gets a CPU, which a loaded machine delays: the writes go on until the file
    // is smaller than what was written, for at most 200 MB.
    const insert = db.prepare('INSERT INTO blobs (b) VALUES (?)');
    const wal = `${file}-wal`;
    let written = 0;
    let commits = 0;
    do {
      for (let i = 0; i < 10; i++) insert.run(Buffer.alloc(40_000, i));
      commits += 10;
      written += 400_000;
      await sleep(1);
    } while (statSync(wal).size >= written && written < 200_000_000);
    expect(db.prepare('SELECT count(*) AS n FROM blobs').get()).toEqual({ n: commits });
    expect(statSync(wal).size).toBeLessThan(written);
  });

  it('gives checkpointing back to the connection when closed', async () => {
    const { db, file } = database();
    const checkpointer = startCheckpointer(db, file, { intervalMs: 50 });
    await waitFor('the thread to take over checkpoints', () => autocheckpoint(db) === 0);
    await checkpointer.close();
    expect(autocheckpoint(db)).toBe(1000);
  });

  it('gives checkpointing back and reports it when the thread cannot open the database', async () => {
    const { db } = database();
    const errors: Error[] = [];
    const missing = path.join(tmpdir(), 'docindex-no-such-dir', 'missing', 'd.db');
    const checkpointer = startCheckpointer(db, missing, { onError: (e) => errors.push(e) });
    cleanups.push(() => checkpointer.close());
    await waitFor('the thread to fail', () => errors.length > 0);
    expect(autocheckpoint(db)).toBe(1000);
    // The thread's error and its exit are one failure: reported once.
    await sleep(200);
    expect(errors).toHaveLength(1);
  });
});
