// What tracing costs: section 2's JSON ingest and section 4's BM25 queries (1–4 and 12–30 words,
// through the HTTP layer) with OTEL_EXPORTER_OTLP_ENDPOINT pointing at a loopback OTLP receiver
// in this process, against the same workloads with tracing off, in the same run. Ingest runs
// alternate off/on (on/off in the next round) on fresh servers, each timing section 2's two
// passes (the first after start, and the next with the server's code compiled and caches
// filled); the queries go to three servers holding the same corpus (off, on, and on with the
// sampler dropping every trace, which leaves the context propagation and drops the spans), each
// query to all three in rotated order, with a new trio each round. Goal: with tracing on,
// ≥ 0.95× the ingest throughput and query throughput (1 / median latency) of off.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ingestCorpus, ingestOnce, ingestTexts, PASS_LABEL, PASSES, type Pass } from './ingest.bench.js';
import {
  type Benchmark,
  type BenchOptions,
  type BenchSection,
  fmt,
  fmtSpread,
  median,
  medianSpread,
  percentile,
  seededRandom,
} from './lib.js';
import { makeLongQueries, makeQueries } from './query.bench.js';
import {
  callApi,
  cpuMilliseconds,
  type DocindexServer,
  type IngestAck,
  startDocindex,
  waitUntilDone,
} from './server.js';

const GOAL_RATIO = 0.95;
const DOCS_PER_REQUEST = 50;
const TOP_K = 10;

const SPAN_ID = Buffer.from('"spanId"');

const onOff = () => ({ off: [] as number[], on: [] as number[] });

/** How many times `needle` occurs in `haystack`, without decoding it. */
function occurrences(haystack: Buffer, needle: Buffer): number {
  let count = 0;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length))
    count++;
  return count;
}

/**
 * A collector stand-in: accepts OTLP/HTTP JSON and counts the spans by their `"spanId"` keys in
 * the raw bytes, parsing nothing: it shares the machine's cores with the servers measured.
 */
class SpanSink {
  spans = 0;
  bytes = 0;
  private server: Server | null = null;

  async start(): Promise<string> {
    const server = createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (part: Buffer) => parts.push(part));
      req.on('end', () => {
        const body = Buffer.concat(parts);
        this.bytes += body.length;
        this.spans += occurrences(body, SPAN_ID);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

function sizes(quick: boolean) {
  // Many rounds: a single pair of ingest runs on a small machine can differ by more than the
  // goal's margin (bench/RESULTS.md, section 26's notes); the median of the paired ratios settles.
  return {
    rounds: quick ? 2 : 12,
    queryRounds: quick ? 1 : 3,
    queryDocs: quick ? 200 : 1_000,
    queries: quick ? 200 : 600,
  };
}

async function loadCorpus(server: DocindexServer, texts: string[]): Promise<void> {
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
  await waitUntilDone(server, () => ids, { expected: ids.length, timeoutMs: 600_000 });
}

async function timeQuery(server: DocindexServer, query: string): Promise<number> {
  const start = performance.now();
  await callApi(server, 'POST', '/v1/query', { query, top_k: TOP_K, mode: 'keyword' });
  return performance.now() - start;
}

/** The query servers: tracing off, on, and on with every trace dropped by the sampler. */
const QUERY_SERVERS = ['off', 'on', 'unsampled'] as const;
type QueryServer = (typeof QUERY_SERVERS)[number];
type QueryLatencies = Record<QueryServer, number[]>;

/** Each query to every server, the order rotated every query; latencies per server. */
async function rotatedQueries(
  servers: Record<QueryServer, DocindexServer>,
  queries: string[],
): Promise<QueryLatencies> {
  const result: QueryLatencies = { off: [], on: [], unsampled: [] };
  for (const [i, query] of queries.entries()) {
    for (let k = 0; k < QUERY_SERVERS.length; k++) {
      const which = QUERY_SERVERS[(i + k) % QUERY_SERVERS.length]!;
      result[which].push(await timeQuery(servers[which], query));
    }
  }
  return result;
}

function queryRow(label: string, l: QueryLatencies): string {
  const ratio = (which: QueryServer) => fmt(median(l.off) / median(l[which]), 2);
  const cells = (which: QueryServer) => `${fmt(median(l[which]), 2)} | ${fmt(percentile(l[which], 95), 2)}`;
  return `| ${label} | ${l.off.length} | ${cells('off')} | ${cells('on')} | ${cells('unsampled')} | ${ratio('on')}× | ${ratio('unsampled')}× |`;
}

export const run: Benchmark = async (options?: BenchOptions): Promise<BenchSection> => {
  const quick = options?.quick ?? false;
  const { rounds, queryRounds, queryDocs, queries } = sizes(quick);
  const sink = new SpanSink();
  const endpoint = await sink.start();
  const traced = { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint };
  try {
    // ---- section 2's ingest, off and on alternating ----
    const texts = ingestTexts(quick);
    const ingest = { first: onOff(), steady: onOff() };
    const ingestCpu = { first: onOff(), steady: onOff() };
    for (let round = 0; round < rounds; round++) {
      const order: Array<'off' | 'on'> = round % 2 === 0 ? ['off', 'on'] : ['on', 'off'];
      for (const which of order) {
        const result = await ingestOnce(texts, which === 'on' ? traced : {});
        for (const pass of PASSES) {
          const { failed, ms, cpuMs } = result[pass];
          if (failed > 0) throw new Error(`${failed} document(s) failed with tracing ${which}`);
          ingest[pass][which].push(ms);
          ingestCpu[pass][which].push(cpuMs);
        }
      }
    }
    const ingestSpans = sink.spans;
    const docsPerSecond = (pass: Pass, ms: number) => (texts[pass].length / ms) * 1000;
    // Each round's off and on ran back to back: their ratio cancels the machine's drift, which
    // the medians of all offs and all ons do not.
    const paired = (values: { off: number[]; on: number[] }) =>
      medianSpread(values.off.map((off, round) => off / values.on[round]!));
    const ingestRatio = (pass: Pass) => paired(ingest[pass]);
    const ingestCpuRatio = (pass: Pass) => paired(ingestCpu[pass]);
    const ratioCell = (spread: { median: number; min: number; max: number }) =>
      `${fmt(spread.median, 2)}× (${fmtSpread(spread, 2)})`;
    const ingestRows = PASSES.flatMap((pass) => [
      `| ingest, ${PASS_LABEL[pass]}, documents/s (median of ${rounds}) | ${fmt(docsPerSecond(pass, median(ingest[pass].off)))} | ${fmt(docsPerSecond(pass, median(ingest[pass].on)))} | ${ratioCell(ingestRatio(pass))} |`,
      `| ingest, ${PASS_LABEL[pass]}, server CPU s (median of ${rounds}) | ${fmt(median(ingestCpu[pass].off) / 1000, 2)} | ${fmt(median(ingestCpu[pass].on) / 1000, 2)} | ${ratioCell(ingestCpuRatio(pass))} |`,
    ]);
    const seconds = (values: number[]) => values.map((ms) => fmt(ms / 1000, 2)).join(', ');
    const runLines = PASSES.map(
      (pass) =>
        `- Ingest runs, ${PASS_LABEL[pass]} (s), off: ${seconds(ingest[pass].off)}; on: ${seconds(ingest[pass].on)}. Server CPU (s), off: ${seconds(ingestCpu[pass].off)}; on: ${seconds(ingestCpu[pass].on)}.`,
    );

    // ---- section 4's queries, on servers holding the same corpus ----
    // A new trio of servers each round: one process can run faster or slower than another of the
    // same build for as long as it lives, which a single trio would count as tracing's.
    const short: QueryLatencies = { off: [], on: [], unsampled: [] };
    const long: QueryLatencies = { off: [], on: [], unsampled: [] };
    const queryCpu: Record<QueryServer, number> = { off: 0, on: 0, unsampled: 0 };
    const corpus = ingestCorpus(quick).slice(0, queryDocs);
    const random = seededRandom(26);
    const perRound = Math.ceil(queries / queryRounds);
    for (let round = 0; round < queryRounds; round++) {
      const started = await Promise.all([
        startDocindex(),
        startDocindex({ env: traced }),
        startDocindex({ env: { ...traced, OTEL_TRACES_SAMPLER: 'always_off' } }),
      ]);
      const servers: Record<QueryServer, DocindexServer> = {
        off: started[0],
        on: started[1],
        unsampled: started[2],
      };
      try {
        for (const server of started) await loadCorpus(server, corpus);
        // Warm every server (JIT, statement caches) before measuring.
        await rotatedQueries(servers, makeQueries(20, random));
        const cpuBefore = QUERY_SERVERS.map((which) => cpuMilliseconds(servers[which].pid));
        const shortRound = await rotatedQueries(servers, makeQueries(perRound, random));
        const longRound = await rotatedQueries(servers, makeLongQueries(perRound, random));
        QUERY_SERVERS.forEach((which, i) => {
          queryCpu[which] += cpuMilliseconds(servers[which].pid) - cpuBefore[i]!;
          short[which].push(...shortRound[which]);
          long[which].push(...longRound[which]);
        });
      } finally {
        await Promise.all(started.map((server) => server.stop()));
      }
    }
    const queryCount = short.off.length + long.off.length;
    const queryRatio = Math.min(median(short.off) / median(short.on), median(long.off) / median(long.on));
    const met = (ratio: number) => (ratio >= GOAL_RATIO ? 'met' : 'NOT met');
    return {
      title: 'Tracing on vs off: ingest (section 2) and BM25 queries (section 4)',
      lines: [
        `Tracing on = \`OTEL_EXPORTER_OTLP_ENDPOINT\` set to an OTLP/HTTP receiver on 127.0.0.1 in the bench process (every span exported, the default sampler and batch settings; the receiver counts spans in the raw bytes and parses nothing), off = unset; same server build, same run. Ingest: section 2's corpus (${texts.first.length.toLocaleString('en-US')} documents of ~10 KB a pass, ${DOCS_PER_REQUEST} per POST, 4 POSTs in flight) on a fresh server per run, timed as section 2 times it: its first pass after start, then its next (the corpus's next documents, the server's code compiled and its caches filled, as the queries below are timed after a warm-up), ${rounds} round(s) of off and on, the order swapped each round; the medians of each, and the median of each round's off ÷ on. Queries: three servers each holding the first ${queryDocs.toLocaleString('en-US')} of those documents (off; on; on with \`OTEL_TRACES_SAMPLER=always_off\`, "unsampled": the trace context is carried but no span recorded or sent), ${short.off.length} keyword queries of 1–4 words and ${long.off.length} of 12–30 words (section 4's generators) in ${queryRounds} round(s), each round on three new servers, top_k ${TOP_K}, through HTTP, each query sent to the three in rotated order.`,
        '',
        "| workload | off | on | on ÷ off throughput: ingest, the median of the rounds' paired ratios (min–max) |",
        '|---|---:|---:|---:|',
        ...ingestRows,
        `| queries, server CPU ms per query (all ${queryCount}; unsampled ${fmt(queryCpu.unsampled / queryCount, 2)}) | ${fmt(queryCpu.off / queryCount, 2)} | ${fmt(queryCpu.on / queryCount, 2)} | ${fmt(queryCpu.off / queryCpu.on, 2)}× |`,
        '',
        '| queries | count | off p50 ms | off p95 ms | on p50 ms | on p95 ms | unsampled p50 ms | unsampled p95 ms | on ÷ off throughput (p50) | unsampled ÷ off |',
        '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
        queryRow('1–4 words', short),
        queryRow('12–30 words', long),
        '',
        ...runLines,
        `- CPU throughput is work per CPU second (off ÷ on of the CPU each used): it moves less with the machine's load than wall time, which other processes share.`,
        `- Load average at the end: ${os
          .loadavg()
          .map((l) => fmt(l, 2))
          .join(', ')} (${os.cpus().length} cores).`,
        `- Spans received: ${ingestSpans.toLocaleString('en-US')} from the traced ingest runs, ${(sink.spans - ingestSpans).toLocaleString('en-US')} from the traced query server (${fmt(sink.bytes / 1e6, 1)} MB of OTLP JSON in all).`,
        `- Goal: with tracing on, ≥ ${fmt(GOAL_RATIO, 2)}× the throughput of off: ingest, as section 2's goal is judged (the next pass, documents/s), **${fmt(ingestRatio('steady').median, 2)}×**, ${met(ingestRatio('steady').median)}, and by the server's CPU **${fmt(ingestCpuRatio('steady').median, 2)}×**, ${met(ingestCpuRatio('steady').median)}; the first pass after start ${fmt(ingestRatio('first').median, 2)}× (documents/s), ${fmt(ingestCpuRatio('first').median, 2)}× (CPU); queries (the lower of the two, p50) **${fmt(queryRatio, 2)}×**, ${met(queryRatio)}, **${fmt(queryCpu.off / queryCpu.on, 2)}×** (CPU), ${met(queryCpu.off / queryCpu.on)}.`,
      ],
    };
  } finally {
    await sink.stop();
  }
};

const thisFile = fileURLToPath(import.meta.url);
if (process.argv.slice(1).some((arg) => path.resolve(arg) === thisFile)) {
  const section = await run({ quick: process.argv.includes('--quick') });
  console.log(`## ${section.title}\n\n${section.lines.join('\n')}`);
}
