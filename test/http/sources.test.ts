// Sources end to end (embedded, and scale-out when its project runs): an s3 source on s3rver
// (127.0.0.1, admitted by URL_FETCH_ALLOW) synced into documents, changed and synced again;
// credentials sealed and never shown; one run at a time; the endpoint screened like URL ingest.
import { randomBytes, randomUUID } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { CreateBucketCommand, DeleteObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runCommandLine } from '../../src/cli/main.js';
import { listen } from '../client/support.js';
import { type Harness, startHarness, type TestOrg } from '../helpers/harness.js';
import { describeS3, type S3rverProcess, startS3rver } from '../helpers/s3rver.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

// s3rver accepts any key pair; this secret is searched for in every answer.
const SECRET = `secret-${randomBytes(12).toString('hex')}`;
const ACCESS_KEY = 'S3RVER';
const SECRETS_KEY = randomBytes(32).toString('hex');

describeS3('sources (s3 on s3rver)', () => {
  let server: S3rverProcess;
  let admin: S3Client;
  let h: Harness;
  /** Every response body the tests saw, searched for the secret at the end. */
  const bodies: string[] = [];

  beforeAll(async () => {
    server = await startS3rver();
    admin = new S3Client({
      region: 'us-east-1',
      endpoint: server.endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: 'S3RVER' },
    });
    // Two tries per run: the missing-bucket run fails after one retry rather than four.
    h = await startHarness({ env: { URL_FETCH_ALLOW: '127.0.0.1', SECRETS_KEY, JOB_MAX_ATTEMPTS: '2' } });
  });
  afterAll(async () => {
    await h?.close();
    admin?.destroy();
    await server?.stop();
  });

  /** The harness's app listening on 127.0.0.1 (for the MCP and command-line clients), once. */
  let listening: Promise<string> | undefined;
  const baseUrl = () => {
    listening ??= listen(h.app);
    return listening;
  };

  const call = async (...args: Parameters<Harness['request']>) => {
    const res = await h.request(...args);
    bodies.push(res.body);
    return res;
  };

  async function freshBucket(objects: Record<string, string>): Promise<string> {
    const bucket = `t-${randomUUID()}`;
    await admin.send(new CreateBucketCommand({ Bucket: bucket }));
    for (const [key, body] of Object.entries(objects)) await put(bucket, key, body);
    return bucket;
  }

  const put = (bucket: string, key: string, body: string) =>
    admin.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: 'text/plain' }));

  function s3Config(bucket: string, extra: Record<string, unknown> = {}) {
    return {
      bucket,
      endpoint: server.endpoint,
      force_path_style: true,
      access_key_id: ACCESS_KEY,
      secret_access_key: SECRET,
      ...extra,
    };
  }

  async function createSource(bucket: string, body: Record<string, unknown> = {}, org: TestOrg = h.orgA) {
    const res = await call('POST', '/v1/sources', {
      key: org.apiKey,
      body: { type: 's3', name: 'test bucket', config: s3Config(bucket), ...body },
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { id: string; has_credentials: boolean; config: Record<string, unknown> };
  }

  /** Starts a run and waits until it has finished; returns it. */
  async function syncAndWait(sourceId: string, org: TestOrg = h.orgA) {
    const started = await call('POST', `/v1/sources/${sourceId}/sync`, { key: org.apiKey });
    expect(started.statusCode, started.body).toBe(202);
    const runId = started.json().run_id as string;
    return waitForRun(sourceId, runId, org);
  }

  async function waitForRun(sourceId: string, runId: string, org: TestOrg = h.orgA) {
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const res = await call('GET', `/v1/sources/${sourceId}/runs`, { key: org.apiKey });
      const run = (res.json().runs as Array<Record<string, unknown>>).find((r) => r.run_id === runId);
      if (run && (run.status === 'completed' || run.status === 'failed')) return run;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`run ${runId} did not finish`);
  }

  async function sourceDocuments(sourceId: string) {
    const res = await call(
      'GET',
      `/v1/documents?limit=100&filter=${encodeURIComponent(JSON.stringify({ source_id: sourceId }))}`,
    );
    expect(res.statusCode, res.body).toBe(200);
    return res.json().documents as Array<{
      id: string;
      external_id: string;
      metadata: Record<string, string>;
      status: string;
      version: number;
    }>;
  }

  it('syncs a bucket prefix into documents, then follows its changes', async () => {
    const bucket = await freshBucket({
      'docs/a.txt': 'alpha original text',
      'docs/b.txt': 'bravo text that will be deleted',
      'docs/c.md': '# Charlie\n\nunchanged text',
      'other/z.txt': 'outside the prefix',
    });
    const source = await createSource(bucket, {
      config: s3Config(bucket, { prefix: 'docs/' }),
      metadata: { team: 'legal' },
    });
    expect(source.has_credentials).toBe(true);
    expect(source.config).not.toHaveProperty('secret_access_key');
    expect(source.config).not.toHaveProperty('access_key_id');

    const first = await syncAndWait(source.id);
    expect(first).toMatchObject({
      status: 'completed',
      added: 3,
      updated: 0,
      deleted: 0,
      unchanged: 0,
      failed: 0,
    });
    let docs = await sourceDocuments(source.id);
    expect(docs.map((d) => d.external_id).sort()).toEqual(
      ['docs/a.txt', 'docs/b.txt', 'docs/c.md'].map((k) => `${source.id}:${k}`),
    );
    for (const doc of docs) {
      expect(doc.metadata).toEqual({
        team: 'legal',
        source_id: source.id,
        source_key: doc.external_id.slice(source.id.length + 1),
      });
    }
    await h.waitForDone(
      h.orgA,
      docs.map((d) => d.id),
    );
    const byKey = new Map(docs.map((d) => [d.metadata.source_key, d]));

    // One changed, one deleted, one added, one untouched.
    await put(bucket, 'docs/a.txt', 'alpha rewritten with zebra words');
    await admin.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'docs/b.txt' }));
    await put(bucket, 'docs/d.txt', 'delta is new');
    const second = await syncAndWait(source.id);
    expect(second).toMatchObject({
      status: 'completed',
      added: 1,
      updated: 1,
      deleted: 1,
      unchanged: 1,
      failed: 0,
    });

    docs = await sourceDocuments(source.id);
    expect(docs.map((d) => d.metadata.source_key).sort()).toEqual(['docs/a.txt', 'docs/c.md', 'docs/d.txt']);
    const changed = docs.find((d) => d.metadata.source_key === 'docs/a.txt')!;
    // A changed item is a new version of the same document.
    expect(changed.id).toBe(byKey.get('docs/a.txt')!.id);
    await h.waitForDone(
      h.orgA,
      docs.map((d) => d.id),
    );
    const deadline = Date.now() + 30_000;
    let version = 0;
    while (Date.now() < deadline) {
      version = (await call('GET', `/v1/documents/${changed.id}`)).json().version as number;
      if (version === 2) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(version).toBe(2);
    const hits = await call('POST', '/v1/query', {
      body: { query: 'zebra', filter: { source_id: source.id } },
    });
    expect(hits.json().results.map((r: { document_id: string }) => r.document_id)).toEqual([changed.id]);
    expect((await call('GET', `/v1/documents/${byKey.get('docs/b.txt')!.id}`)).statusCode).toBe(404);

    // Nothing changed: a run costs the listing only.
    const third = await syncAndWait(source.id);
    expect(third).toMatchObject({ added: 0, updated: 0, deleted: 0, unchanged: 3, failed: 0 });
  });

  it('records an item it cannot ingest and carries on', async () => {
    const bucket = await freshBucket({ 'ok.txt': 'fine text', 'blob.bin': '\u0000\u0001\u0002binary' });
    const source = await createSource(bucket);
    const run = await syncAndWait(source.id);
    expect(run).toMatchObject({ status: 'completed', added: 1, failed: 1 });
    expect(run.errors).toEqual([
      { item: 'blob.bin', code: 'unsupported_format', message: expect.any(String) },
    ]);
  });

  it('a bucket that does not exist fails the run with the reason', async () => {
    const source = await createSource(`missing-${randomUUID()}`);
    const run = await syncAndWait(source.id);
    expect(run.status).toBe('failed');
    expect((run.errors as Array<{ item: string | null }>)[0]?.item).toBeNull();
  }, 120_000);

  it('runs one sync per source at a time', async () => {
    const bucket = await freshBucket({ 'a.txt': 'one' });
    const source = await createSource(bucket);
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => call('POST', `/v1/sources/${source.id}/sync`)),
    );
    const codes = answers.map((r) => r.statusCode);
    expect(codes.filter((c) => c !== 202 && c !== 409)).toEqual([]);
    expect(codes.filter((c) => c === 409).length).toBeGreaterThanOrEqual(1);
    expect(answers.find((r) => r.statusCode === 409)?.json()).toMatchObject({ code: 'sync_in_progress' });
    // A run of one small file can end while the later requests are still on their way (a loaded
    // machine spreads them out), and one of those may then start the next run: the rule is that
    // runs never overlap, each started after the one before it ended.
    const accepted = answers.filter((r) => r.statusCode === 202).map((r) => r.json().run_id as string);
    expect(accepted.length).toBeGreaterThanOrEqual(1);
    const runs = [];
    for (const runId of accepted) runs.push(await waitForRun(source.id, runId));
    runs.sort((a, b) => String(a.started_at).localeCompare(String(b.started_at)));
    for (let i = 1; i < runs.length; i++) {
      expect(Date.parse(String(runs[i]!.started_at))).toBeGreaterThanOrEqual(
        Date.parse(String(runs[i - 1]!.finished_at)),
      );
    }
    // Once it has finished, another may start.
    expect((await call('POST', `/v1/sources/${source.id}/sync`)).statusCode).toBe(202);
  });

  it('lists, updates and deletes sources; another org sees none of them', async () => {
    const bucket = await freshBucket({ 'a.txt': 'kept until the source goes' });
    const source = await createSource(bucket, {
      schedule: 'PT1H',
      partition: 'legal',
      access: ['group:eng'],
    });
    const listed = await call('GET', '/v1/sources');
    expect(listed.json().sources.map((s: { id: string }) => s.id)).toContain(source.id);
    const patched = await call('PATCH', `/v1/sources/${source.id}`, {
      body: {
        name: 'renamed',
        schedule: 'P1D',
        config: { bucket, endpoint: server.endpoint, force_path_style: true },
      },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json()).toMatchObject({
      name: 'renamed',
      schedule: 'P1D',
      has_credentials: true,
      partition: 'legal',
      access: ['group:eng'],
    });
    expect(patched.json().next_run_at).not.toBeNull();

    for (const [method, url] of [
      ['GET', `/v1/sources/${source.id}`],
      ['PATCH', `/v1/sources/${source.id}`],
      ['POST', `/v1/sources/${source.id}/sync`],
      ['GET', `/v1/sources/${source.id}/runs`],
      ['DELETE', `/v1/sources/${source.id}`],
    ] as const) {
      const res = await call(method, url, {
        key: h.orgB.apiKey,
        ...(method === 'PATCH' ? { body: { name: 'x' } } : {}),
      });
      expect(res.statusCode, `${method} ${url}`).toBe(404);
    }
    expect((await call('GET', '/v1/sources', { key: h.orgB.apiKey })).json().sources).toEqual([]);

    const run = await syncAndWait(source.id);
    expect(run.added).toBe(1);
    const [doc] = await sourceDocuments(source.id);
    // The source's access list is its documents': group:eng sees the document, group:hr does not.
    expect(doc).toMatchObject({ partition: 'legal', access: ['group:eng'] });
    expect((await call('GET', `/v1/documents/${doc!.id}?principals=group:eng`)).statusCode).toBe(200);
    expect((await call('GET', `/v1/documents/${doc!.id}?principals=group:hr`)).statusCode).toBe(404);
    expect((await call('DELETE', `/v1/sources/${source.id}`)).statusCode).toBe(204);
    expect((await call('GET', `/v1/sources/${source.id}`)).statusCode).toBe(404);
    // Its documents go in the background.
    const deadline = Date.now() + 30_000;
    let status = 200;
    while (Date.now() < deadline) {
      status = (await call('GET', `/v1/documents/${doc!.id}`)).statusCode;
      if (status === 404) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(status).toBe(404);
  });

  it('refuses what it cannot accept with a 400 that says why', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ config: s3Config('bucket', { endpoint: 'http://10.1.2.3:9000' }) }, '/config/endpoint'],
      [{ config: s3Config('bucket', { endpoint: 'http://169.254.169.254' }) }, '/config/endpoint'],
      [{ config: s3Config('bucket', { endpoint: 'http://localhost:9000' }) }, '/config/endpoint'],
      [{ config: s3Config('bucket', { endpoint: 'ftp://127.0.0.1' }) }, '/config/endpoint'],
      [{ config: { bucket: 'bucket', access_key_id: 'only-one' } }, '/config/secret_access_key'],
      [{ schedule: 'PT4M' }, '/schedule'],
      [{ schedule: 'P1M' }, '/schedule'],
      [{ schedule: 'hourly' }, '/schedule'],
      [{ partition: 'Not Valid' }, '/partition'],
      [{ metadata: { source_id: 'mine' } }, '/metadata/source_id'],
    ];
    for (const [body, pointer] of cases) {
      const res = await call('POST', '/v1/sources', {
        body: { type: 's3', name: 'x', config: { bucket: 'bucket' }, ...body },
      });
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.headers['content-type']).toContain('application/problem+json');
      expect(
        (res.json().errors as Array<{ pointer: string }> | undefined)?.map((e) => e.pointer).join(' ') ?? '',
        `${JSON.stringify(body)}: ${res.body}`,
      ).toContain(pointer);
    }
    const unknownType = await call('POST', '/v1/sources', { body: { type: 'ftp', name: 'x', config: {} } });
    expect(unknownType.statusCode).toBe(400);
    const extra = await call('POST', '/v1/sources', {
      body: { type: 's3', name: 'x', config: { bucket: 'bucket', password: 'p' } },
    });
    expect(extra.statusCode).toBe(400);
  });

  it('puts its items into the source’s partition; a key limited to partitions may not use sources', async () => {
    const bucket = await freshBucket({ 'p/one.txt': 'a partitioned item' });
    const source = await createSource(bucket, { partition: 'red' });
    expect((await syncAndWait(source.id)).status).toBe('completed');
    const docs = (await sourceDocuments(source.id)) as unknown as Array<{ partition: string }>;
    expect(docs.map((d) => d.partition)).toEqual(['red']);
    const limited = await h.runtime.admin.issueKey(h.orgA.orgId, { partitions: ['red'] });
    for (const [method, url] of [
      ['GET', '/v1/sources'],
      ['GET', `/v1/sources/${source.id}`],
      ['POST', `/v1/sources/${source.id}/sync`],
    ] as const) {
      const res = await call(method, url, { key: limited.api_key });
      expect(res.statusCode, url).toBe(403);
      expect(res.json()).toMatchObject({ code: 'partition_forbidden' });
    }
  });

  it('a key without the sources scope gets 403', async () => {
    const key = await h.runtime.admin.issueKey(h.orgA.orgId, { scopes: ['read'] });
    const res = await call('GET', '/v1/sources', { key: key.api_key });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ code: 'insufficient_scope' });
  });

  it('MCP: list_sources shows the newest run, sync_source starts one', async () => {
    const bucket = await freshBucket({ 'm.txt': 'through the model context protocol' });
    const source = await createSource(bucket);
    const client = new Client({ name: 'docindex-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', await baseUrl()), {
        requestInit: { headers: { authorization: `Bearer ${h.orgA.apiKey}` } },
      }),
    );
    try {
      const tool = async (name: string, args: Record<string, unknown>) => {
        const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
        const text = result.content[0]?.type === 'text' ? result.content[0].text : '';
        bodies.push(text);
        return {
          error: result.isError ?? false,
          text,
          content: result.structuredContent as Record<string, unknown>,
        };
      };
      const listed = await tool('list_sources', {});
      const mine = (listed.content.sources as Array<Record<string, unknown>>).find((s) => s.id === source.id);
      expect(mine).toMatchObject({ has_credentials: true, last_run: null });
      const synced = await tool('sync_source', { id: source.id });
      expect(synced.error).toBe(false);
      const run = await waitForRun(source.id, synced.content.run_id as string);
      expect(run).toMatchObject({ status: 'completed', added: 1 });
      const after = await tool('list_sources', {});
      expect(
        (after.content.sources as Array<Record<string, unknown>>).find((s) => s.id === source.id)?.last_run,
      ).toMatchObject({ run_id: synced.content.run_id, status: 'completed', added: 1 });
      const missing = await tool('sync_source', { id: 'src_nope' });
      expect(missing.error).toBe(true);
      expect(missing.text).toMatch(/^not_found: /);
    } finally {
      await client.close();
    }
  });

  it('the command line adds, lists, syncs and shows runs, credentials from the environment only', async () => {
    const bucket = await freshBucket({ 'cli.txt': 'added from the command line' });
    const url = await baseUrl();
    const cli = async (argv: string[]) => {
      const stdout = new PassThrough();
      const stderr = new PassThrough();
      const status = await runCommandLine(argv, {
        version: '0.1.0',
        env: {
          DOCINDEX_URL: url,
          DOCINDEX_API_KEY: h.orgA.apiKey,
          AWS_ACCESS_KEY_ID: ACCESS_KEY,
          AWS_SECRET_ACCESS_KEY: SECRET,
        },
        io: { stdout, stderr },
        openServer: async () => {
          throw new Error('client commands need no server side');
        },
        modelSettings: () => {
          throw new Error('client commands need no model settings');
        },
      });
      const out = (stdout.read() ?? '').toString() as string;
      bodies.push(out);
      return { status, out, err: (stderr.read() ?? '').toString() as string };
    };
    const added = await cli([
      'sources',
      'add',
      's3',
      '--name',
      'from the cli',
      '--bucket',
      bucket,
      '--endpoint',
      server.endpoint,
      '--path-style',
      '--aws-env',
      '--metadata',
      'team=ops',
      '--json',
    ]);
    expect(added.status, added.err).toBe(0);
    const source = JSON.parse(added.out) as { id: string; has_credentials: boolean; metadata: object };
    expect(source).toMatchObject({ has_credentials: true, metadata: { team: 'ops' } });
    const listed = await cli(['sources', 'list']);
    expect(listed.out).toContain(source.id);
    const synced = await cli(['sources', 'sync', source.id, '--wait', '--json']);
    expect(synced.status, synced.err).toBe(0);
    expect(JSON.parse(synced.out)).toMatchObject({ status: 'completed', added: 1 });
    const runs = await cli(['sources', 'runs', source.id]);
    expect(runs.out).toMatch(/completed\s+.*\s1\s+0\s+0\s+0\s+0\s*$/m);
    const wrong = await cli(['sources', 'add', 'ftp', '--name', 'x', '--bucket', 'b']);
    expect(wrong.status).toBe(2);
  });

  it('a finished run is a signed source.sync.completed event carrying the run, without credentials', async () => {
    const receiver = new WebhookReceiver();
    await receiver.start();
    const dispatcher = h.runtime.startDispatcher();
    try {
      const hook = await call('POST', '/v1/webhooks', {
        body: { url: receiver.url('/sources'), events: ['source.sync.completed', 'source.sync.failed'] },
      });
      expect(hook.statusCode, hook.body).toBe(201);
      receiver.expect('/sources', hook.json().secret as string);
      const bucket = await freshBucket({ 'hook.txt': 'an event follows' });
      const source = await createSource(bucket);
      const run = await syncAndWait(source.id);
      const deadline = Date.now() + 30_000;
      while (receiver.at('/sources').length === 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const [event] = receiver.at('/sources');
      expect(event?.verified).toBe(true);
      expect(event?.body).toMatchObject({
        type: 'source.sync.completed',
        data: {
          source_id: source.id,
          org_id: h.orgA.orgId,
          run_id: run.run_id,
          status: 'completed',
          added: 1,
        },
      });
      expect(JSON.stringify(event?.body)).not.toContain(SECRET);
      expect((await call('DELETE', `/v1/webhooks/${hook.json().id}`)).statusCode).toBe(204);
    } finally {
      await dispatcher.stop();
      await receiver.stop();
    }
  });

  it('never shows the credentials in an answer', async () => {
    expect(bodies.length).toBeGreaterThan(20);
    for (const body of bodies) expect(body).not.toContain(SECRET);
  });
});

describeS3('sources without SECRETS_KEY', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ env: { URL_FETCH_ALLOW: '127.0.0.1' }, worker: false });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('refuses a source with credentials, and accepts one without', async () => {
    const refused = await h.request('POST', '/v1/sources', {
      body: {
        type: 's3',
        name: 'x',
        config: { bucket: 'bucket', access_key_id: 'AKIA', secret_access_key: SECRET },
      },
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ code: 'secrets_key_unset' });
    expect(refused.body).not.toContain(SECRET);
    const plain = await h.request('POST', '/v1/sources', {
      body: { type: 's3', name: 'public', config: { bucket: 'bucket' } },
    });
    expect(plain.statusCode).toBe(201);
    expect(plain.json()).toMatchObject({ has_credentials: false });
  });
});
