// AdminClient against a real docindex with ADMIN_TOKEN set: every admin operation, typed errors.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminClient, DocindexClient, DocindexError } from '../../src/index.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { listen } from './support.js';

const ADMIN_TOKEN = 'client-admin-token-0123456789abcdef012345';

describe('AdminClient', () => {
  let h: Harness;
  let baseUrl: string;
  beforeAll(async () => {
    h = await startHarness({ env: { ADMIN_TOKEN } });
    baseUrl = await listen(h.app);
  });
  afterAll(() => h.close());

  it('creates, lists, updates and purges orgs, and issues, lists and revokes keys', async () => {
    const admin = new AdminClient({ baseUrl, adminToken: ADMIN_TOKEN });
    const org = await admin.createOrg('Client Co', { rateLimitRpm: 321 });
    expect(org).toMatchObject({ name: 'Client Co', rate_limit_rpm: 321 });

    const all = [];
    for await (const o of admin.iterateOrgs()) all.push(o.org_id);
    expect(all).toEqual(expect.arrayContaining([org.org_id, h.orgA.orgId, h.orgB.orgId]));
    expect(await admin.updateOrg(org.org_id, { name: 'Client Ltd' })).toMatchObject({
      name: 'Client Ltd',
      rate_limit_rpm: 321,
    });
    expect((await admin.getOrg(org.org_id)).usage).toEqual({ period_days: 30, total_queries: 0 });

    const key = await admin.createKey(org.org_id, {
      scopes: ['ingest'],
      expiresAt: new Date(Date.now() + 60_000),
    });
    expect(key.scopes).toEqual(['ingest']);
    const tenant = new DocindexClient({ baseUrl, apiKey: key.api_key });
    const ack = await tenant.ingestText(['written by an ingest-only key']);
    await expect(tenant.getDocument(ack.document_ids[0]!)).rejects.toMatchObject({
      status: 403,
      code: 'insufficient_scope',
    });
    const bound = await admin.createKey(org.org_id, {
      scopes: ['query', 'read'],
      principals: ['user:42', 'group:eng'],
    });
    expect(bound.principals).toEqual(['group:eng', 'user:42']);
    const asUser = new DocindexClient({ baseUrl, apiKey: bound.api_key });
    expect((await asUser.org()).key.principals).toEqual(['group:eng', 'user:42']);
    const keys = await admin.listKeys(org.org_id);
    expect(keys.map((k) => k.key_id)).toEqual([org.key_id, key.key_id, bound.key_id]);
    expect(keys.map((k) => k.principals)).toEqual([null, null, ['group:eng', 'user:42']]);
    expect((await admin.revokeKey(key.key_id)).revoked_at).not.toBeNull();

    const receipt = await admin.purgeOrg(org.org_id);
    expect(receipt).toMatchObject({ org_id: org.org_id, documents: 1, keys: 3, vectors: 0, webhooks: 0 });
    const missing = await admin.getOrg(org.org_id).catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(DocindexError);
    expect(missing).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('a wrong token is a typed 401', async () => {
    const admin = new AdminClient({ baseUrl, adminToken: 'nope', maxRetries: 0 });
    await expect(admin.listOrgs()).rejects.toMatchObject({ status: 401, code: 'unauthorized' });
  });
});
