// Ingest with the openai embedding provider vs keyword-only, embedded: the real server (child
// process, fresh DATA_DIR) receives the same documents 50 per POST, once with EMBEDDINGS=none
// and once with EMBEDDINGS=openai against a local OpenAI-protocol server that answers each batch
// after 5 ms. Timed from the first POST to the poll that sees the last document `ready` (keyword
// searchable) and, with the provider, to the poll that sees the last document's vectors `ready`.
// Goal: documents/s with the provider ≥ 0.8× keyword-only. Rounds of interleaved runs, medians;
// the provider in three setups (see `run`), since its own CPU shares the server's cores here.
import { loadavg } from 'node:os';
import { EmbeddingsServer } from '../test/helpers/embeddings-server.js';
import { corpusDocuments } from './corpus.js';
import { type Benchmark, type BenchSection, fmt } from './lib.js';
import { callApi, type IngestAck, startDocindex, waitUntilDone } from './server.js';

const DOCS_PER_REQUEST = 50;
const GOAL_RATIO = 0.8;

interface Run {
  readyMs: number;
  vectorsMs: number | null;
  chunks: number;
}

async function ingestOnce(texts: string[], env: Record<string, string>, withVectors: boolean): Promise<Run> {
  const server = await startDocindex({ env });
  try {
    const ids: string[] = [];
    const start = performance.now();
    const posting = (async () => {
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
    })();
    const [, { done, finishedAt }] = await Promise.all([
      posting,
      waitUntilDone(server, () => ids, { expected: texts.length, timeoutMs: 900_000 }),
    ]);
    let vectorsMs: number | null = null;
    if (withVectors) {
      const deadline = performance.now() + 900_000;
      const waiting = new Set(ids);
      while (waiting.size > 0 && performance.now() < deadline) {
        const batch = [...waiting].slice(0, 100);
        const { documents } = await callApi<{
          documents: Array<{ id: string; vectors: { status: string } }>;
        }>(server, 'GET', `/v1/documents?limit=100&ids=${batch.join(',')}`);
        for (const d of documents) if (d.vectors.status === 'ready') waiting.delete(d.id);
        if (waiting.size > 0) await new Promise((r) => setTimeout(r, 50));
      }
      if (waiting.size > 0) throw new Error(`${waiting.size} documents' vectors never turned ready`);
      vectorsMs = performance.now() - start;
    }
    return {
      readyMs: finishedAt - start,
      vectorsMs,
      chunks: [...done.values()].reduce((n, d) => n + (d.chunk_count ?? 0), 0),
    };
  } catch (error) {
    throw new Error(
      `${error instanceof Error ? error.message : error}\nserver log: ${server.stderr().slice(-2000)}`,
    );
  } finally {
    await server.stop();
  }
}

const ROUNDS = 3;

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

interface ProviderSetup {
  label: string;
  server: EmbeddingsServer;
}

export const run: Benchmark = async (options) => {
  const quick = options?.quick ?? false;
  const count = quick ? 100 : 500;
  const rounds = quick ? 1 : ROUNDS;
  const texts = corpusDocuments(count, 10_000);
  // The provider stands for a remote service, yet runs in this process, on the server's 2 cores.
  // The first setup is a heavy provider (a bag of words: one SHA-256 per word of every chunk,
  // integer vectors sent as JSON numbers); the others draw each vector from one digest of the text
  // (real-looking floats), sent as numbers or, as docindex asks, base64.
  const providers: ProviderSetup[] = [
    {
      label: 'bag-of-words provider, JSON numbers',
      server: new EmbeddingsServer({ dimensions: 384, delayMs: 5, encodings: 'base64-ignored' }),
    },
    {
      label: 'light provider, JSON numbers',
      server: new EmbeddingsServer({
        dimensions: 384,
        delayMs: 5,
        vectors: 'digest',
        encodings: 'base64-ignored',
      }),
    },
    {
      label: 'light provider, base64',
      server: new EmbeddingsServer({ dimensions: 384, delayMs: 5, vectors: 'digest' }),
    },
  ];
  for (const p of providers) await p.server.start();
  const loadBefore = loadavg();
  try {
    // Rounds run every setup one after the other, so a change in the machine's load falls on all
    // of them alike; each round gives its own ratios to the keyword-only run of that round.
    const keyword: Run[] = [];
    const withProvider: Run[][] = providers.map(() => []);
    const cpuMs: number[][] = providers.map(() => []);
    for (let round = 0; round < rounds; round++) {
      keyword.push(await ingestOnce(texts, { EMBEDDINGS: 'none' }, false));
      for (const [i, p] of providers.entries()) {
        const cpu = process.cpuUsage();
        withProvider[i]!.push(
          await ingestOnce(
            texts,
            { EMBEDDINGS: 'openai', EMBEDDINGS_URL: p.server.url, EMBEDDINGS_MODEL: 'bench-embedding' },
            true,
          ),
        );
        const used = process.cpuUsage(cpu);
        cpuMs[i]!.push((used.user + used.system) / 1000);
      }
    }
    const loadAfter = loadavg();
    const rate = (ms: number) => count / (ms / 1000);
    const seconds = (runs: number[]) => runs.map((ms) => fmt(ms / 1000, 2)).join(', ');
    const load = (l: number[]) => l.map((x) => fmt(x, 2)).join(' / ');
    const keywordMs = keyword.map((r) => r.readyMs);
    const lines: string[] = [
      `${count} documents of 10,000 characters (${keyword[0]!.chunks} chunks), 50 per POST; provider: a local OpenAI-protocol server in the bench process, 384-d, 5 ms per batch. ${rounds} round(s), each on fresh servers: keyword only, then each provider setup; medians, and each round's ratio to its own keyword-only run.`,
      '',
      '| run | to last `ready`, median (runs) | documents/s | to last `vectors.ready`, median (runs) | documents/s | ready ÷ keyword only (rounds) | vectors ready ÷ keyword only (rounds) | bench process CPU, median |',
      '|---|---|---|---|---|---|---|---|',
      `| keyword only (EMBEDDINGS=none) | ${fmt(median(keywordMs) / 1000, 2)} s (${seconds(keywordMs)}) | ${fmt(rate(median(keywordMs)))} | — | — | — | — | — |`,
    ];
    const verdicts: string[] = [];
    for (const [i, p] of providers.entries()) {
      const runs = withProvider[i]!;
      const ready = runs.map((r) => r.readyMs);
      const vectors = runs.map((r) => r.vectorsMs!);
      const readyRatios = keywordMs.map((k, round) => k / ready[round]!);
      const vectorRatios = keywordMs.map((k, round) => k / vectors[round]!);
      const ratios = (r: number[]) => `**${fmt(median(r), 2)}×** (${r.map((x) => fmt(x, 2)).join(', ')})`;
      lines.push(
        `| EMBEDDINGS=openai, ${p.label} | ${fmt(median(ready) / 1000, 2)} s (${seconds(ready)}) | ${fmt(rate(median(ready)))} | ${fmt(median(vectors) / 1000, 2)} s (${seconds(vectors)}) | ${fmt(rate(median(vectors)))} | ${ratios(readyRatios)} | ${ratios(vectorRatios)} | ${fmt(median(cpuMs[i]!) / 1000, 2)} s |`,
      );
      if (i === providers.length - 1) {
        const r = median(readyRatios);
        const v = median(vectorRatios);
        verdicts.push(
          `- Goal (ingest with embeddings), ${p.label}: keyword-searchable ${fmt(r, 2)}× keyword-only documents/s (goal ≥ ${GOAL_RATIO}×: ${r >= GOAL_RATIO ? 'met' : 'missed'}); vectors ready ${fmt(v, 2)}× (${v >= GOAL_RATIO ? 'met' : 'missed'}).`,
        );
      }
    }
    lines.push(
      '',
      ...verdicts,
      "- Bench process CPU: the provider's work (and the client's polling) during a run, on the same 2 cores as the server measured.",
      `- Machine load (1 / 5 / 15-minute average, 2 CPUs shared with other work): ${load(loadBefore)} before, ${load(loadAfter)} after.`,
    );
    return {
      title: 'Ingest with the openai embedding provider vs keyword only',
      lines,
    } satisfies BenchSection;
  } finally {
    for (const p of providers) await p.server.stop();
  }
};
