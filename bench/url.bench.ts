// URL download start latency: a pre-signed URL may live only a minute, so the download must start
// within seconds of the 202 even when the workers have a long backlog. The real server gets 1,000
// PDF uploads first, then 50 URL ingests spaced out; a local HTTP server on 127.0.0.1 (allowed
// with URL_FETCH_ALLOW) records when each URL's request arrives. Latency = 202 received → request
// arrived, both on this process's clock. Goal: p99 ≤ 2 s.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type Benchmark,
  type BenchOptions,
  type BenchSection,
  fmt,
  percentile,
  projectRoot,
  sleep,
} from './lib.js';
import { type DocindexServer, documentStatuses, type IngestAck, startDocindex } from './server.js';

const PDF_NAME = 'pdflatex-4-pages.pdf';
const UPLOAD_CONCURRENCY = 8;
const URL_SPACING_MS = 100;
const GOAL_P99_MS = 2_000;

/** A loopback server standing in for object storage: serves the PDF and notes arrival times. */
async function startOrigin(
  pdf: Buffer,
): Promise<{ server: Server; port: number; arrivals: Map<string, number> }> {
  const arrivals = new Map<string, number>();
  const server = createServer((req, res) => {
    const at = performance.now();
    const name = (req.url ?? '').split('?')[0]!;
    if (!arrivals.has(name)) arrivals.set(name, at);
    res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': pdf.length });
    res.end(pdf);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, arrivals };
}

async function uploadPdf(server: DocindexServer, pdf: Buffer, n: number): Promise<string> {
  const form = new FormData();
  form.append('file', new Blob([pdf], { type: 'application/pdf' }), `queued-${n}.pdf`);
  const res = await fetch(`${server.baseUrl}/v1/ingest/file`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.apiKey}` },
    body: form,
  });
  const text = await res.text();
  if (res.status !== 202)
    throw new Error(`POST /v1/ingest/file answered ${res.status}: ${text.slice(0, 300)}`);
  return (JSON.parse(text) as IngestAck).document_ids[0]!;
}

/** How many of `ids` are not yet ready or failed. */
async function backlog(server: DocindexServer, ids: string[]): Promise<number> {
  const docs = await documentStatuses(server, ids);
  return docs.filter((d) => d.status === 'queued' || d.status === 'processing').length;
}

export const run: Benchmark = async (options?: BenchOptions): Promise<BenchSection> => {
  const quick = options?.quick ?? false;
  const queued = quick ? 200 : 1_000;
  const urls = quick ? 10 : 50;
  const waitMs = quick ? 60_000 : 180_000;
  const title = 'URL ingest: download start latency behind a PDF backlog';
  const pdf = readFileSync(path.resolve(projectRoot(), '../shared/corpus/pdf', PDF_NAME));

  const origin = await startOrigin(pdf);
  const server = await startDocindex({ env: { URL_FETCH_ALLOW: `127.0.0.1:${origin.port}` } });
  try {
    const uploadStart = performance.now();
    const pdfIds: string[] = [];
    let next = 0;
    const uploader = async () => {
      while (next < queued) pdfIds.push(await uploadPdf(server, pdf, next++));
    };
    await Promise.all(Array.from({ length: UPLOAD_CONCURRENCY }, uploader));
    const uploadMs = performance.now() - uploadStart;
    const backlogAtFirst = await backlog(server, pdfIds);

    const acks = new Map<string, { id: string; at: number }>();
    for (let i = 0; i < urls; i++) {
      const name = `/presigned/doc-${i}.pdf`;
      const res = await fetch(`${server.baseUrl}/v1/ingest/url`, {
        method: 'POST',
        headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url: `http://127.0.0.1:${origin.port}${name}?X-Amz-Signature=bench${i}` }),
      });
      const at = performance.now();
      const text = await res.text();
      if (res.status !== 202)
        throw new Error(`POST /v1/ingest/url answered ${res.status}: ${text.slice(0, 300)}`);
      acks.set(name, { id: (JSON.parse(text) as IngestAck).document_ids[0]!, at });
      await sleep(URL_SPACING_MS);
    }
    const backlogAtLast = await backlog(server, pdfIds);

    const deadline = performance.now() + waitMs;
    while (origin.arrivals.size < urls && performance.now() < deadline) await sleep(50);

    const latencies = [...acks].map(([name, ack]) => {
      const arrived = origin.arrivals.get(name);
      return arrived === undefined ? Number.POSITIVE_INFINITY : arrived - ack.at;
    });
    const missing = latencies.filter((l) => !Number.isFinite(l)).length;
    const show = (ms: number) =>
      Number.isFinite(ms) ? fmt(ms, 0) : `> ${fmt(waitMs / 1000, 0)} s (never arrived)`;
    const p50 = percentile(latencies, 50);
    const p99 = percentile(latencies, 99);
    const lines = [
      `Real server (child process, embedded, default WORKER_CONCURRENCY / DOWNLOAD_CONCURRENCY), \`${PDF_NAME}\` (${pdf.length.toLocaleString('en-US')} bytes, 4 pages) uploaded ${queued.toLocaleString('en-US')} times with POST /v1/ingest/file (${UPLOAD_CONCURRENCY} in flight, ${fmt(uploadMs / 1000, 1)} s), then ${urls} POST /v1/ingest/url one every ${URL_SPACING_MS} ms to a loopback origin (URL_FETCH_ALLOW=127.0.0.1:<port>). Latency = 202 received by the client → the origin sees the GET.`,
      '',
      '| URL ingests | PDFs not yet done at first / last URL | arrived | p50 ms | p99 ms | max ms |',
      '|---:|---:|---:|---:|---:|---:|',
      `| ${urls} | ${backlogAtFirst} / ${backlogAtLast} | ${urls - missing} | ${show(p50)} | ${show(p99)} | ${show(Math.max(...latencies))} |`,
      '',
    ];
    if (missing > 0) {
      const statuses = await documentStatuses(
        server,
        [...acks.values()].map((a) => a.id),
      );
      const byState = new Map<string, number>();
      for (const d of statuses) {
        const key = d.error ? `${d.status} (${d.error.code}: ${d.error.message})` : d.status;
        byState.set(key, (byState.get(key) ?? 0) + 1);
      }
      lines.push(
        `- ${missing} URL(s) never reached the origin within ${fmt(waitMs / 1000, 0)} s; their documents: ${[...byState].map(([k, n]) => `${n} × ${k}`).join('; ')}.`,
      );
    }
    lines.push(
      `- Goal: p99 ≤ ${fmt(GOAL_P99_MS / 1000, 0)} s from 202 to download start: **${show(p99)}${Number.isFinite(p99) ? ' ms' : ''}**, ${p99 <= GOAL_P99_MS ? 'met' : 'NOT met'}.`,
    );
    return { title, lines };
  } catch (error) {
    throw new Error(
      `${error instanceof Error ? error.message : error}\nserver log: ${server.stderr().slice(-1500)}`,
    );
  } finally {
    await server.stop();
    const closed = new Promise<void>((resolve) => origin.server.close(() => resolve()));
    origin.server.closeAllConnections();
    await closed;
  }
};

const thisFile = fileURLToPath(import.meta.url);
if (process.argv.slice(1).some((arg) => path.resolve(arg) === thisFile)) {
  const section = await run({ quick: process.argv.includes('--quick') });
  console.log(`## ${section.title}\n\n${section.lines.join('\n')}`);
}
