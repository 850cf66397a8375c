// OrgStore on SQLite: organisations and their API keys (only key hashes are stored).
import type { OrgListQuery, OrgStore } from '../../domain/ports.js';
import type { ApiKeyRecord, Org } from '../../domain/types.js';
import {
  ACTIVE_KEY_COLUMNS,
  type ActiveKeyRow,
  type KeyRow,
  keyColumns,
  partitionsColumn,
  principalsColumn,
  type OrgRow as SharedOrgRow,
  scopesColumn,
  toActiveKey,
  toKey,
  toOrg,
} from '../sql-rows/org-row.js';
import type { Database } from './database.js';
import { StatementCache } from './statements.js';
import { storableText } from './text.js';

type OrgRow = SharedOrgRow<number>;

const fromMs = (ms: number) => new Date(ms);
const ORG_COLUMNS = 'id, name, rate_limit_rpm, created_at';

export class SqliteOrgStore implements OrgStore {
  private readonly sql: StatementCache;

  constructor(private readonly db: Database) {
    this.sql = new StatementCache(db);
  }

  async createOrg(org: Org): Promise<void> {
    this.sql
      .get('INSERT INTO orgs (id, name, rate_limit_rpm, created_at) VALUES (?, ?, ?, ?)')
      .run(org.id, storableText(org.name), org.rateLimitRpm, org.createdAt.getTime());
  }

  async getOrg(id: string): Promise<Org | null> {
    const row = this.sql.get<[string], OrgRow>(`SELECT ${ORG_COLUMNS} FROM orgs WHERE id = ?`).get(id);
    return row ? toOrg(row, fromMs) : null;
  }

  async listOrgs(q: OrgListQuery): Promise<Org[]> {
    const limit = Math.max(0, Math.floor(q.limit));
    const rows =
      q.after === null
        ? this.sql
            .get<[number], OrgRow>(
              `SELECT ${ORG_COLUMNS} FROM orgs ORDER BY created_at DESC, id DESC LIMIT ?`,
            )
            .all(limit)
        : this.sql
            .get<[number, string, number], OrgRow>(
              `SELECT ${ORG_COLUMNS} FROM orgs WHERE (created_at, id) < (?, ?)
               ORDER BY created_at DESC, id DESC LIMIT ?`,
            )
            .all(q.after.createdAt.getTime(), q.after.id, limit);
    return rows.map((row) => toOrg(row, fromMs));
  }

  async countOrgs(): Promise<number> {
    return this.sql.get<[], { n: number }>('SELECT count(*) AS n FROM orgs').get()?.n ?? 0;
  }

  async updateOrg(orgId: string, changes: { name?: string; rateLimitRpm?: number }): Promise<Org | null> {
    const row = this.sql
      .get<[string | null, number | null, string], OrgRow>(
        `UPDATE orgs SET name = coalesce(?, name), rate_limit_rpm = coalesce(?, rate_limit_rpm)
         WHERE id = ? RETURNING ${ORG_COLUMNS}`,
      )
      .get(
        changes.name === undefined ? null : storableText(changes.name),
        changes.rateLimitRpm ?? null,
        orgId,
      );
    return row ? toOrg(row, fromMs) : null;
  }

  async createKey(key: ApiKeyRecord): Promise<void> {
    this.sql
      .get(`INSERT INTO api_keys (${keyColumns()}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
      .run(
        key.id,
        key.orgId,
        key.hash,
        key.prefix,
        scopesColumn(key.scopes),
        key.expiresAt === null ? null : key.expiresAt.getTime(),
        partitionsColumn(key.partitions),
        principalsColumn(key.principals),
        key.createdAt.getTime(),
        key.revokedAt === null ? null : key.revokedAt.getTime(),
      );
  }

  async getKey(keyId: string): Promise<ApiKeyRecord | null> {
    const row = this.sql
      .get<[string], KeyRow<number>>(`SELECT ${keyColumns()} FROM api_keys WHERE id = ?`)
      .get(keyId);
    return row ? toKey(row, fromMs) : null;
  }

  async listKeys(orgId: string): Promise<ApiKeyRecord[]> {
    return this.sql
      .get<[string], KeyRow<number>>(
        `SELECT ${keyColumns()} FROM api_keys WHERE org_id = ? ORDER BY created_at, id`,
      )
      .all(orgId)
      .map((row) => toKey(row, fromMs));
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

  async revokeKeys(orgId: string, at: Date): Promise<number> {
    return this.sql
      .get('UPDATE api_keys SET revoked_at = ? WHERE org_id = ? AND revoked_at IS NULL')
      .run(at.getTime(), orgId).changes;
  }

  async purgeOrg(orgId: string): Promise<{ keys: number }> {
    return this.db
      .transaction(() => {
        const keys = this.sql.get('DELETE FROM api_keys WHERE org_id = ?').run(orgId).changes;
        this.sql.get('DELETE FROM orgs WHERE id = ?').run(orgId);
        return { keys };
      })
      .immediate();
  }
}
