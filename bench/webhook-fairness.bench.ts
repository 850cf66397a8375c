// Webhook fairness: how long another org's event waits while one org's endpoints are slow and
// have a backlog. One `docindex serve` per run (default WEBHOOK_* settings: 16 deliveries in flight
// per process, a 10 s send timeout): the hostile org has 7 endpoints on a loopback receiver that
// answers only after 40 s, and 105 test messages queued (15 per endpoint); once the dispatcher has
// had a second to fill its slots, the other org queues one test message to a receiver that answers
// at once, and the delay to that receiver's answer is measured. Goal: a few seconds.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { type Benchmark, type BenchOptions, type BenchSection, fmt, sleep } from './lib.js';
import { type DocindexServer, startDocindex } from './server.js';

const SLOW_ENDPOINTS = 7;
const TESTS_PER_ENDPOINT = 15;
const SLOW_ANSWER_MS = 40_000;
const ADMIN_TOKEN = 'bench-admin-token-webhook-fairness';
const GOAL_MS = 5_000;

interface Receiver {
  server: Server;
  port: number;
  /** Requests received so far, and those not answered yet. */
  received: number;
  holding: Set<ServerResponse>;
  firstAt: number | null;
}

async function startReceiver(delayMs: number): Promise<Receiver> {
  const receiver: Receiver = {
    server: null as unknown as Server,
    port: 0,
    received: 0,
    holding: new Set(),
    firstAt: null,
  };
  receiver.server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', () => {
      receiver.received += 1;
      receiver.firstAt ??= performance.now();
      if (delayMs === 0) {
        res.writeHead(204).end();
        return;
      }
      receiver.holding.add(res);
      const timer = setTimeout(() => res.writeHead(204).end(), delayMs);
      res.once('close', () => {
        clearTimeout(timer);
        receiver.holding.delete(res);
      });
    });
  });
  await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
  receiver.port = (receiver.server.address() as AddressInfo).port;
  return receiver;
}

async function stopReceiver(receiver: Receiver): Promise<void> {
  for (const res of receiver.holding) res.destroy();
  receiver.server.closeAllConnections();
  await new Promise<void>((resolve) => receiver.server.close(() => resolve()));
}

async function call(server: DocindexServer, key: string, method: string, route: string, body?: unknown) {
  const res = await fetch(`${server.baseUrl}${route}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${route} answered ${res.status}: ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
}

/** One run: ms from the other org's POST …/test to its receiver's answer, and the slow requests held then. */
async function oneRun(): Promise<{ delayMs: number; slowHeld: number }> {
  const slow = await startReceiver(SLOW_ANSWER_MS);
  const fast = await startReceiver(0);
  let server: DocindexServer | null = null;
  try {
    server = await startDocindex({
      env: {
        URL_FETCH_ALLOW: `127.0.0.1:${slow.port},127.0.0.1:${fast.port}`,
        ADMIN_TOKEN,
      },
    });
    const other = await call(server, ADMIN_TOKEN, 'POST', '/admin/v1/orgs', { name: 'other' });
    const otherKey = other.api_key as string;
    for (let i = 0; i < SLOW_ENDPOINTS; i++) {
      const hook = await call(server, server.apiKey, 'POST', '/v1/webhooks', {
        url: `http://127.0.0.1:${slow.port}/slow/${i}`,
      });
      for (let n = 0; n < TESTS_PER_ENDPOINT; n++) {
        await call(server, server.apiKey, 'POST', `/v1/webhooks/${hook.id}/test`);
      }
    }
    await sleep(1_000);
    const hook = await call(server, otherKey, 'POST', '/v1/webhooks', {
      url: `http://127.0.0.1:${fast.port}/fast`,
    });
    const sent = performance.now();
    await call(server, otherKey, 'POST', `/v1/webhooks/${hook.id}/test`);
    const deadline = Date.now() + 300_000;
    while (fast.firstAt === null) {
      if (Date.now() > deadline) throw new Error("the other org's event did not arrive within 300 s");
      await sleep(20);
    }
    return { delayMs: fast.firstAt - sent, slowHeld: slow.holding.size };
  } finally {
    await stopReceiver(slow);
    await server?.stop();
    await stopReceiver(fast);
  }
}

export const run: Benchmark = async (options?: BenchOptions): Promise<BenchSection> => {
  const runs = options?.quick ? 1 : 3;
  const loadBefore = os
    .loadavg()
    .map((n) => fmt(n, 2))
    .join(' / ');
  const results: Array<{ delayMs: number; slowHeld: number }> = [];
  for (let i = 0; i < runs; i++) results.push(await oneRun());
  const delays = results.map((r) => r.delayMs).sort((a, b) => a - b);
  const median = delays[Math.floor(delays.length / 2)] ?? 0;
  return {
    title: "Webhooks: another org's event behind a hostile org's backlog",
    lines: [
      `One \`docindex serve\` per run, default WEBHOOK_* settings (16 deliveries in flight per process, 10 s send timeout, 4 per org, 2 per endpoint). The hostile org: ${SLOW_ENDPOINTS} endpoints on a loopback receiver answering after ${SLOW_ANSWER_MS / 1000} s, ${SLOW_ENDPOINTS * TESTS_PER_ENDPOINT} test messages queued (${TESTS_PER_ENDPOINT} each); one second later the other org queues one test message to a receiver answering at once. Delay = that POST → its receiver receiving it. ${runs} run(s), a fresh server each.`,
      '',
      "| runs | other org's delay, median ms | min ms | max ms | hostile requests held when it arrived | goal ≤ 5 s |",
      '|---:|---:|---:|---:|---|---|',
      `| ${runs} | ${fmt(median, 0)} | ${fmt(delays[0] ?? 0, 0)} | ${fmt(delays[delays.length - 1] ?? 0, 0)} | ${results.map((r) => r.slowHeld).join(', ')} | ${median <= GOAL_MS ? 'met' : 'missed'} |`,
      '',
      `- Machine load (1 / 5 / 15-minute load average, ${os.cpus().length} CPUs, shared with other work): ${loadBefore} before, ${os
        .loadavg()
        .map((n) => fmt(n, 2))
        .join(' / ')} after.`,
    ],
  };
};
