// OrgStore on SQLite: organisations and their API keys (only key hashes are stored).
import type { OrgStore } from '../../domain/ports.js';
import type { ApiKeyRecord, Org } from '../../domain/types.js';
import type { Database } from './database.js';
import { StatementCache } from './statements.js';
import { storableText } from './text.js';

interface OrgRow {
  id: string;
  name: string;
  rate_limit_rpm: number;
  created_at: number;
}

interface KeyRow {
  id: string;
  org_id: string;
  hash: string;
  prefix: string;
  created_at: number;
  revoked_at: number | null;
}

function toOrg(row: OrgRow): Org {
  return {
    id: row.id,
    name: row.name,
    rateLimitRpm: row.rate_limit_rpm,
    createdAt: new Date(row.created_at),
  };
}

function toKey(row: KeyRow): ApiKeyRecord {
  return {
    id: row.id,
    orgId: row.org_id,
    hash: row.hash,
    prefix: row.prefix,
    createdAt: new Date(row.created_at),
    revokedAt: row.revoked_at === null ? null : new Date(row.revoked_at),
  };
}

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
    return row ? toOrg(row) : null;
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
      .get<[string], KeyRow & { o_name: string; o_rpm: number; o_created_at: number }>(
        `SELECT k.id, k.org_id, k.hash, k.prefix, k.created_at, k.revoked_at,
                o.name AS o_name, o.rate_limit_rpm AS o_rpm, o.created_at AS o_created_at
         FROM api_keys AS k JOIN orgs AS o ON o.id = k.org_id
         WHERE k.hash = ? AND k.revoked_at IS NULL`,
      )
      .get(hash);
    if (!row) return null;
    return {
      key: toKey(row),
      org: toOrg({
        id: row.org_id,
        name: row.o_name,
        rate_limit_rpm: row.o_rpm,
        created_at: row.o_created_at,
      }),
    };
  }

  async revokeKey(keyId: string, at: Date): Promise<boolean> {
    return (
      this.sql
        .get('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL')
        .run(at.getTime(), keyId).changes > 0
    );
  }
}
