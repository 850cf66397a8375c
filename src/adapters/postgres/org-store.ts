// OrgStore on PostgreSQL: organisations and their API keys (only key hashes are stored).
import type { OrgListQuery, OrgStore } from '../../domain/ports.js';
import { cleanText } from '../../domain/text.js';
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
import type { PgDatabase } from './database.js';

type OrgRow = SharedOrgRow<Date>;

const asDate = (d: Date) => d;
const ORG_COLUMNS = 'id, name, rate_limit_rpm, created_at';

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
    const { rows } = await this.db.query<OrgRow>(`SELECT ${ORG_COLUMNS} FROM ${this.orgs} WHERE id = $1`, [
      cleanText(id),
    ]);
    return rows[0] ? toOrg(rows[0], asDate) : null;
  }

  async listOrgs(q: OrgListQuery): Promise<Org[]> {
    const limit = Math.max(0, Math.floor(q.limit));
    const { rows } =
      q.after === null
        ? await this.db.query<OrgRow>(
            `SELECT ${ORG_COLUMNS} FROM ${this.orgs} ORDER BY created_at DESC, id DESC LIMIT $1`,
            [limit],
          )
        : await this.db.query<OrgRow>(
            `SELECT ${ORG_COLUMNS} FROM ${this.orgs} WHERE (created_at, id) < ($1, $2)
             ORDER BY created_at DESC, id DESC LIMIT $3`,
            [q.after.createdAt, cleanText(q.after.id), limit],
          );
    return rows.map((row) => toOrg(row, asDate));
  }

  async countOrgs(): Promise<number> {
    const { rows } = await this.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${this.orgs}`);
    return rows[0]?.n ?? 0;
  }

  async updateOrg(orgId: string, changes: { name?: string; rateLimitRpm?: number }): Promise<Org | null> {
    const { rows } = await this.db.query<OrgRow>(
      `UPDATE ${this.orgs} SET name = coalesce($1, name), rate_limit_rpm = coalesce($2, rate_limit_rpm)
       WHERE id = $3 RETURNING ${ORG_COLUMNS}`,
      [
        changes.name === undefined ? null : cleanText(changes.name),
        changes.rateLimitRpm ?? null,
        cleanText(orgId),
      ],
    );
    return rows[0] ? toOrg(rows[0], asDate) : null;
  }

  async createKey(key: ApiKeyRecord): Promise<void> {
    await this.db.query(
      `INSERT INTO ${this.keys} (${keyColumns()}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [
        cleanText(key.id),
        cleanText(key.orgId),
        key.hash,
        cleanText(key.prefix),
        scopesColumn(key.scopes),
        key.expiresAt,
        partitionsColumn(key.partitions),
        principalsColumn(key.principals),
        key.createdAt,
        key.revokedAt,
      ],
    );
  }

  async getKey(keyId: string): Promise<ApiKeyRecord | null> {
    const { rows } = await this.db.query<KeyRow<Date>>(
      `SELECT ${keyColumns()} FROM ${this.keys} WHERE id = $1`,
      [cleanText(keyId)],
    );
    return rows[0] ? toKey(rows[0], asDate) : null;
  }

  async listKeys(orgId: string): Promise<ApiKeyRecord[]> {
    const { rows } = await this.db.query<KeyRow<Date>>(
      `SELECT ${keyColumns()} FROM ${this.keys} WHERE org_id = $1 ORDER BY created_at, id`,
      [cleanText(orgId)],
    );
    return rows.map((row) => toKey(row, asDate));
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

  async revokeKeys(orgId: string, at: Date): Promise<number> {
    const r = await this.db.query(
      `UPDATE ${this.keys} SET revoked_at = $1 WHERE org_id = $2 AND revoked_at IS NULL`,
      [at, cleanText(orgId)],
    );
    return r.rowCount ?? 0;
  }

  async purgeOrg(orgId: string): Promise<{ keys: number }> {
    return this.db.transaction(async (tx) => {
      const deleted = await tx.query(`DELETE FROM ${this.keys} WHERE org_id = $1`, [cleanText(orgId)]);
      await tx.query(`DELETE FROM ${this.orgs} WHERE id = $1`, [cleanText(orgId)]);
      return { keys: deleted.rowCount ?? 0 };
    });
  }
}
