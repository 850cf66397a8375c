// Durability of a source run (scale-out): one API (`serve --no-worker`) and one `docindex worker`
// on PostgreSQL + Redis. The worker crawling a web source (a site on 127.0.0.1) is killed with
// SIGKILL mid-run; a fresh worker takes the run over once its lease lapses, and the run finishes
// with every page one document, counted once: PostgreSQL holds exactly the site's pages.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sleep } from '../contract/support.js';
import { htmlPage, type LoopbackSite, startLoopbackSite } from '../helpers/loopback-site.js';
import { startWorker, stopChild } from '../helpers/process.js';
import { useDeployment } from './deployment.js';
import { checkServices, describeScaleOut } from './services.js';

const PAGES = 150;
const KILL_AFTER = 20;

const services = await checkServices(['DATABASE_URL', 'REDIS_URL']);

describeScaleOut('scale-out: SIGKILL of the worker during a source run', services, () => {
  const deployment = useDeployment(services, {
    apis: 1,
    workers: 1,
    env: { URL_FETCH_ALLOW: '127.0.0.1', DEFAULT_RATE_LIMIT_RPM: '1000000' },
  });
  let site: LoopbackSite;
  beforeAll(async () => {
    site = await startLoopbackSite();
  });
  afterAll(async () => {
    await site?.close();
  });

  const pagePath = (i: number) => `/p/${String(i).padStart(4, '0')}.html`;

  it('a fresh worker finishes the run: every page one document, no duplicate, each counted once', async () => {
    const all = Array.from({ length: PAGES }, (_, i) => i);
    site.pages.set('/', { body: htmlPage('Index', 'the index', all.map(pagePath)) });
    for (const i of all) site.pages.set(pagePath(i), { body: htmlPage(`Page ${i}`, `page ${i} text`) });

    const { api_key: key } = await deployment.createOrg('source-crash');
    const api = deployment.apis[0]!;
    const call = async (method: string, url: string, body?: unknown) => {
      const res = await fetch(`${api.baseUrl}${url}`, {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, json: (await res.json()) as Record<string, unknown> };
    };
    const created = await call('POST', '/v1/sources', {
      type: 'web',
      name: 'crash',
      config: { start_urls: [`${site.origin}/`], max_pages: 1000, max_depth: 1 },
    });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    const sourceId = created.json.id as string;
    const started = await call('POST', `/v1/sources/${sourceId}/sync`);
    expect(started.status).toBe(202);
    const runId = started.json.run_id as string;
    const run = async () =>
      ((await call('GET', `/v1/sources/${sourceId}/runs`)).json.runs as Array<Record<string, unknown>>).find(
        (r) => r.run_id === runId,
      )!;

    for (;;) {
      const now = await run();
      expect(['completed', 'failed'].includes(now.status as string), 'the run ended before the kill').toBe(
        false,
      );
      if ((now.added as number) >= KILL_AFTER) break;
      await sleep(10);
    }
    const victim = deployment.workers.pop()!;
    await stopChild(victim.child, 'SIGKILL');
    deployment.workers.push(await startWorker(deployment.processEnv()));

    const deadline = Date.now() + 120_000;
    let last = await run();
    while (Date.now() < deadline && last.status !== 'completed' && last.status !== 'failed') {
      await sleep(200);
      last = await run();
    }
    expect(last).toMatchObject({ status: 'completed', added: PAGES + 1, updated: 0, deleted: 0, failed: 0 });

    const expected = [
      `${sourceId}:${site.origin}/`,
      ...all.map((i) => `${sourceId}:${site.origin}${pagePath(i)}`),
    ];
    const { rows } = await deployment.db.query<{ external_id: string }>(
      `SELECT external_id FROM ${deployment.table('documents')} WHERE external_id LIKE $1`,
      [`${sourceId}:%`],
    );
    expect(rows.map((r) => r.external_id).sort()).toEqual(expected.sort());
    const items = await deployment.db.query<{ n: string }>(
      `SELECT count(*) AS n FROM ${deployment.table('source_items')} WHERE source_id = $1`,
      [sourceId],
    );
    expect(Number(items.rows[0]!.n)).toBe(expected.length);
  });
});
