// The peer pipeline: what a user would build instead of running docindex — LangChain.js's
// RecursiveCharacterTextSplitter (512/64, token lengths from gpt-tokenizer, as LangChain's docs
// suggest for token-sized chunks) feeding an in-memory BM25 index (bench/bm25.ts), in one process,
// over the same ~10 MB / 1,000 documents as section 2. Reported side by side with docindex's
// end-to-end figure from section 2 of the same run: documents/s and the ratio.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Document } from '@langchain/core/documents';
import { RecursiveCharacterTextSplitter } from '@langchain/textsplitters';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { Bm25Index } from './bm25.js';
import { ingestCorpus, measureLargeIngest } from './ingest.bench.js';
import { type Benchmark, type BenchOptions, type BenchSection, fmt, median } from './lib.js';

/** Documents are data: special-token strings in them are plain text, for every contender alike. */
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

/** LangChain's TextLoader (in the `langchain` package, not a dependency here) does just this. */
async function loadTextFile(file: string): Promise<Document> {
  return new Document({ pageContent: await readFile(file, 'utf8'), metadata: { source: file } });
}

interface PeerRun {
  ms: number;
  chunks: number;
  terms: number;
}

async function peerPipeline(files: string[]): Promise<PeerRun> {
  const start = performance.now();
  const splitter = new RecursiveCharacterTextSplitter({
    chunkSize: 512,
    chunkOverlap: 64,
    lengthFunction: (text: string) => encode(text, PLAIN_TEXT).length,
  });
  const index = new Bm25Index();
  for (const file of files) {
    const chunks = await splitter.splitDocuments([await loadTextFile(file)]);
    for (const chunk of chunks) index.add(chunk.pageContent);
  }
  const ms = performance.now() - start;
  if (index.search('install the package', 10).length === 0) throw new Error('the peer index finds nothing');
  return { ms, chunks: index.size, terms: index.terms };
}

export const run: Benchmark = async (options?: BenchOptions): Promise<BenchSection> => {
  const quick = options?.quick ?? false;
  const texts = ingestCorpus(quick);
  const dir = await mkdtemp(path.join(tmpdir(), 'docindex-peer-bench-'));
  try {
    const files = await Promise.all(
      texts.map(async (text, i) => {
        const file = path.join(dir, `doc-${String(i).padStart(4, '0')}.md`);
        await writeFile(file, text);
        return file;
      }),
    );
    // Ours first (reused when section 2 already ran in this process), then the peer.
    const ours = await measureLargeIngest(quick);
    const runs: PeerRun[] = [await peerPipeline(files)]; // also the warm-up of its code paths
    const repeats = quick ? 1 : 3;
    while (runs.length < repeats + 1) runs.push(await peerPipeline(files));
    const timed = runs.length > 1 ? runs.slice(1) : runs;
    const peerMs = median(timed.map((r) => r.ms));
    const peerRate = (texts.length / peerMs) * 1000;
    const steady = ours.steady;
    const ratio = steady.docsPerSecond / peerRate;
    const chunks = runs[0]!.chunks;
    return {
      title: 'Peer pipeline: LangChain.js splitter + in-memory BM25 vs docindex',
      lines: [
        `Same ${texts.length.toLocaleString('en-US')} documents (${fmt(ours.first.bytes / 1e6, 2)} MB) as section 2. Peer = read each file into a LangChain \`Document\` (what TextLoader does) → \`RecursiveCharacterTextSplitter\` (@langchain/textsplitters 1.0.2, chunkSize 512, chunkOverlap 64, lengthFunction = gpt-tokenizer o200k_base \`encode(text).length\`) → an in-memory BM25 inverted index (bench/bm25.ts), one process, nothing persisted; median of ${timed.length} run(s) after a warm-up run. docindex = section 2's end-to-end figure from this run, its next pass (the corpus's next ${steady.documents.toLocaleString('en-US')} documents, ${fmt(steady.bytes / 1e6, 2)} MB, on a server past the first ones, as the peer is timed after a warm-up run; HTTP, durable queue, SQLite + FTS5, status polling).`,
        '',
        '| pipeline | documents/s | seconds | chunks |',
        '|---|---:|---:|---:|',
        `| docindex, end to end (section 2) | ${fmt(steady.docsPerSecond)} | ${fmt(steady.ms / 1000, 2)} | ${(steady.runs[0]?.chunks ?? 0).toLocaleString('en-US')} |`,
        `| LangChain.js splitter + in-memory BM25 | ${fmt(peerRate)} | ${fmt(peerMs / 1000, 2)} | ${chunks.toLocaleString('en-US')} |`,
        '',
        `- docindex ÷ peer throughput: **${fmt(ratio, 2)}×** (no goal set; the peer keeps nothing on disk and serves no API).`,
      ],
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
};

const thisFile = fileURLToPath(import.meta.url);
if (process.argv.slice(1).some((arg) => path.resolve(arg) === thisFile)) {
  const section = await run({ quick: process.argv.includes('--quick') });
  console.log(`## ${section.title}\n\n${section.lines.join('\n')}`);
}
