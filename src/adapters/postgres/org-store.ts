// OrgStore on PostgreSQL: organisations and their API keys (only key hashes are stored).
import type { OrgStore } from '../../domain/ports.js';
import { cleanText } from '../../domain/text.js';
import type { ApiKeyRecord, Org } from '../../domain/types.js';
import {
  ACTIVE_KEY_COLUMNS,
  type ActiveKeyRow,
  type OrgRow as SharedOrgRow,
  toActiveKey,
  toOrg,
} from '../records/org-row.js';
import type { PgDatabase } from './database.js';

type OrgRow = SharedOrgRow<Date>;

const asDate = (d: Date) => d;

export class PgOrgStore implements OrgStore {
  private readonly orgs: string;
  private readonly keys: string;

  constructor(private readonly db: PgDatabase) {
    this.orgs = db.table('orgs');
    this.keys = db.table('api_keys');
  }

  async createOrg(org: Org): Promise<void> {
    await this.db.query(
      `INSERT INTO ${this.orgs} (id, name, rate_limit_rpm, created_at) VALUES ($1, $2, $3, $4)`,
      [cleanText(org.id), cleanText(org.name), org.rateLimitRpm, org.createdAt],
    );
  }

  async getOrg(id: string): Promise<Org | null> {
    const { rows } = await this.db.query<OrgRow>(
      `SELECT id, name, rate_limit_rpm, created_at FROM ${this.orgs} WHERE id = $1`,
      [cleanText(id)],
    );
    return rows[0] ? toOrg(rows[0], asDate) : null;
  }

  async countOrgs(): Promise<number> {
    const { rows } = await this.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${this.orgs}`);
    return rows[0]?.n ?? 0;
  }

  async setRateLimit(orgId: string, rpm: number): Promise<boolean> {
    const r = await this.db.query(`UPDATE ${this.orgs} SET rate_limit_rpm = $1 WHERE id = $2`, [
      rpm,
      cleanText(orgId),
    ]);
    return (r.rowCount ?? 0) > 0;
  }

  async createKey(key: ApiKeyRecord): Promise<void> {
    await this.db.query(
      `INSERT INTO ${this.keys} (id, org_id, hash, prefix, created_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6)`,
      [
        cleanText(key.id),
        cleanText(key.orgId),
        key.hash,
        cleanText(key.prefix),
        key.createdAt,
        key.revokedAt,
      ],
    );
  }

  async findActiveKey(hash: string): Promise<{ key: ApiKeyRecord; org: Org } | null> {
    const { rows } = await this.db.query<ActiveKeyRow<Date>>(
      `SELECT ${ACTIVE_KEY_COLUMNS}
       FROM ${this.keys} AS k JOIN ${this.orgs} AS o ON o.id = k.org_id
       WHERE k.hash = $1 AND k.revoked_at IS NULL`,
      [cleanText(hash)],
    );
    const row = rows[0];
    if (!row) return null;
    return toActiveKey(row, asDate);
  }

  async revokeKey(keyId: string, at: Date): Promise<boolean> {
    const r = await this.db.query(
      `UPDATE ${this.keys} SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL`,
      [at, cleanText(keyId)],
    );
    return (r.rowCount ?? 0) > 0;
  }
}
