// What the parts of the SQLite keyword index share: the connection, its prepared statements, the
// options, and each org's key inside FTS terms (../fts-terms.ts).
import type { Analyzer, SearchLanguage } from '../../../domain/search-words.js';
import type { Database } from '../database.js';
import type { StatementCache } from '../statements.js';

export interface SqliteKeywordContext {
  readonly db: Database;
  /** One cache for every part: a statement two parts run is prepared once. */
  readonly sql: StatementCache;
  /** Most matching chunks one query may rank. */
  readonly searchRowBudget: number;
  /** SEARCH_LANGUAGE. */
  readonly language: SearchLanguage;
  /** The analysis of chunks that come without their words. */
  readonly analyzer: Analyzer;
  readonly orgKeys: OrgKeys;
}

/** Each org's number inside FTS terms (fts_orgs), read once and remembered. */
export class OrgKeys {
  private readonly keys = new Map<string, number>();

  constructor(
    private readonly db: Database,
    private readonly sql: StatementCache,
  ) {}

  /**
   * The org's key inside FTS terms; with `create`, assigns one inside the caller's transaction.
   * Only keys read outside a transaction are cached: a key assigned in a transaction that then
   * rolls back could be handed to another org, and a stale cache would mix the two orgs' terms.
   */
  key(orgId: string, create: boolean): number | null {
    const cached = this.keys.get(orgId);
    if (cached !== undefined) return cached;
    if (create) {
      this.sql.get('INSERT INTO fts_orgs (org_id) VALUES (?) ON CONFLICT (org_id) DO NOTHING').run(orgId);
    }
    const key = this.sql.get<[string], number>('SELECT id FROM fts_orgs WHERE org_id = ?').pluck().get(orgId);
    if (key === undefined) return null;
    if (!this.db.inTransaction) this.keys.set(orgId, key);
    return key;
  }

  /** Forgets a purged org's key (its rows are the writes' to delete). */
  forget(orgId: string): void {
    this.keys.delete(orgId);
  }
}
