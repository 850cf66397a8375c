// Webhooks scaled out: one API (`serve --no-worker`) and two `docindex worker` processes on
// PostgreSQL + BullMQ, every one of them running a dispatcher on the shared outbox. A receiver on
// 127.0.0.1 (allow-listed through URL_FETCH_ALLOW only) verifies every request with the
// `standardwebhooks` package. Happy path: 500 documents, each document.ready exactly once across
// the three dispatchers. Crashes: workers are SIGKILLed three times at random moments during
// another 500-document ingest (a fresh one takes each victim's place); afterwards every event has
// arrived at least once, and the copies of one event carry one webhook-id.
import { afterAll, expect, it } from 'vitest';
import { sleep } from '../contract/support.js';
import { startWorker, stopChild } from '../helpers/process.js';
import {
  createEndpoint,
  expectAtLeastOnce,
  postDocuments,
  waitForReadyEvents,
} from '../helpers/webhook-ingest.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { useDeployment } from './deployment.js';
import { checkServices, describeScaleOut } from './services.js';

const DOCS = 500;
const KILLS = 3;

const services = await checkServices(['DATABASE_URL', 'REDIS_URL']);
const receiver = new WebhookReceiver();
await receiver.start();
afterAll(() => receiver.stop());

describeScaleOut('scale-out: webhooks from three dispatchers on one outbox', services, () => {
  const deployment = useDeployment(services, {
    apis: 1,
    workers: 2,
    env: {
      WORKER_CONCURRENCY: '4',
      URL_FETCH_ALLOW: `127.0.0.1:${receiver.port}`,
      WEBHOOK_TIMEOUT_MS: '2000',
      WEBHOOK_RETRY_BASE_MS: '100',
      WEBHOOK_RETRY_MAX_MS: '1000',
      WEBHOOK_POLL_MS: '50',
    },
  });
  const { env, apis, workers } = deployment;

  it('a 500-document ingest: every document.ready arrives exactly once, verified', async () => {
    const { api_key: key } = await deployment.createOrg('webhooks-happy');
    const api = apis[0]!;
    await createEndpoint(api.baseUrl, key, receiver, '/happy');
    const ids = await postDocuments(async () => api.baseUrl, key, DOCS);
    const byDocument = await waitForReadyEvents(receiver, '/happy', ids);
    expect(expectAtLeastOnce(byDocument).duplicates).toBe(0);
    expect(receiver.at('/happy')).toHaveLength(DOCS);
    // As long as waitForReadyEvents may wait (240 s), with a loaded machine's margin.
  }, 300_000);

  it('SIGKILL of workers during a 500-document ingest: every event at least once, one webhook-id per event', async () => {
    const { api_key: key } = await deployment.createOrg('webhooks-crash');
    const api = apis[0]!;
    await createEndpoint(api.baseUrl, key, receiver, '/crash');
    const posting = postDocuments(async () => api.baseUrl, key, DOCS, DOCS);
    const killing = (async () => {
      for (let k = 0; k < KILLS; k++) {
        await sleep(300 + Math.floor(Math.random() * 1_500));
        const victim = workers.splice(Math.floor(Math.random() * workers.length), 1)[0]!;
        await stopChild(victim.child, 'SIGKILL');
        workers.push(await startWorker(env));
      }
    })();
    const [ids] = await Promise.all([posting, killing]);
    expect(new Set(ids).size).toBe(DOCS);
    const byDocument = await waitForReadyEvents(receiver, '/crash', ids);
    const { duplicates } = expectAtLeastOnce(byDocument);
    console.info(
      `webhooks scale-out: ${KILLS} worker kills, ${duplicates} duplicate deliveries (same webhook-id)`,
    );
    // waitForReadyEvents' 240 s and three worker starts (startWorker: up to 30 s each).
  }, 360_000);
});
