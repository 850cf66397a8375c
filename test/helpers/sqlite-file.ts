import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Database, openSqlite } from '../../src/adapters/sqlite/database.js';

/** A database file of its own in a fresh folder (WAL, as in production), removed on close. */
export function sqliteFile(prefix = 'docindex-test-'): { db: Database; close(): Promise<void> } {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  const db = openSqlite(path.join(dir, 'docindex.db'));
  return {
    db,
    async close() {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
