// The RUM extension and the keyword index built on it: migration 60 builds the index on an empty
// table, `docindex reindex` (keyword/reindex.ts) builds it CONCURRENTLY once older rows have terms.
import type { PgDatabase, Queryable } from './database.js';

/**
 * Installs the RUM extension (Debian `postgresql-15-rum`) when the server has it and the role may,
 * in `public` like btree_gin. Returns whether RUM is usable.
 */
export async function ensureRum(tx: Queryable): Promise<boolean> {
  const installed = await tx.query(`SELECT 1 FROM pg_extension WHERE extname = 'rum'`);
  if (installed.rowCount) return true;
  await tx.query('SAVEPOINT rum');
  try {
    await tx.query('CREATE EXTENSION IF NOT EXISTS rum SCHEMA public');
    await tx.query('RELEASE SAVEPOINT rum');
    return true;
  } catch {
    // Not installed on the server, or no privilege: keyword search stays on the GIN index.
    await tx.query('ROLLBACK TO SAVEPOINT rum');
    return false;
  }
}

/** The RUM index over the org-prefixed terms (built by migration 60 or by `docindex reindex`). */
export const RUM_INDEX = 'chunks_terms_rum';

/** The statement building the RUM index, plain or CONCURRENTLY. */
export function rumIndexStatement(db: PgDatabase, concurrently: boolean): string {
  return `CREATE INDEX ${concurrently ? 'CONCURRENTLY ' : ''}IF NOT EXISTS ${RUM_INDEX}
    ON ${db.table('chunks')} USING rum (terms public.rum_tsvector_ops)`;
}
