// Traces of the embedded deployment (one `docindex serve` process: API and workers, SQLite and
// its table queue), sent to a loopback OTLP receiver: an upload's trace from the request to
// `ready`, a hybrid reranked query's stages, no words of the document or the query in any span.
// And the cost of tracing off: a server without OTEL variables loads none of the tracing code,
// which the same module log shows a traced server loading.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmbeddingsServer } from '../helpers/embeddings-server.js';
import { OtlpReceiver } from '../helpers/otlp-receiver.js';
import { runCli, type ServerProcess, startServer, stopServer } from '../helpers/process.js';
import { RerankServer } from '../helpers/rerank-server.js';
import { checkTraces } from '../helpers/trace-checks.js';

/** Modules of the tracing code: the SDK, the exporter, the API and docindex's adapter. */
const TRACING_MODULE = /@opentelemetry\/|\/adapters\/otel\//;

describe('traces of an embedded deployment', () => {
  const work = mkdtempSync(path.join(tmpdir(), 'docindex-traces-'));
  const receiver = new OtlpReceiver();
  const embeddings = new EmbeddingsServer({ dimensions: 16 });
  const reranker = new RerankServer((_query, text) => (text.toLowerCase().includes('otter') ? 1 : 0));
  const servers: ServerProcess[] = [];

  /**
   * NODE_OPTIONS that make a process write the URL of every module it imports to `log`: a
   * resolve hook registered before the program starts.
   */
  function moduleLog(name: string): { log: string; nodeOptions: string } {
    const log = path.join(work, `${name}.modules`);
    const hooks = path.join(work, 'log-hooks.mjs');
    writeFileSync(
      hooks,
      `import { appendFileSync } from 'node:fs';
let log = '';
export function initialize(data) { log = data.log; }
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(log, resolved.url + '\\n');
  return resolved;
}
`,
    );
    const register = path.join(work, `${name}-register.mjs`);
    writeFileSync(
      register,
      `import { register } from 'node:module';
register(${JSON.stringify(pathToFileURL(hooks).href)}, { data: { log: ${JSON.stringify(log)} } });
`,
    );
    writeFileSync(log, '');
    return { log, nodeOptions: `--import=${pathToFileURL(register).href}` };
  }

  beforeAll(async () => {
    await Promise.all([receiver.start(), embeddings.start(), reranker.start()]);
  });
  afterAll(async () => {
    await Promise.all(servers.map((server) => stopServer(server)));
    await Promise.all([receiver.stop(), embeddings.stop(), reranker.stop()]);
    rmSync(work, { recursive: true, force: true });
  });

  it('traces an upload to ready and a hybrid query in one process, and records no text', async () => {
    const dataDir = path.join(work, 'traced');
    const modules = moduleLog('traced');
    const env = {
      DATA_DIR: dataDir,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: '100',
      EMBEDDINGS: 'openai',
      EMBEDDINGS_URL: embeddings.url,
      EMBEDDINGS_MODEL: 'test-embedding',
      RERANK: 'http',
      RERANK_URL: reranker.url,
    };
    const created = await runCli(['orgs', 'create', '--name', 'Traced', '--json'], env);
    expect(created.status, created.stderr).toBe(0);
    const server = await startServer(['serve'], { ...env, NODE_OPTIONS: modules.nodeOptions });
    servers.push(server);
    await checkTraces(receiver, {
      apiUrl: server.baseUrl,
      apiKey: JSON.parse(created.stdout).api_key,
      jobRole: 'serve',
    });
    const loaded = readFileSync(modules.log, 'utf8');
    expect(loaded).toContain('@opentelemetry/sdk-trace-node');
    expect(loaded).toContain('@opentelemetry/exporter-trace-otlp-http');
  });

  it('loads no tracing code without OTEL variables', async () => {
    const dataDir = path.join(work, 'untraced');
    const modules = moduleLog('untraced');
    const env = { DATA_DIR: dataDir };
    const created = await runCli(['orgs', 'create', '--name', 'Untraced', '--json'], env);
    expect(created.status, created.stderr).toBe(0);
    const server = await startServer(['serve'], { ...env, NODE_OPTIONS: modules.nodeOptions });
    servers.push(server);
    const auth = { authorization: `Bearer ${JSON.parse(created.stdout).api_key}` };
    const ingested = await fetch(`${server.baseUrl}/v1/ingest`, {
      method: 'POST',
      headers: {
        ...auth,
        'content-type': 'application/json',
        traceparent: `00-${'1'.repeat(32)}-${'2'.repeat(16)}-01`,
      },
      body: JSON.stringify({ documents: [{ text: 'Otters hold hands while they sleep.' }] }),
    });
    expect(ingested.status).toBe(202);
    const queried = await fetch(`${server.baseUrl}/v1/query`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'otters' }),
    });
    expect(queried.status).toBe(200);
    const loaded = readFileSync(modules.log, 'utf8').split('\n');
    // The log works: it saw the server's own modules.
    expect(loaded.some((url) => url.includes('/start/runtime.js'))).toBe(true);
    expect(loaded.filter((url) => TRACING_MODULE.test(url))).toEqual([]);
  });
});
