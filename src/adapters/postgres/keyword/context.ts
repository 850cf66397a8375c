// What the parts of the PostgreSQL keyword index share: the database and its tables' names, the
// options, each org's key inside terms, and the snapshot a search reads.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Analyzer, SearchLanguage } from '../../../domain/search-words.js';
import { cleanText } from '../../../domain/text.js';
import type { PgDatabase, Queryable } from '../database.js';

export interface PgKeywordContext {
  readonly db: PgDatabase;
  /** Most matching chunks one query may rank. */
  readonly searchRowBudget: number;
  /** SEARCH_LANGUAGE. */
  readonly language: SearchLanguage;
  /** The analysis of chunks that come without their words. */
  readonly analyzer: Analyzer;
  /** Whether to search the RUM index when it is ready, and let `docindex reindex` build it. */
  readonly rumWanted: boolean;
  readonly orgKeys: OrgKeys;
}

/** Orgs whose statistics are remembered at once (the map is cleared when full). */
export const ORG_STATS_CACHED = 10_000;

/** The transaction of the search running in this async context (PgKeywordSearch.search). */
export const searchSnapshot = new AsyncLocalStorage<Queryable>();

/** What goes before each word of an org's terms ("<key base 36>_<word>"), as SQLite's FTS5 terms. */
export function termPrefix(key: number): string {
  return `${key.toString(36)}_`;
}

/** Each org's key inside terms (search_org_keys), remembered once committed. */
export class OrgKeys {
  private readonly keys = new Map<string, number>();

  constructor(private readonly db: PgDatabase) {}

  /**
   * The org's key inside terms, made on its first write in the caller's transaction `db` (no
   * second connection is needed while it holds one). A key this transaction made is not cached:
   * the transaction may still roll back; a committed one, read back, is.
   * null when the org has none yet and `create` is false: it has no terms.
   */
  async key(db: Queryable, orgId: string, create: boolean): Promise<number | null> {
    const id = cleanText(orgId);
    const cached = this.keys.get(id);
    if (cached !== undefined) return cached;
    const keys = this.db.table('search_org_keys');
    if (create) {
      const made = await db.query<{ key: number }>(
        `INSERT INTO ${keys} (org_id) VALUES ($1) ON CONFLICT (org_id) DO NOTHING RETURNING key`,
        [id],
      );
      const key = made.rows[0]?.key;
      if (key !== undefined) return key;
    }
    // A row this very transaction inserted (an earlier batch of it) is not committed yet either.
    const { rows } = await db.query<{ key: number; mine: boolean }>(
      `SELECT key, coalesce(xmin = pg_current_xact_id_if_assigned()::xid, false) AS mine
       FROM ${keys} WHERE org_id = $1`,
      [id],
    );
    const key = rows[0]?.key ?? null;
    if (key !== null && !rows[0]?.mine) {
      if (this.keys.size >= ORG_STATS_CACHED) this.keys.clear();
      this.keys.set(id, key);
    }
    return key;
  }

  /** Forgets a purged org's key (its row is the writes' to delete). */
  forget(orgId: string): void {
    this.keys.delete(orgId);
  }
}

/** A part of the index: the database, its tables, the options, and where a search reads. */
export abstract class PgKeywordPart {
  protected readonly db: PgDatabase;
  protected readonly documents: string;
  protected readonly metadata: string;
  protected readonly chunks: string;
  protected readonly analysisTable: string;
  protected readonly searchRowBudget: number;
  protected readonly language: SearchLanguage;
  /** The analysis of chunks that come without their words. */
  protected readonly analyzer: Analyzer;
  protected readonly rumWanted: boolean;
  protected readonly orgKeys: OrgKeys;

  constructor(context: PgKeywordContext) {
    const { db } = context;
    this.db = db;
    this.documents = db.table('documents');
    this.metadata = db.table('document_metadata');
    this.chunks = db.table('chunks');
    this.analysisTable = db.table('search_analysis');
    this.searchRowBudget = context.searchRowBudget;
    this.language = context.language;
    this.analyzer = context.analyzer;
    this.rumWanted = context.rumWanted;
    this.orgKeys = context.orgKeys;
  }

  /** Where a search's statements run: its snapshot (see search) when inside one. */
  protected get reader(): Queryable {
    return searchSnapshot.getStore() ?? this.db;
  }

  /** `fn` in the search's own transaction when inside one (SET LOCAL then lasts to its end), else in a new one. */
  protected inSearchTransaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    const tx = searchSnapshot.getStore();
    return tx ? fn(tx) : this.db.transaction(fn);
  }
}
