// Webhook endpoints through the TypeScript client and `docindex webhooks …`, as users run them,
// against a real `docindex serve` process and a receiver on 127.0.0.1 (allow-listed through
// URL_FETCH_ALLOW only) that verifies signatures with the `standardwebhooks` package.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DocindexClient } from '../../src/client/client.js';
import { DocindexError } from '../../src/client/errors.js';
import { runCli, type ServerProcess, startServer, stopServer } from '../helpers/process.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

const until = async (check: () => Promise<boolean> | boolean) => {
  const deadline = Date.now() + 30_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 25));
  }
};

describe('webhooks in the client and the CLI', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'docindex-webhooks-client-'));
  const receiver = new WebhookReceiver();
  let server: ServerProcess;
  let env: Record<string, string>;
  let client: DocindexClient;

  beforeAll(async () => {
    await receiver.start();
    server = await startServer(['serve'], {
      DATA_DIR: path.join(root, 'data'),
      DEFAULT_RATE_LIMIT_RPM: '100000',
      URL_FETCH_ALLOW: `127.0.0.1:${receiver.port}`,
      WEBHOOK_POLL_MS: '20',
    });
    const apiKey = /api_key:\s+(dix_\S+)/.exec(server.stdout())![1]!;
    env = { DOCINDEX_URL: server.baseUrl, DOCINDEX_API_KEY: apiKey };
    client = new DocindexClient({ baseUrl: server.baseUrl, apiKey });
  });
  afterAll(async () => {
    if (server) await stopServer(server);
    await receiver.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('the client creates, lists, gets, tests, reads deliveries of and deletes an endpoint', async () => {
    const created = await client.createWebhook(receiver.url('/client'), {
      events: ['document.ready'],
      description: 'from the client',
    });
    expect(created.secret).toMatch(/^whsec_/);
    receiver.expect('/client', created.secret);
    expect(await client.listWebhooks()).toContainEqual({ ...created, secret: undefined });
    expect(await client.getWebhook(created.id)).toMatchObject({ id: created.id, enabled: true });
    const messageId = await client.testWebhook(created.id);
    await until(async () => (await client.listWebhookDeliveries(created.id)).deliveries.length === 1);
    expect(receiver.at('/client')).toMatchObject([{ id: messageId, verified: true }]);
    const [ready] = (await client.ingestText(['a document for the client hook'])).document_ids;
    await until(() => receiver.at('/client').length === 2);
    expect(receiver.at('/client')[1]).toMatchObject({
      verified: true,
      body: { type: 'document.ready', data: { id: ready } },
    });
    const log = await client.listWebhookDeliveries(created.id, { limit: 1 });
    expect(log.deliveries).toHaveLength(1);
    await client.deleteWebhook(created.id);
    await expect(client.getWebhook(created.id)).rejects.toMatchObject({ status: 404, code: 'not_found' });
    await expect(client.createWebhook('http://10.0.0.1/hook')).rejects.toBeInstanceOf(DocindexError);
  });

  it('docindex webhooks create | ls | test | deliveries | rm', async () => {
    const created = await runCli(
      ['webhooks', 'create', receiver.url('/cli'), '--event', 'document.failed', '--json'],
      env,
    );
    expect(created.status, created.stderr).toBe(0);
    const hook = JSON.parse(created.stdout) as { id: string; secret: string; events: string[] };
    expect(hook.events).toEqual(['document.failed']);
    receiver.expect('/cli', hook.secret);
    const human = await runCli(['webhooks', 'create', receiver.url('/cli-2')], env);
    expect(human.stdout).toMatch(/^secret: whsec_\S+$/m);
    expect(human.stderr).toMatch(/shown once/);

    const ls = await runCli(['webhooks', 'ls'], env);
    expect(ls.stdout.split('\n')[0]).toMatch(/^ID\s+URL\s+EVENTS\s+STATE$/);
    expect(ls.stdout).toMatch(new RegExp(`^${hook.id}\\s+\\S+/cli\\s+document\\.failed\\s+enabled$`, 'm'));
    expect(ls.stdout).toMatch(/\/cli-2\s+all\s+enabled$/m);

    const test = await runCli(['webhooks', 'test', hook.id], env);
    expect(test.stdout).toMatch(/^queued msg_[0-9a-f]{32}$/m);
    await until(async () => (await client.listWebhookDeliveries(hook.id)).deliveries.length === 1);
    const deliveries = await runCli(['webhooks', 'deliveries', hook.id], env);
    expect(deliveries.stdout).toMatch(/webhook\.test\s+msg_[0-9a-f]{32}\s+1\s+200\s+\d+\s+delivered/);
    expect(deliveries.stderr).toMatch(/0 message\(s\) waiting/);

    const rm = await runCli(['webhooks', 'rm', hook.id], env);
    expect(rm.status).toBe(0);
    const gone = await runCli(['webhooks', 'deliveries', hook.id], env);
    expect(gone.status).toBe(1);
    expect(gone.stderr).toMatch(/No webhook endpoint/);
    const refused = await runCli(['webhooks', 'create', 'http://localhost./hook'], env);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/url/i);
    const usage = await runCli(['webhooks', 'create', receiver.url('/x'), '--event', 'nope'], env);
    expect(usage.status).toBe(2);
  });
});
