// OrgStore on SQLite: organisations and their API keys (only key hashes are stored).
import type { OrgStore } from '../../domain/ports.js';
import type { ApiKeyRecord, Org } from '../../domain/types.js';
import {
  ACTIVE_KEY_COLUMNS,
  type ActiveKeyRow,
  type OrgRow as SharedOrgRow,
  toActiveKey,
  toOrg,
} from '../records/org-row.js';
import type { Database } from './database.js';
import { StatementCache } from './statements.js';
import { storableText } from './text.js';

type OrgRow = SharedOrgRow<number>;

const fromMs = (ms: number) => new Date(ms);

export class SqliteOrgStore implements OrgStore {
  private readonly sql: StatementCache;

  constructor(db: Database) {
    this.sql = new StatementCache(db);
  }

  async createOrg(org: Org): Promise<void> {
    this.sql
      .get('INSERT INTO orgs (id, name, rate_limit_rpm, created_at) VALUES (?, ?, ?, ?)')
      .run(org.id, storableText(org.name), org.rateLimitRpm, org.createdAt.getTime());
  }

  async getOrg(id: string): Promise<Org | null> {
    const row = this.sql
      .get<[string], OrgRow>('SELECT id, name, rate_limit_rpm, created_at FROM orgs WHERE id = ?')
      .get(id);
    return row ? toOrg(row, fromMs) : null;
  }

  async countOrgs(): Promise<number> {
    return this.sql.get<[], { n: number }>('SELECT count(*) AS n FROM orgs').get()?.n ?? 0;
  }

  async setRateLimit(orgId: string, rpm: number): Promise<boolean> {
    return this.sql.get('UPDATE orgs SET rate_limit_rpm = ? WHERE id = ?').run(rpm, orgId).changes > 0;
  }

  async createKey(key: ApiKeyRecord): Promise<void> {
    this.sql
      .get(
        'INSERT INTO api_keys (id, org_id, hash, prefix, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?)',
      )
      .run(
        key.id,
        key.orgId,
        key.hash,
        key.prefix,
        key.createdAt.getTime(),
        key.revokedAt === null ? null : key.revokedAt.getTime(),
      );
  }

  async findActiveKey(hash: string): Promise<{ key: ApiKeyRecord; org: Org } | null> {
    const row = this.sql
      .get<[string], ActiveKeyRow<number>>(
        `SELECT ${ACTIVE_KEY_COLUMNS}
         FROM api_keys AS k JOIN orgs AS o ON o.id = k.org_id
         WHERE k.hash = ? AND k.revoked_at IS NULL`,
      )
      .get(hash);
    if (!row) return null;
    return toActiveKey(row, fromMs);
  }

  async revokeKey(keyId: string, at: Date): Promise<boolean> {
    return (
      this.sql
        .get('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL')
        .run(at.getTime(), keyId).changes > 0
    );
  }
}
