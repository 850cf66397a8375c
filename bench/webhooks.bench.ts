// Webhook delivery latency: from the moment a document turns `ready` (its status record's
// updated_at, written in the transaction that also writes the outbox row) to the receiver's 2xx,
// under a 1,000-document ingest. Embedded: one `docindex serve`. Scale-out (when DATABASE_URL and
// REDIS_URL are set): `serve --no-worker` plus one `docindex worker`, both dispatching from the
// PostgreSQL outbox. The receiver on 127.0.0.1 (URL_FETCH_ALLOW) verifies every signature with
// the `standardwebhooks` package and notes when it answered. Goal: p99 ≤ 1 s.
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { Webhook } from 'standardwebhooks';
import {
  type Benchmark,
  type BenchOptions,
  type BenchSection,
  dropPostgresSchema,
  fmt,
  percentile,
  sleep,
} from './lib.js';
import { type DocindexServer, startDocindex, startWorkerProcess, stopProcess } from './server.js';

const GOAL_P99_MS = 1_000;
const BATCH = 50;

interface Receiver {
  server: Server;
  port: number;
  secret: string | null;
  /** document id → ms from ready to the answer (first copy only). */
  latencies: Map<string, number>;
  unverified: number;
  copies: number;
}

async function startReceiver(): Promise<Receiver> {
  const receiver: Receiver = {
    server: null as unknown as Server,
    port: 0,
    secret: null,
    latencies: new Map(),
    unverified: 0,
    copies: 0,
  };
  receiver.server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      try {
        new Webhook(receiver.secret ?? '').verify(raw, {
          'webhook-id': String(req.headers['webhook-id']),
          'webhook-timestamp': String(req.headers['webhook-timestamp']),
          'webhook-signature': String(req.headers['webhook-signature']),
        });
      } catch {
        receiver.unverified += 1;
      }
      const event = JSON.parse(raw) as { type: string; data: { id: string; updated_at: string } };
      res.writeHead(204);
      res.end();
      if (event.type !== 'document.ready') return;
      receiver.copies += 1;
      const id = event.data.id;
      if (!receiver.latencies.has(id))
        receiver.latencies.set(id, Date.now() - Date.parse(event.data.updated_at));
    });
  });
  await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
  receiver.port = (receiver.server.address() as AddressInfo).port;
  return receiver;
}

function syntheticText(i: number): string {
  const words = ['river', 'ledger', 'harbour', 'violet', 'engine', 'quartz', 'meadow', 'signal', 'copper'];
  const sentences = Array.from({ length: 20 + (i % 20) }, (_, s) =>
    Array.from({ length: 12 }, (_, w) => words[(i * 7 + s * 3 + w * 11) % words.length]).join(' '),
  );
  return `${sentences.join('. ')}.`;
}

async function measure(
  label: string,
  docs: number,
  extraEnv: Record<string, string>,
  scaleOut: boolean,
): Promise<string> {
  const receiver = await startReceiver();
  const env = {
    URL_FETCH_ALLOW: `127.0.0.1:${receiver.port}`,
    ...extraEnv,
  };
  let server: DocindexServer | null = null;
  let worker: ChildProcess | null = null;
  try {
    server = await startDocindex({ env, args: scaleOut ? ['--no-worker'] : [] });
    if (scaleOut) {
      worker = await startWorkerProcess({
        ...process.env,
        ...env,
        DATA_DIR: server.dataDir,
        DEFAULT_RATE_LIMIT_RPM: '10000000',
      });
    }
    const headers = { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' };
    const created = await fetch(`${server.baseUrl}/v1/webhooks`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ url: `http://127.0.0.1:${receiver.port}/hook`, events: ['document.ready'] }),
    });
    if (created.status !== 201) throw new Error(`POST /v1/webhooks answered ${created.status}`);
    receiver.secret = ((await created.json()) as { secret: string }).secret;
    const started = Date.now();
    for (let first = 0; first < docs; first += BATCH) {
      const res = await fetch(`${server.baseUrl}/v1/ingest`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          documents: Array.from({ length: Math.min(BATCH, docs - first) }, (_, i) => ({
            text: syntheticText(first + i),
          })),
        }),
      });
      if (res.status !== 202) throw new Error(`POST /v1/ingest answered ${res.status}`);
    }
    const deadline = Date.now() + 600_000;
    while (receiver.latencies.size < docs) {
      if (Date.now() > deadline) throw new Error(`only ${receiver.latencies.size} of ${docs} events arrived`);
      await sleep(50);
    }
    const took = (Date.now() - started) / 1000;
    const values = [...receiver.latencies.values()];
    const p99 = percentile(values, 99);
    return `| ${label} | ${docs} | ${fmt(took)} | ${receiver.copies} | ${receiver.unverified} | ${fmt(percentile(values, 50), 0)} | ${fmt(p99, 0)} | ${fmt(Math.max(...values), 0)} | ${p99 <= GOAL_P99_MS ? 'met' : 'missed'} |`;
  } finally {
    if (worker) await stopProcess(worker);
    await server?.stop();
    await new Promise<void>((resolve) => receiver.server.close(() => resolve()));
  }
}

export const run: Benchmark = async (options?: BenchOptions): Promise<BenchSection> => {
  const docs = options?.quick ? 200 : 1_000;
  const title = 'Webhooks: delivery latency from ready to the receiver’s 2xx';
  const loadBefore = os
    .loadavg()
    .map((n) => fmt(n, 2))
    .join(' / ');
  const rows = [await measure('embedded (`serve`)', docs, {}, false)];
  const databaseUrl = process.env.DATABASE_URL;
  const redisUrl = process.env.REDIS_URL;
  let scaleOutNote = '- Scale-out: not measured (DATABASE_URL and REDIS_URL not set).';
  if (databaseUrl && redisUrl) {
    const schema = `bench_wh_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
    try {
      rows.push(
        await measure(
          'scale-out (`serve --no-worker` + 1 `worker`, PostgreSQL + BullMQ)',
          docs,
          { DATABASE_URL: databaseUrl, REDIS_URL: redisUrl, DATABASE_SCHEMA: schema, REDIS_PREFIX: schema },
          true,
        ),
      );
      scaleOutNote =
        '- Scale-out: both processes dispatch from the PostgreSQL outbox (claims take turns under an advisory lock); a new message wakes both through LISTEN/NOTIFY.';
    } finally {
      await dropPostgresSchema(databaseUrl, schema);
    }
  }
  return {
    title,
    lines: [
      `${docs} text documents (20–40 sentences each) posted 50 per POST /v1/ingest as fast as accepted, to one endpoint subscribed to \`document.ready\` on a loopback receiver (URL_FETCH_ALLOW=127.0.0.1:<port>) that verifies each signature with \`standardwebhooks\` and answers 204. Latency = the event's \`data.updated_at\` (written with the outbox row) → the receiver answering, both on this machine's clock. Default WEBHOOK_* settings (poll 200 ms, 16 in flight per process).`,
      '',
      '| deployment | documents | ingest → last event, s | copies received | unverified | p50 ms | p99 ms | max ms | goal p99 ≤ 1 s |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---|',
      ...rows,
      '',
      scaleOutNote,
      `- Machine load (1 / 5 / 15-minute load average, ${os.cpus().length} CPUs, shared with other work): ${loadBefore} before, ${os
        .loadavg()
        .map((n) => fmt(n, 2))
        .join(' / ')} after.`,
    ],
  };
};
