// The JSON shapes of the admin API: an organisation with its usage, and an API key (never the key
// itself, only its display prefix).
import type { OrgSummary } from '../../../domain/orgs.js';
import type { ApiKeyRecord } from '../../../domain/types.js';
import { USAGE_PERIOD_DAYS } from '../../../domain/usage.js';

export function toOrgJson({ org, queries, activeKeys }: OrgSummary) {
  return {
    org_id: org.id,
    name: org.name,
    rate_limit_rpm: org.rateLimitRpm,
    created_at: org.createdAt.toISOString(),
    usage: { period_days: USAGE_PERIOD_DAYS, total_queries: queries },
    active_keys: activeKeys,
  };
}

export function toKeyJson(key: ApiKeyRecord) {
  return {
    key_id: key.id,
    org_id: key.orgId,
    prefix: key.prefix,
    scopes: key.scopes,
    expires_at: key.expiresAt?.toISOString() ?? null,
    partitions: key.partitions,
    principals: key.principals,
    created_at: key.createdAt.toISOString(),
    revoked_at: key.revokedAt?.toISOString() ?? null,
  };
}
