// Traces across processes: a `docindex serve --no-worker` and a `docindex worker` (real OS
// processes on PostgreSQL, with BullMQ on Redis or with PostgreSQL's own table queue) send their
// spans to a loopback OTLP receiver. An
// upload's trace runs from the API's request through the job the worker ran to `ready` (the
// trace context travels with the job), a hybrid reranked query's stages hang off its request, and
// no span carries the document's or the query's words.
import { afterAll, beforeAll, it } from 'vitest';
import { EmbeddingsServer } from '../helpers/embeddings-server.js';
import { OtlpReceiver } from '../helpers/otlp-receiver.js';
import { RerankServer } from '../helpers/rerank-server.js';
import { checkTraces } from '../helpers/trace-checks.js';
import { useDeployment } from './deployment.js';
import { checkServices, describeScaleOut } from './services.js';

const services = await checkServices(['DATABASE_URL', 'REDIS_URL']);

for (const { queue, env } of [
  { queue: 'BullMQ', env: {} },
  // REDIS_URL blank: the jobs are the document rows, and the trace context a column of them.
  { queue: 'the PostgreSQL table queue', env: { REDIS_URL: '' } },
]) {
  describeScaleOut(`scale-out: traces across the API and worker processes (${queue})`, services, () => {
    const receiver = new OtlpReceiver();
    const embeddings = new EmbeddingsServer({ dimensions: 16 });
    const reranker = new RerankServer((_query, text) => (text.toLowerCase().includes('otter') ? 1 : 0));
    // Registered before the deployment's own hooks: its processes start with these addresses.
    let deployment: ReturnType<typeof useDeployment> | null = null;
    beforeAll(async () => {
      await Promise.all([receiver.start(), embeddings.start(), reranker.start()]);
      Object.assign(deployment!.env, {
        ...env,
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_BSP_SCHEDULE_DELAY: '100',
        EMBEDDINGS: 'openai',
        EMBEDDINGS_URL: embeddings.url,
        EMBEDDINGS_MODEL: 'test-embedding',
        RERANK: 'http',
        RERANK_URL: reranker.url,
      });
    });
    afterAll(async () => {
      await Promise.all([receiver.stop(), embeddings.stop(), reranker.stop()]);
    });
    deployment = useDeployment(services, { apis: 1, workers: 1 });

    it('joins the worker’s spans to the upload’s trace and records no text', async () => {
      const org = await deployment!.createOrg('traces');
      await checkTraces(receiver, {
        apiUrl: deployment!.apis[0]!.baseUrl,
        apiKey: org.api_key,
        jobRole: 'worker',
      });
    });
  });
}
