// Ingest with the openai embedding provider vs keyword-only, embedded: the real server (child
// process, fresh DATA_DIR) receives the same documents 50 per POST, once with EMBEDDINGS=none
// and once with EMBEDDINGS=openai against a local OpenAI-protocol server that answers each batch
// after 5 ms. Timed from the first POST to the poll that sees the last document `ready` (keyword
// searchable) and, with the provider, to the poll that sees the last document's vectors `ready`.
// Goal: documents/s with the provider ≥ 0.8× keyword-only.
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

export const run: Benchmark = async (options) => {
  const quick = options?.quick ?? false;
  const count = quick ? 100 : 500;
  const texts = corpusDocuments(count, 10_000);
  const provider = await new EmbeddingsServer({ dimensions: 384, delayMs: 5 }).start();
  try {
    const keyword = await ingestOnce(texts, { EMBEDDINGS: 'none' }, false);
    const embedded = await ingestOnce(
      texts,
      { EMBEDDINGS: 'openai', EMBEDDINGS_URL: provider.url, EMBEDDINGS_MODEL: 'bench-embedding' },
      true,
    );
    const rate = (ms: number) => count / (ms / 1000);
    const keywordRate = rate(keyword.readyMs);
    const readyRate = rate(embedded.readyMs);
    const vectorsRate = rate(embedded.vectorsMs!);
    const requests = provider.requests.length;
    const lines: string[] = [
      `${count} documents of 10,000 characters (${keyword.chunks} chunks), 50 per POST; provider: local OpenAI-protocol server, 384-d, 5 ms per batch (${requests} requests, ${provider.textsSeen} texts)`,
      '',
      '| run | to last `ready` | documents/s | to last `vectors.ready` | documents/s |',
      '|---|---|---|---|---|',
      `| keyword only (EMBEDDINGS=none) | ${fmt(keyword.readyMs / 1000, 2)} s | ${fmt(keywordRate)} | — | — |`,
      `| EMBEDDINGS=openai | ${fmt(embedded.readyMs / 1000, 2)} s | ${fmt(readyRate)} | ${fmt(embedded.vectorsMs! / 1000, 2)} s | ${fmt(vectorsRate)} |`,
      '',
      `- keyword-searchable with the provider: ${fmt(readyRate / keywordRate, 2)}× keyword-only documents/s (goal ≥ ${GOAL_RATIO}×: ${readyRate / keywordRate >= GOAL_RATIO ? 'met' : 'missed'})`,
      `- vectors ready, end to end: ${fmt(vectorsRate / keywordRate, 2)}× keyword-only documents/s (goal ≥ ${GOAL_RATIO}×: ${vectorsRate / keywordRate >= GOAL_RATIO ? 'met' : 'missed'})`,
    ];
    return {
      title: 'Ingest with the openai embedding provider vs keyword only',
      lines,
    } satisfies BenchSection;
  } finally {
    await provider.stop();
  }
};
