// Resolves a bearer token to its organisation. Malformed tokens are refused before any lookup.
import { hashApiKey, isWellFormedKey, sameDigest } from './keys.js';
import type { OrgStore } from './ports.js';
import type { Org } from './types.js';

export interface Principal {
  org: Org;
  keyId: string;
}

export class Authenticator {
  constructor(private readonly orgs: OrgStore) {}

  async authenticate(authorization: string | undefined): Promise<Principal | null> {
    if (!authorization) return null;
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
    if (!match) return null;
    const token = match[1]!;
    if (!isWellFormedKey(token)) return null;
    const hash = hashApiKey(token);
    const found = await this.orgs.findActiveKey(hash);
    if (!found || !sameDigest(found.key.hash, hash)) return null;
    return { org: found.org, keyId: found.key.id };
  }
}
