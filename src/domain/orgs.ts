// Organisation administration (the admin API, the CLI and first start): create, list, rename and
// re-limit orgs, issue, list and revoke keys, and purge an org with everything it owns. Key
// material is returned once and never stored.
import { ERRORS } from './errors.js';
import type { EvaluationStore } from './evaluations.js';
import { displayPrefix, generateApiKey, hashApiKey, newKeyId, newOrgId } from './keys.js';
import { decodePageCursor, encodePageCursor } from './page-cursor.js';
import { accessOfKey, checkPartitionNames, MAX_PARTITIONS_PER_REQUEST } from './partitions.js';
import type { BlobStore, Clock, DocumentStore, IdempotencyStore, OrgStore, UsageStore } from './ports.js';
import { checkPrincipals } from './principals.js';
import { normaliseScopes, type Scope } from './scopes.js';
import type { SourceStore } from './sources.js';
import type { ApiKeyRecord, Org } from './types.js';
import type { UsageService } from './usage.js';
import type { WebhookStore } from './webhooks.js';

export interface IssuedKey {
  org_id: string;
  key_id: string;
  /** The key itself: shown once. */
  api_key: string;
  scopes: Scope[];
  expires_at: Date | null;
  /** The partitions the key is limited to; null: every partition. */
  partitions: string[] | null;
  /** The principals every request of the key acts for; null: unbound. */
  principals: string[] | null;
}

export interface CreatedOrg extends IssuedKey {
  name: string;
  rate_limit_rpm: number;
}

/** An org with its query count over the usage window and its usable keys, for the admin list. */
export interface OrgSummary {
  org: Org;
  queries: number;
  /** Keys neither revoked nor expired. */
  activeKeys: number;
}

export interface OrgPage {
  orgs: OrgSummary[];
  nextCursor: string | null;
}

/** What purging an org removed, counted (`webhooks`: endpoints, with their outbox and log). Vectors have no store yet: always 0. */
export interface PurgeReceipt {
  org_id: string;
  documents: number;
  chunks: number;
  vectors: number;
  blobs: number;
  webhooks: number;
  keys: number;
  usage_days: number;
  idempotency_keys: number;
  evaluations: number;
}

export interface KeyOptions {
  /** Every scope when absent or empty. */
  scopes?: Scope[];
  /** Must lie in the future. */
  expiresAt?: Date | null;
  /** Limits the key to these partitions; absent or empty: every partition. */
  partitions?: string[] | null;
  /**
   * Binds the key to these principals: its requests see only documents without an access list
   * or whose list shares one of them (an empty list: only documents without one); absent or
   * null: unbound.
   */
  principals?: string[] | null;
}

/** Every store that keeps something per org, so a purge can reach all of them. */
export interface OrgAdminStores {
  orgs: OrgStore;
  documents: DocumentStore;
  usage: UsageStore;
  idempotency: IdempotencyStore;
  blobs: BlobStore;
  webhooks: WebhookStore;
  evaluations: EvaluationStore;
  sources: SourceStore;
}

export class OrgAdmin {
  constructor(
    private readonly stores: OrgAdminStores,
    private readonly usage: UsageService,
    private readonly clock: Clock,
    private readonly defaultRateLimitRpm: number,
  ) {}

  private get orgs(): OrgStore {
    return this.stores.orgs;
  }

  /** A new org and its first key (every scope, no expiry). */
  async createOrg(name: string, rateLimitRpm?: number): Promise<CreatedOrg> {
    const org: Org = {
      id: newOrgId(),
      name,
      rateLimitRpm: rateLimitRpm ?? this.defaultRateLimitRpm,
      createdAt: this.clock.now(),
    };
    await this.orgs.createOrg(org);
    const key = await this.issueKey(org.id);
    return { ...key, name: org.name, rate_limit_rpm: org.rateLimitRpm };
  }

  async getOrg(orgId: string): Promise<OrgSummary> {
    const org = await this.orgs.getOrg(orgId);
    if (!org) throw ERRORS.orgNotFound(orgId);
    return this.summaryOf(org);
  }

  /** Newest first, with each org's queries over the usage window. */
  async listOrgs(options: { limit: number; cursor: string | null }): Promise<OrgPage> {
    const after = options.cursor === null ? null : decodePageCursor(options.cursor);
    const found = await this.orgs.listOrgs({ limit: options.limit + 1, after });
    const page = found.slice(0, options.limit);
    const last = page[page.length - 1];
    const nextCursor =
      found.length > options.limit && last ? encodePageCursor(last.createdAt, last.id) : null;
    const orgs = await Promise.all(page.map((org) => this.summaryOf(org)));
    return { orgs, nextCursor };
  }

  /** Renames the org and/or changes its rate limit; the authenticated principal sees it at once. */
  async updateOrg(orgId: string, changes: { name?: string; rateLimitRpm?: number }): Promise<OrgSummary> {
    const org = await this.orgs.updateOrg(orgId, changes);
    if (!org) throw ERRORS.orgNotFound(orgId);
    return this.summaryOf(org);
  }

  /** false when the org does not exist. */
  async setRateLimit(orgId: string, rpm: number): Promise<boolean> {
    return (await this.orgs.updateOrg(orgId, { rateLimitRpm: rpm })) !== null;
  }

  /** Throws not_found when the org does not exist, invalid_request for an expiry in the past. */
  async issueKey(orgId: string, options: KeyOptions = {}): Promise<IssuedKey> {
    const org = await this.orgs.getOrg(orgId);
    if (!org) throw ERRORS.orgNotFound(orgId);
    const now = this.clock.now();
    const expiresAt = options.expiresAt ?? null;
    // An Invalid Date would be stored as no expiry at all: refused before anything is written.
    if (expiresAt !== null && Number.isNaN(expiresAt.getTime())) {
      throw ERRORS.invalid('expires_at is not a valid date-time.', [
        { pointer: '/expires_at', message: 'must be a valid date-time' },
      ]);
    }
    if (expiresAt !== null && expiresAt.getTime() <= now.getTime()) {
      throw ERRORS.invalid('expires_at must lie in the future.', [
        { pointer: '/expires_at', message: 'must be a future date-time' },
      ]);
    }
    const partitions = checkKeyPartitions(options.partitions ?? null);
    const principals =
      options.principals === undefined || options.principals === null
        ? null
        : checkPrincipals(options.principals, '/principals', 0).sort();
    const apiKey = generateApiKey();
    const record: ApiKeyRecord = {
      id: newKeyId(),
      orgId,
      hash: hashApiKey(apiKey),
      prefix: displayPrefix(apiKey),
      scopes: normaliseScopes(options.scopes),
      expiresAt,
      partitions,
      principals,
      createdAt: now,
      revokedAt: null,
    };
    await this.orgs.createKey(record);
    return {
      org_id: orgId,
      key_id: record.id,
      api_key: apiKey,
      scopes: record.scopes,
      expires_at: record.expiresAt,
      partitions: record.partitions,
      principals: record.principals,
    };
  }

  /** Every key of the org (never the key itself: its display prefix), oldest first. */
  async listKeys(orgId: string): Promise<ApiKeyRecord[]> {
    if (!(await this.orgs.getOrg(orgId))) throw ERRORS.orgNotFound(orgId);
    return this.orgs.listKeys(orgId);
  }

  /** false when the key does not exist or was already revoked. */
  revokeKey(keyId: string): Promise<boolean> {
    return this.orgs.revokeKey(keyId, this.clock.now());
  }

  /** Revokes the key (revoking a revoked key changes nothing); the key as it is afterwards. */
  async revokeKeyRecord(keyId: string): Promise<ApiKeyRecord> {
    await this.orgs.revokeKey(keyId, this.clock.now());
    const key = await this.orgs.getKey(keyId);
    if (!key) throw ERRORS.keyNotFound(keyId);
    return key;
  }

  /**
   * Removes the org and everything it owns. Its keys are revoked first, so no new request of the
   * org gets in while the rest goes; the org row goes last, so a purge cut off part-way can be
   * run again. Documents are removed as single deletes are: a job still queued or running for one
   * ends without writing anything (the pipeline finds its document gone).
   */
  async purgeOrg(orgId: string): Promise<PurgeReceipt> {
    const { orgs, documents, usage, idempotency, blobs, webhooks, evaluations, sources } = this.stores;
    if (!(await orgs.getOrg(orgId))) throw ERRORS.orgNotFound(orgId);
    await orgs.revokeKeys(orgId, this.clock.now());
    // Endpoints first: documents purged afterwards produce no events, and none is sent.
    const webhookCount = await webhooks.purgeOrg(orgId);
    // Sources before documents: a run under way finds its source gone and stops adding to them.
    await sources.purgeOrg(orgId);
    const docs = await documents.purgeOrg(orgId);
    for (const key of docs.blobKeys) await blobs.delete(key);
    const usageDays = await usage.purgeOrg(orgId);
    const idempotencyKeys = await idempotency.purgeOrg(orgId);
    const evaluationCount = await evaluations.purgeOrg(orgId);
    const { keys } = await orgs.purgeOrg(orgId);
    return {
      org_id: orgId,
      documents: docs.documents,
      chunks: docs.chunks,
      vectors: 0,
      blobs: docs.blobKeys.length,
      webhooks: webhookCount,
      keys,
      usage_days: usageDays,
      idempotency_keys: idempotencyKeys,
      evaluations: evaluationCount,
    };
  }

  /** On first start of an empty installation: creates an org and returns its key, else null. */
  async bootstrapFirstOrg(): Promise<CreatedOrg | null> {
    if ((await this.orgs.countOrgs()) > 0) return null;
    return this.createOrg('default');
  }

  private async summaryOf(org: Org): Promise<OrgSummary> {
    const now = this.clock.now().getTime();
    const [report, keys] = await Promise.all([this.usage.report(org.id, 0), this.orgs.listKeys(org.id)]);
    const activeKeys = keys.filter(
      (key) => key.revokedAt === null && (key.expiresAt === null || key.expiresAt.getTime() > now),
    ).length;
    return { org, queries: report.total_queries, activeKeys };
  }
}

/** A key's partitions, checked and in a canonical order; null: every partition. */
function checkKeyPartitions(partitions: readonly string[] | null): string[] | null {
  if (partitions === null) return null;
  checkPartitionNames(
    partitions,
    '/partitions',
    `A key may be limited to at most ${MAX_PARTITIONS_PER_REQUEST} partitions.`,
  );
  const { partitions: names } = accessOfKey(partitions);
  return names === null ? null : [...names];
}
