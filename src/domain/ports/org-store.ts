// The organisations and their API keys.
import type { ApiKeyRecord, Org } from '../types.js';

/** A page of organisations: newest first, continuing strictly after `after`. */
export interface OrgListQuery {
  limit: number;
  after: { createdAt: Date; id: string } | null;
}

export interface OrgStore {
  createOrg(org: Org): Promise<void>;
  getOrg(id: string): Promise<Org | null>;
  /** Newest first (createdAt desc, id desc). */
  listOrgs(q: OrgListQuery): Promise<Org[]>;
  countOrgs(): Promise<number>;
  /** Sets the given fields; the org as it is afterwards, or null when it does not exist. */
  updateOrg(orgId: string, changes: { name?: string; rateLimitRpm?: number }): Promise<Org | null>;
  createKey(key: ApiKeyRecord): Promise<void>;
  getKey(keyId: string): Promise<ApiKeyRecord | null>;
  /** Every key of the org, revoked and expired ones included, oldest first. */
  listKeys(orgId: string): Promise<ApiKeyRecord[]>;
  /**
   * The org of a key that exists and is not revoked (expiry is the caller's to check: the store
   * has no clock).
   */
  findActiveKey(hash: string): Promise<{ key: ApiKeyRecord; org: Org } | null>;
  /** false when the key does not exist or was already revoked. */
  revokeKey(keyId: string, at: Date): Promise<boolean>;
  /** Revokes every active key of the org at once; how many were revoked. */
  revokeKeys(orgId: string, at: Date): Promise<number>;
  /** Deletes the org and all its keys; how many keys were deleted (0 when there was no org). */
  purgeOrg(orgId: string): Promise<{ keys: number }>;
}
