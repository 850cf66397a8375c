// The orgs and api_keys rows as both SQL backends read them, and their mapping to domain records.
// Each backend says how its driver returns a timestamp (epoch milliseconds or a Date).
import { isScope, type Scope } from '../../domain/scopes.js';
import type { ApiKeyRecord, Org } from '../../domain/types.js';

export interface OrgRow<D> {
  id: string;
  name: string;
  rate_limit_rpm: number;
  created_at: D;
}

export interface KeyRow<D> {
  id: string;
  org_id: string;
  hash: string;
  prefix: string;
  /** Comma-separated, in the canonical order. */
  scopes: string;
  expires_at: D | null;
  /** Comma-separated partition names; null: every partition. */
  partitions: string | null;
  /** The principals the key is bound to, a JSON array; null: unbound. */
  principals: string | null;
  created_at: D;
  revoked_at: D | null;
}

/** The columns of a key row, in KeyRow's order (with an optional table alias). */
export const keyColumns = (alias = '') =>
  [
    'id',
    'org_id',
    'hash',
    'prefix',
    'scopes',
    'expires_at',
    'partitions',
    'principals',
    'created_at',
    'revoked_at',
  ]
    .map((column) => alias + column)
    .join(', ');

/** How scopes are stored: one text column, comma-separated. */
export function scopesColumn(scopes: readonly Scope[]): string {
  return scopes.join(',');
}

/** How a key's partitions are stored: comma-separated names (a name has no comma), or null for all. */
export function partitionsColumn(partitions: readonly string[] | null): string | null {
  return partitions === null || partitions.length === 0 ? null : partitions.join(',');
}

/** How a key's principals are stored: a JSON array (a principal may hold a comma), or null. */
export function principalsColumn(principals: readonly string[] | null): string | null {
  return principals === null ? null : JSON.stringify(principals);
}

/** A key row joined with its org's columns (findActiveKey's SELECT). */
export type ActiveKeyRow<D> = KeyRow<D> & { o_name: string; o_rpm: number; o_created_at: D };

/** The columns findActiveKey selects, given the two tables' aliases k and o. */
export const ACTIVE_KEY_COLUMNS = `${keyColumns('k.')},
  o.name AS o_name, o.rate_limit_rpm AS o_rpm, o.created_at AS o_created_at`;

export function toOrg<D>(row: OrgRow<D>, date: (value: D) => Date): Org {
  return { id: row.id, name: row.name, rateLimitRpm: row.rate_limit_rpm, createdAt: date(row.created_at) };
}

export function toKey<D>(row: KeyRow<D>, date: (value: D) => Date): ApiKeyRecord {
  return {
    id: row.id,
    orgId: row.org_id,
    hash: row.hash,
    prefix: row.prefix,
    // A scope this version does not know (written by a newer one) grants nothing here.
    scopes: row.scopes.split(',').filter(isScope),
    expiresAt: row.expires_at === null ? null : date(row.expires_at),
    partitions: row.partitions === null || row.partitions === '' ? null : row.partitions.split(','),
    principals: row.principals === null ? null : (JSON.parse(row.principals) as string[]),
    createdAt: date(row.created_at),
    revokedAt: row.revoked_at === null ? null : date(row.revoked_at),
  };
}

export function toActiveKey<D>(
  row: ActiveKeyRow<D>,
  date: (value: D) => Date,
): { key: ApiKeyRecord; org: Org } {
  return {
    key: toKey(row, date),
    org: toOrg(
      { id: row.org_id, name: row.o_name, rate_limit_rpm: row.o_rpm, created_at: row.o_created_at },
      date,
    ),
  };
}
