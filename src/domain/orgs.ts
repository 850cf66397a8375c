// Organisation administration (used by the CLI and first start): create orgs, issue and revoke
// keys, change rate limits. Key material is returned once and never stored.
import { ApiError } from './errors.js';
import { displayPrefix, generateApiKey, hashApiKey, newKeyId, newOrgId } from './keys.js';
import type { Clock, OrgStore } from './ports.js';
import type { Org } from './types.js';

export interface IssuedKey {
  org_id: string;
  key_id: string;
  api_key: string;
}

export class OrgAdmin {
  constructor(
    private readonly orgs: OrgStore,
    private readonly clock: Clock,
    private readonly defaultRateLimitRpm: number,
  ) {}

  async createOrg(name: string, rateLimitRpm?: number): Promise<IssuedKey> {
    const org: Org = {
      id: newOrgId(),
      name,
      rateLimitRpm: rateLimitRpm ?? this.defaultRateLimitRpm,
      createdAt: this.clock.now(),
    };
    await this.orgs.createOrg(org);
    return this.issueKey(org.id);
  }

  /** Throws when the org does not exist. */
  async issueKey(orgId: string): Promise<IssuedKey> {
    const org = await this.orgs.getOrg(orgId);
    if (!org) throw new ApiError('not_found', `no organisation with id ${orgId}`);
    const apiKey = generateApiKey();
    const keyId = newKeyId();
    await this.orgs.createKey({
      id: keyId,
      orgId,
      hash: hashApiKey(apiKey),
      prefix: displayPrefix(apiKey),
      createdAt: this.clock.now(),
      revokedAt: null,
    });
    return { org_id: orgId, key_id: keyId, api_key: apiKey };
  }

  revokeKey(keyId: string): Promise<boolean> {
    return this.orgs.revokeKey(keyId, this.clock.now());
  }

  setRateLimit(orgId: string, rpm: number): Promise<boolean> {
    return this.orgs.setRateLimit(orgId, rpm);
  }

  /** On first start of an empty installation: creates an org and returns its key, else null. */
  async bootstrapFirstOrg(): Promise<IssuedKey | null> {
    if ((await this.orgs.countOrgs()) > 0) return null;
    return this.createOrg('default');
  }
}
