// Resolves a bearer token to its organisation and what the key may do. Malformed tokens are
// refused before any lookup; a revoked or expired key is refused alike.
import { hashApiKey, isWellFormedKey, sameDigest } from './keys.js';
import { accessOfKey, type DocumentAccess } from './partitions.js';
import type { Clock, OrgStore } from './ports.js';
import type { Scope } from './scopes.js';
import type { Org } from './types.js';

export interface Principal {
  org: Org;
  keyId: string;
  scopes: ReadonlySet<Scope>;
  /**
   * What the key may see of its org's documents (the partitions it is limited to, the principals
   * it is bound to); a request may narrow it (http/plugins/authenticated.ts).
   */
  access: DocumentAccess;
}

export class Authenticator {
  constructor(
    private readonly orgs: OrgStore,
    private readonly clock: Clock,
  ) {}

  async authenticate(authorization: string | undefined): Promise<Principal | null> {
    if (!authorization) return null;
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
    if (!match) return null;
    const token = match[1]!;
    if (!isWellFormedKey(token)) return null;
    const hash = hashApiKey(token);
    const found = await this.orgs.findActiveKey(hash);
    if (!found || !sameDigest(found.key.hash, hash)) return null;
    const { expiresAt } = found.key;
    if (expiresAt !== null && expiresAt.getTime() <= this.clock.now().getTime()) return null;
    return {
      org: found.org,
      keyId: found.key.id,
      scopes: new Set(found.key.scopes),
      access: accessOfKey(found.key.partitions, found.key.principals),
    };
  }
}
