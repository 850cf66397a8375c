// The `docindex` administration commands, run as a user runs them, against one DATA_DIR.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, startServer, stopServer } from '../helpers/process.js';

describe('docindex CLI', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'docindex-cli-'));
  const env = { DATA_DIR: dataDir };
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('migrate, orgs create --json, keys create/revoke, set-rate-limit work together with the server', async () => {
    expect((await runCli(['migrate'], env)).status).toBe(0);

    const created = await runCli(
      ['orgs', 'create', '--name', 'Acme', '--rate-limit-rpm', '77', '--json'],
      env,
    );
    expect(created.status).toBe(0);
    const lines = created.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const org = JSON.parse(lines[0]!);
    expect(Object.keys(org).sort()).toEqual(['api_key', 'key_id', 'org_id']);
    expect(org.api_key).toMatch(/^dix_[A-Za-z0-9_-]{43}$/);

    const second = JSON.parse((await runCli(['keys', 'create', '--org', org.org_id, '--json'], env)).stdout);
    expect(second.org_id).toBe(org.org_id);

    // orgs list and keys list on the stores: the counts the server keeps, never a key.
    const listed = await runCli(['orgs', 'list'], env);
    expect(listed.status).toBe(0);
    const [header, ...rows] = listed.stdout.trim().split('\n');
    expect(header).toMatch(
      /^ORG ID\s+NAME\s+RATE LIMIT \(RPM\)\s+ACTIVE KEYS\s+QUERIES \(30 D\)\s+CREATED \(UTC\)$/,
    );
    expect(rows).toEqual([
      expect.stringMatching(new RegExp(`^${org.org_id}\\s+Acme\\s+77\\s+2\\s+0\\s+\\d{4}-`)),
    ]);
    const orgsJson = JSON.parse((await runCli(['orgs', 'list', '--json'], env)).stdout);
    expect(orgsJson).toEqual([expect.objectContaining({ org_id: org.org_id, name: 'Acme', active_keys: 2 })]);
    const keys = await runCli(['keys', 'list', '--org', org.org_id], env);
    expect(keys.status).toBe(0);
    expect(keys.stdout).toContain(second.key_id);
    expect(keys.stdout).not.toContain(second.api_key);
    const keysJson = JSON.parse((await runCli(['keys', 'list', '--org', org.org_id, '--json'], env)).stdout);
    expect(keysJson.map((k: { key_id: string }) => k.key_id)).toEqual([org.key_id, second.key_id]);
    expect(JSON.stringify(keysJson)).not.toContain(org.api_key);

    const server = await startServer(['serve', '--no-worker'], env);
    try {
      // An organisation exists, so the server does not create or print another key.
      expect(server.stdout()).not.toMatch(/api_key:/);
      const usage = async (key: string) =>
        fetch(`${server.baseUrl}/v1/usage`, { headers: { authorization: `Bearer ${key}` } });
      const first = await usage(org.api_key);
      expect(first.status).toBe(200);
      expect(((await first.json()) as { rate_limit_rpm: number }).rate_limit_rpm).toBe(77);

      expect((await runCli(['orgs', 'set-rate-limit', org.org_id, '120'], env)).status).toBe(0);
      expect(
        ((await (await usage(second.api_key)).json()) as { rate_limit_rpm: number }).rate_limit_rpm,
      ).toBe(120);

      expect((await runCli(['keys', 'revoke', second.key_id], env)).status).toBe(0);
      expect((await usage(second.api_key)).status).toBe(401);
      expect((await usage(org.api_key)).status).toBe(200);
    } finally {
      await stopServer(server);
    }
  });

  it('orgs and keys over the admin API of a running server (--url, --admin-token or the environment)', async () => {
    const adminToken = 'cli-admin-token-0123456789abcdef0123456789';
    const dir = mkdtempSync(path.join(tmpdir(), 'docindex-cli-remote-'));
    // DATA_DIR is only the server's: the commands reach the data over HTTP alone.
    const server = await startServer(['serve', '--no-worker'], { DATA_DIR: dir, ADMIN_TOKEN: adminToken });
    const remote = { DATA_DIR: path.join(dir, 'not-used'), DOCINDEX_URL: server.baseUrl };
    try {
      const created = await runCli(
        [
          'orgs',
          'create',
          '--name',
          'Remote',
          '--json',
          '--url',
          server.baseUrl,
          '--admin-token',
          adminToken,
        ],
        { DATA_DIR: path.join(dir, 'not-used') },
      );
      expect(created.status).toBe(0);
      const org = JSON.parse(created.stdout);
      expect(Object.keys(org).sort()).toEqual(['api_key', 'key_id', 'org_id']);

      const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
      const keyRun = await runCli(
        [
          'keys',
          'create',
          '--org',
          org.org_id,
          '--scopes',
          'query,read',
          '--expires-at',
          expiresAt,
          '--json',
        ],
        { ...remote, DOCINDEX_ADMIN_TOKEN: adminToken },
      );
      expect(keyRun.status).toBe(0);
      const key = JSON.parse(keyRun.stdout);
      expect(key).toMatchObject({ org_id: org.org_id, scopes: ['query', 'read'], expires_at: expiresAt });
      const call = (method: string, url: string, apiKey: string, body?: unknown) =>
        fetch(`${server.baseUrl}${url}`, {
          method,
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
      expect((await call('GET', '/v1/usage', key.api_key)).status).toBe(200);
      expect((await call('POST', '/v1/ingest', key.api_key, { documents: [{ text: 'x' }] })).status).toBe(
        403,
      );

      const limit = await runCli(
        ['orgs', 'set-rate-limit', org.org_id, '33', '--admin-token', adminToken],
        remote,
      );
      expect(limit.status).toBe(0);
      expect(
        ((await (await call('GET', '/v1/usage', org.api_key)).json()) as { rate_limit_rpm: number })
          .rate_limit_rpm,
      ).toBe(33);

      expect((await runCli(['keys', 'revoke', key.key_id, '--admin-token', adminToken], remote)).status).toBe(
        0,
      );
      expect((await call('GET', '/v1/usage', key.api_key)).status).toBe(401);

      // Listing over the admin API: the server's own first org and this one, newest first.
      const orgs = JSON.parse(
        (await runCli(['orgs', 'list', '--json', '--admin-token', adminToken], remote)).stdout,
      );
      expect(orgs.map((o: { name: string }) => o.name)).toEqual(['Remote', 'default']);
      expect(orgs[0]).toMatchObject({ org_id: org.org_id, rate_limit_rpm: 33, active_keys: 1 });
      const keys = await runCli(['keys', 'list', '--org', org.org_id, '--admin-token', adminToken], remote);
      expect(keys.status).toBe(0);
      expect(keys.stdout).toMatch(new RegExp(`^${org.key_id}\\s.*\\sactive$`, 'm'));
      expect(keys.stdout).toMatch(
        new RegExp(`^${key.key_id}\\s+dix_\\S+…\\s+query,read\\s.*\\srevoked `, 'm'),
      );
      expect(keys.stdout).not.toContain(key.api_key);
      expect(
        await runCli(['keys', 'list', '--org', 'org_nope', '--admin-token', adminToken], remote),
      ).toMatchObject({ status: 1 });

      const wrong = await runCli(['keys', 'revoke', key.key_id, '--admin-token', `${adminToken}x`], remote);
      expect(wrong.status).toBe(2);
      expect(wrong.stderr).toMatch(/refused the admin token/);
      const unknownOrg = await runCli(
        ['orgs', 'set-rate-limit', 'org_nope', '5', '--admin-token', adminToken],
        remote,
      );
      expect(unknownOrg).toMatchObject({ status: 1, stderr: 'docindex: no organisation with id org_nope\n' });
      const badScope = await runCli(
        ['keys', 'create', '--org', org.org_id, '--scopes', 'admin', '--admin-token', adminToken],
        remote,
      );
      expect(badScope.status).toBe(2);
      expect(badScope.stderr).toMatch(/--scopes/);
      const noUrl = await runCli(['keys', 'revoke', 'key_x', '--admin-token', adminToken], { DATA_DIR: dir });
      expect(noUrl.status).toBe(2);
      expect(noUrl.stderr).toMatch(/--url URL or DOCINDEX_URL/);
    } finally {
      await stopServer(server);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reports mistakes clearly with a non-zero exit', async () => {
    const missingName = await runCli(['orgs', 'create'], env);
    expect(missingName.status).toBe(2);
    expect(missingName.stderr).toMatch(/--name/);
    const unknownOrg = await runCli(['keys', 'create', '--org', 'org_nope'], env);
    expect(unknownOrg.status).toBe(1);
    expect(unknownOrg.stderr).toMatch(/no organisation/i);
    const unknownKey = await runCli(['keys', 'revoke', 'key_nope'], env);
    expect(unknownKey.status).toBe(1);
    expect(unknownKey.stderr).toBe('docindex: no key with id key_nope (or it is already revoked)\n');
    expect(await runCli(['orgs', 'set-rate-limit', 'org_nope', '60'], env)).toMatchObject({
      status: 1,
      stderr: 'docindex: no organisation with id org_nope\n',
    });
    expect((await runCli(['orgs', 'set-rate-limit', 'org_nope', 'abc'], env)).status).toBe(2);
    expect((await runCli(['frobnicate'], env)).status).toBe(2);
    expect(await runCli(['orgs', 'lis'], env)).toMatchObject({
      status: 2,
      stderr: 'docindex: unknown command "orgs lis"; did you mean "orgs list"? (see docindex --help)\n',
    });
  });

  it('a bad environment variable is reported by name', async () => {
    const result = await runCli(['migrate'], { ...env, PORT: 'eighty' });
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/PORT must be a whole number/);
  });

  it('REDIS_URL without DATABASE_URL is a configuration error, not a stack trace', async () => {
    const result = await runCli(['serve'], { ...env, DATABASE_URL: '', REDIS_URL: 'redis://127.0.0.1:6379' });
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/^invalid configuration:\n {2}- REDIS_URL is set but DATABASE_URL is not/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});
