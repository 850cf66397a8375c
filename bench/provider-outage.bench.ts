// Query latency with a dead embedding provider, and the cost of reranking, embedded: the real
// server (child process, fresh DATA_DIR) holds the same corpus in every setup. The embedding
// provider is dead in two ways: a port on 127.0.0.1 that accepts connections and never answers,
// and one that refuses them. Warm-up queries (hybrid, each new) run until the provider's circuit
// breaker opens (PROVIDER_BREAKER_FAILURES consecutive failures, each waiting EMBEDDINGS_TIMEOUT_MS
// at most); then each query is asked twice in a row, `mode: keyword` and hybrid (the default, which
// falls back to its keyword list, `degraded`), alternating which goes first. p95 of each and of
// the paired difference. Goal: hybrid p95 ≤ keyword p95 + 20 ms while the provider is dead.
// Reranking: the same pairs with RERANK=http against a loopback rerank server (a cheap scorer in
// this process), `rerank: false` vs the default (50 candidates reranked).
import { createServer, type Server, type Socket } from 'node:net';
import { loadavg } from 'node:os';
import { RerankServer } from '../test/helpers/rerank-server.js';
import { corpusDocuments } from './corpus.js';
import { type Benchmark, type BenchSection, fmt, percentile } from './lib.js';
import { callApi, type DocindexServer, type IngestAck, startDocindex, waitUntilDone } from './server.js';

const GOAL_MS = 20;
const DOCS_PER_REQUEST = 50;
const BREAKER_FAILURES = 5;
const EMBEDDINGS_TIMEOUT_MS = 2_000;
/** PROVIDER_BREAKER_COOLDOWN_MS's default, in seconds. */
const COOL_DOWN_S = 30;

interface QueryAnswer {
  degraded: boolean;
  degraded_reasons: string[];
  results: unknown[];
}

/** A port that accepts connections and never answers; counts the connections it got. */
async function silentPort(): Promise<{ url: string; connections: () => number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server: Server = createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    connections: () => connections,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A port nothing listens on: bound once, then closed, so connections to it are refused. */
async function refusingPort(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/v1`;
}

async function ingest(server: DocindexServer, texts: string[]): Promise<void> {
  const ids: string[] = [];
  for (let i = 0; i < texts.length; i += DOCS_PER_REQUEST) {
    const ack = await callApi<IngestAck>(
      server,
      'POST',
      '/v1/ingest',
      { documents: texts.slice(i, i + DOCS_PER_REQUEST).map((text) => ({ text })) },
      202,
    );
    ids.push(...ack.document_ids);
  }
  await waitUntilDone(server, () => ids, { expected: texts.length, timeoutMs: 600_000 });
}

async function timedQuery(server: DocindexServer, body: Record<string, unknown>) {
  const start = performance.now();
  const answer = await callApi<QueryAnswer>(server, 'POST', '/v1/query', body);
  return { ms: performance.now() - start, answer };
}

/** Queries of 1–3 words taken from the corpus, each distinct (so no query vector is cached). */
function queriesFrom(texts: string[], count: number): string[] {
  const words = [
    ...new Set(
      texts
        .join(' ')
        .toLowerCase()
        .match(/[a-z]{4,}/g) ?? [],
    ),
  ];
  const queries: string[] = [];
  for (let i = 0; queries.length < count; i++) {
    const n = 1 + (i % 3);
    const picked = Array.from({ length: n }, (_, k) => words[(i * 7919 + k * 104_729) % words.length]!);
    queries.push(`${picked.join(' ')} ${i}`);
  }
  return queries;
}

interface Paired {
  first: number[];
  second: number[];
  diff: number[];
  degraded: number;
}

/** Each query as `a` and as `b`, back to back, alternating which goes first. */
async function paired(
  server: DocindexServer,
  queries: string[],
  a: Record<string, unknown>,
  b: Record<string, unknown>,
): Promise<Paired> {
  const out: Paired = { first: [], second: [], diff: [], degraded: 0 };
  for (const [i, query] of queries.entries()) {
    const order = i % 2 === 0 ? ([a, b] as const) : ([b, a] as const);
    const runs = [];
    for (const body of order) runs.push(await timedQuery(server, { query, top_k: 10, ...body }));
    const [ra, rb] = i % 2 === 0 ? runs : [runs[1]!, runs[0]!];
    out.first.push(ra!.ms);
    out.second.push(rb!.ms);
    out.diff.push(rb!.ms - ra!.ms);
    if (rb!.answer.degraded) out.degraded++;
  }
  return out;
}

const row = (label: string, setup: string, values: number[], extra = '') =>
  `| ${setup} | ${label} | ${values.length} | ${fmt(percentile(values, 50), 2)} | ${fmt(percentile(values, 95), 2)} | ${fmt(Math.max(...values), 2)} | ${extra} |`;

export const run: Benchmark = async (options) => {
  const quick = options?.quick ?? false;
  const texts = corpusDocuments(quick ? 200 : 2_000, 2_000);
  const count = quick ? 40 : 300;
  // Each outage takes its warm-up queries and `count` more, all distinct.
  const queries = queriesFrom(texts, 2 * (count + BREAKER_FAILURES * 4));
  const lines: string[] = [];
  const notes: string[] = [];
  const table = [
    '| setup | path | queries | p50 ms | p95 ms | max ms | note |',
    '|---|---|---:|---:|---:|---:|---|',
  ];
  const goals: string[] = [];
  const loadBefore = loadavg();

  const silent = await silentPort();
  const outages: Array<{ label: string; url: string }> = [
    { label: 'provider accepts and never answers', url: silent.url },
    { label: 'provider refuses connections', url: await refusingPort() },
  ];
  let next = 0;
  try {
    for (const outage of outages) {
      const server = await startDocindex({
        env: {
          EMBEDDINGS: 'openai',
          EMBEDDINGS_URL: outage.url,
          EMBEDDINGS_MODEL: 'bench-embedding',
          EMBEDDINGS_TIMEOUT_MS: String(EMBEDDINGS_TIMEOUT_MS),
          PROVIDER_BREAKER_FAILURES: String(BREAKER_FAILURES),
        },
      });
      try {
        await ingest(server, texts);
        // Warm-up: new hybrid queries, one at a time, until one answers at once (the breaker open).
        const warm: number[] = [];
        for (let i = 0; i < BREAKER_FAILURES * 4; i++) {
          const { ms, answer } = await timedQuery(server, { query: queries[next++]! });
          if (!answer.degraded) throw new Error('a hybrid query with a dead provider was not degraded');
          warm.push(ms);
          if (warm.length > BREAKER_FAILURES && ms < 100) break;
        }
        const ready = await (await fetch(`${server.baseUrl}/readyz`)).json();
        const state = (ready as { providers?: { embeddings?: { state?: string } } }).providers?.embeddings
          ?.state;
        notes.push(
          `${outage.label}: ${warm.length} warm-up queries took ${warm.map((ms) => fmt(ms, 0)).join(', ')} ms (the first ${BREAKER_FAILURES} wait for the provider, at most EMBEDDINGS_TIMEOUT_MS = ${EMBEDDINGS_TIMEOUT_MS} ms, and open the breaker); breaker then \`${state}\`.`,
        );
        const measured = queries.slice(next, next + count);
        next += count;
        const start = performance.now();
        const result = await paired(server, measured, { mode: 'keyword' }, {});
        const seconds = (performance.now() - start) / 1000;
        table.push(row('keyword', outage.label, result.first));
        table.push(
          row(
            'hybrid (degraded)',
            outage.label,
            result.second,
            `${result.degraded} of ${measured.length} degraded`,
          ),
        );
        table.push(row('**hybrid − keyword** (paired)', outage.label, result.diff));
        const extra = percentile(result.second, 95) - percentile(result.first, 95);
        goals.push(
          `${outage.label}: hybrid p95 − keyword p95 = **${fmt(extra, 2)} ms** (goal ≤ ${GOAL_MS} ms: ${extra <= GOAL_MS ? 'met' : 'missed'}); measured over ${fmt(seconds, 1)} s, shorter than the ${COOL_DOWN_S} s cool-down, so no probe fell inside.`,
        );
      } finally {
        await server.stop();
      }
    }
  } finally {
    await silent.close();
  }

  // Reranking overhead: a loopback rerank server scoring by word overlap.
  const reranker = await new RerankServer((query, text) => {
    const words = new Set(query.toLowerCase().split(/\W+/));
    return text
      .toLowerCase()
      .split(/\W+/)
      .filter((w) => words.has(w)).length;
  }).start();
  try {
    const server = await startDocindex({ env: { RERANK: 'http', RERANK_URL: reranker.url } });
    try {
      await ingest(server, texts);
      const measured = queriesFrom(texts, count).map((q) => q.replace(/ \d+$/, ''));
      const before = reranker.requests.length;
      const result = await paired(server, measured, { rerank: false }, {});
      const sent = reranker.requests.slice(before);
      const perQuery = sent.reduce((n, r) => n + r.documents.length, 0) / count;
      table.push(row('keyword, rerank: false', 'loopback rerank server', result.first));
      table.push(
        row(
          'keyword, reranked (default)',
          'loopback rerank server',
          result.second,
          `${fmt(perQuery, 1)} candidates a query`,
        ),
      );
      table.push(row('**reranked − not reranked** (paired)', 'loopback rerank server', result.diff));
    } finally {
      await server.stop();
    }
  } finally {
    await reranker.stop();
  }
  const loadAfter = loadavg();
  const load = (l: number[]) => l.map((x) => fmt(x, 2)).join(' / ');

  lines.push(
    `${texts.length.toLocaleString('en-US')} documents of ~2,000 characters, one org, top_k 10, over HTTP to the real server (child process). Every query is new (no cached query vector). Embedding provider dead: EMBEDDINGS=openai at a loopback port, EMBEDDINGS_TIMEOUT_MS=${EMBEDDINGS_TIMEOUT_MS}, PROVIDER_BREAKER_FAILURES=${BREAKER_FAILURES}, default cool-down (${COOL_DOWN_S} s). Reranking: RERANK=http at a loopback rerank server in the bench process, RERANK_BATCH_SIZE 32 (two requests a query at once), default 50 candidates.`,
    '',
    ...table,
    '',
    ...notes.map((n) => `- ${n}`),
    ...goals.map((g) => `- Goal: ${g}`),
    `- Load average (1 / 5 / 15 min): ${load(loadBefore)} before, ${load(loadAfter)} after (2 cores, shared).`,
  );
  return {
    title: 'Provider outage: hybrid vs keyword latency with the embedding provider dead; rerank overhead',
    lines,
  } satisfies BenchSection;
};
