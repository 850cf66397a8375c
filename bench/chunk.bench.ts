// Benchmark of the chunk stage: chunkText's throughput against a bare o200k_base `encode` of the
// same text (the floor for any chunker that tokenizes once) and against LangChain.js's
// RecursiveCharacterTextSplitter measuring length with the same tokenizer, on ≥ 5 MB of real
// prose and markdown (the *.md files under node_modules). Run alone with
// `node dist/bench/chunk.bench.js` after `npx tsc -p tsconfig.json`.
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { RecursiveCharacterTextSplitter } from '@langchain/textsplitters';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { chunkText } from '../src/pipeline/chunk/chunker.js';
import { chunkForIndex } from '../src/pipeline/chunk/for-index.js';
import { type Benchmark, fmt, median, timeRuns } from './lib.js';

const MB = 1024 * 1024;
const CORPUS_BYTES = 5 * MB;
const SLICE_BYTES = 1 * MB;
const CHUNK_SIZE = 512;
const CHUNK_OVERLAP = 64;
const REPEATS = 11;
const LANGCHAIN_REPEATS = 3;

// Documents are data: special-token strings in them are plain text, for every contender alike.
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };
const tokenLength = (text: string): number => encode(text, PLAIN_TEXT).length;

function nodeModulesDir(): string {
  const manifest = createRequire(import.meta.url).resolve('gpt-tokenizer/package.json');
  return dirname(dirname(manifest));
}

/** Every *.md file under `dir`, depth first, names in code-unit order, hidden folders skipped. */
function markdownFiles(dir: string, out: string[] = []): string[] {
  const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const entry of entries) {
    if (entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) markdownFiles(path, out);
    else if (entry.isFile() && entry.name.toLowerCase().endsWith('.md')) out.push(path);
  }
  return out;
}

interface Corpus {
  text: string;
  bytes: number;
  files: number;
  uniqueBytes: number;
  passes: number;
}

// node_modules may hold less than 5 MB of markdown; the file list is then read again from the
// start, and the notes say so.
function buildCorpus(): Corpus {
  const files = markdownFiles(nodeModulesDir());
  if (files.length === 0) throw new Error('no markdown files under node_modules');
  const parts: string[] = [];
  let bytes = 0;
  let uniqueBytes = 0;
  let read = 0;
  while (bytes < CORPUS_BYTES) {
    const path = files[read % files.length]!;
    const doc = `${readFileSync(path, 'utf8')}\n\n`;
    const size = Buffer.byteLength(doc);
    parts.push(doc);
    bytes += size;
    if (read < files.length) uniqueBytes += size;
    read++;
  }
  return {
    text: parts.join(''),
    bytes,
    files: Math.min(read, files.length),
    uniqueBytes,
    passes: Math.ceil(read / files.length),
  };
}

/** The longest prefix of `text` that is at most `bytes` bytes of UTF-8. */
function prefixOfBytes(text: string, bytes: number): string {
  const utf8 = Buffer.from(text, 'utf8');
  let end = Math.min(bytes, utf8.length);
  // Back off continuation bytes, so the cut falls between characters.
  while (end > 0 && end < utf8.length && (utf8[end]! & 0xc0) === 0x80) end--;
  return utf8.subarray(0, end).toString('utf8');
}

const mbPerSecond = (bytes: number, ms: number): number => bytes / MB / (ms / 1000);

interface Timing {
  wallMs: number;
  cpuMs: number;
}

async function measure(fn: () => unknown): Promise<Timing> {
  const cpuBefore = process.cpuUsage();
  const [wallMs] = await timeRuns(1, fn);
  const cpu = process.cpuUsage(cpuBefore);
  return { wallMs: wallMs!, cpuMs: (cpu.user + cpu.system) / 1000 };
}

const WHITESPACE_FREE_REPEATS = 5;

/**
 * Text with no whitespace at all (one pre-token per 10,000 characters, which byte-pair merging
 * must handle in time linear in its length) against the prose slice, interleaved in the same run.
 */
function whitespaceFree(
  prose: string,
  proseBytes: number,
  options: Parameters<typeof chunkText>[1],
): string[] {
  const random = seededLetters(SLICE_BYTES);
  const texts: [string, string][] = [
    ['1 MB of prose (the slice above)', prose],
    ["1 MB of one letter ('x')", 'x'.repeat(SLICE_BYTES)],
    ['1 MB of random a–z letters', random],
    ['1 MB of CJK without spaces (3 bytes a character)', '中文日本語'.repeat(Math.floor(SLICE_BYTES / 15))],
  ];
  for (const [, text] of texts) chunkText(text, options);
  const cpu = texts.map(() => [] as number[]);
  for (let i = 0; i < WHITESPACE_FREE_REPEATS; i++) {
    texts.forEach(([, text], t) => {
      const before = process.cpuUsage();
      chunkText(text, options);
      const used = process.cpuUsage(before);
      cpu[t]!.push((used.user + used.system) / 1000);
    });
  }
  const rate = (t: number, ms: number) => Buffer.byteLength(texts[t]![1]) / MB / (ms / 1000);
  const proseRate = rate(0, median(cpu[0]!));
  return [
    `Whitespace-free text, chunkText, CPU time, median of ${WHITESPACE_FREE_REPEATS} interleaved runs (min–max); ` +
      `prose measured in the same loop (${fmt(proseBytes / MB, 2)} MB):`,
    '',
    '| text | CPU time | MB/s (CPU) | min–max MB/s | vs prose |',
    '|---|---:|---:|---:|---:|',
    ...texts.map(([name], t) => {
      const runs = cpu[t]!;
      const ms = median(runs);
      return `| ${name} | ${fmt(ms, 0)} ms | ${fmt(rate(t, ms), 2)} | ${fmt(rate(t, Math.max(...runs)), 2)}–${fmt(rate(t, Math.min(...runs)), 2)} | ${fmt(rate(t, ms) / proseRate, 3)}× |`;
    }),
  ];
}

function seededLetters(length: number): string {
  let seed = 1;
  const out: string[] = [];
  for (let i = 0; i < length; i++) {
    seed = (seed * 1_103_515_245 + 12_345) & 0x7fffffff;
    out.push(String.fromCharCode(97 + (seed % 26)));
  }
  return out.join('');
}

export const run: Benchmark = async () => {
  const corpus = buildCorpus();
  const { text } = corpus;
  const options = { chunkSize: CHUNK_SIZE, chunkOverlap: CHUNK_OVERLAP, markdown: true };

  // Warm-up: JIT, and the tokenizer's merge cache, which both contenders share.
  tokenLength(text);
  const plan = chunkText(text, options);
  // What a pipeline thread does with a text: the chunks, each chunk's search words, the hash. The
  // corpus is mostly English, and is analysed as English whatever its first chunk looks like.
  const forIndex = () => chunkForIndex(text, options, { given: 'en', configured: 'auto' });
  const indexPlan = forIndex();

  // Interleave the two, swapping which goes first, so drift in machine load and the garbage one
  // run leaves for the next to collect fall on both alike. CPU time is reported beside wall time
  // because other processes competing for the cores move it far less.
  const bare: Timing[] = [];
  const ours: Timing[] = [];
  const oursForIndex: Timing[] = [];
  for (let i = 0; i < REPEATS; i++) {
    if (i % 2 === 0) bare.push(await measure(() => encode(text, PLAIN_TEXT)));
    ours.push(await measure(() => chunkText(text, options)));
    oursForIndex.push(await measure(forIndex));
    if (i % 2 === 1) bare.push(await measure(() => encode(text, PLAIN_TEXT)));
  }
  const oursOver = plan.chunks.filter((chunk) => tokenLength(chunk.text) > CHUNK_SIZE).length;

  // LangChain calls the length function on every piece and every merge, so it runs on the
  // first 1 MB of the corpus only; chunkText runs on the same slice for a like-for-like ratio.
  const slice = prefixOfBytes(text, SLICE_BYTES);
  const sliceBytes = Buffer.byteLength(slice);
  const splitter = new RecursiveCharacterTextSplitter({
    chunkSize: CHUNK_SIZE,
    chunkOverlap: CHUNK_OVERLAP,
    lengthFunction: tokenLength,
  });
  let langchainChunks: string[] = [];
  const langchain: Timing[] = [];
  const oursSlice: Timing[] = [];
  for (let i = 0; i < LANGCHAIN_REPEATS; i++) {
    langchain.push(
      await measure(async () => {
        langchainChunks = await splitter.splitText(slice);
      }),
    );
    oursSlice.push(await measure(() => chunkText(slice, options)));
  }
  const langchainOver = langchainChunks.filter((chunk) => tokenLength(chunk) > CHUNK_SIZE).length;
  const oursSliceChunks = chunkText(slice, options).chunks.length;

  const mbText = (bytes: number): string => `${fmt(bytes / MB, 2)} MB`;
  const row = (
    name: string,
    what: string,
    bytes: number,
    runs: Timing[],
    chunks: string,
    over: string,
  ): string => {
    const wall = median(runs.map((r) => r.wallMs));
    const cpu = median(runs.map((r) => r.cpuMs));
    return `| ${name} | ${what} | ${fmt(wall, 0)} ms | ${fmt(mbPerSecond(bytes, wall), 2)} | ${fmt(cpu, 0)} ms | ${fmt(mbPerSecond(bytes, cpu), 2)} | ${chunks} | ${over} |`;
  };
  const ratio = (slow: Timing[], fast: Timing[], key: keyof Timing): string =>
    `${fmt(median(slow.map((run) => run[key])) / median(fast.map((run) => run[key])), 3)}×`;
  const lines = [
    `Corpus: ${mbText(corpus.bytes)} (${plan.tokenCount.toLocaleString('en-US')} o200k_base tokens) of markdown from ` +
      `${corpus.files} *.md files under node_modules, concatenated in path order` +
      (corpus.passes > 1
        ? `; they hold ${mbText(corpus.uniqueBytes)}, so the list was read ${corpus.passes} times to pass 5 MB.`
        : '.'),
    `chunk_size ${CHUNK_SIZE}, chunk_overlap ${CHUNK_OVERLAP}; chunkText with markdown: true. MB = 2^20 bytes of UTF-8. ` +
      `Medians of ${REPEATS} runs (LangChain and the 1 MB rows: ${LANGCHAIN_REPEATS}), after one warm-up run.`,
    '',
    '| splitter | text | wall time | MB/s (wall) | CPU time | MB/s (CPU) | chunks | chunks > 512 tokens |',
    '|---|---|---:|---:|---:|---:|---:|---:|',
    row('gpt-tokenizer `encode` alone (o200k_base)', mbText(corpus.bytes), corpus.bytes, bare, '–', '–'),
    row(
      'docindex `chunkText`',
      mbText(corpus.bytes),
      corpus.bytes,
      ours,
      String(plan.chunks.length),
      String(oursOver),
    ),
    row(
      `docindex \`chunkForIndex\` (the chunks with their search words, analysed as English)`,
      mbText(corpus.bytes),
      corpus.bytes,
      oursForIndex,
      String(indexPlan.chunks.length),
      '–',
    ),
    row(
      'docindex `chunkText`',
      `first ${mbText(sliceBytes)}`,
      sliceBytes,
      oursSlice,
      String(oursSliceChunks),
      '–',
    ),
    row(
      'LangChain `RecursiveCharacterTextSplitter`, length = o200k tokens',
      `first ${mbText(sliceBytes)}`,
      sliceBytes,
      langchain,
      String(langchainChunks.length),
      String(langchainOver),
    ),
    '',
    `- chunkText / bare encode throughput: **${ratio(bare, ours, 'cpuMs')}** by CPU time, ${ratio(bare, ours, 'wallMs')} by wall time ` +
      `(goal ≥ 0.9×; ratio of the medians).`,
    `- chunkText / LangChain throughput on the same 1 MB slice: **${ratio(langchain, oursSlice, 'cpuMs')}** by CPU time, ` +
      `${ratio(langchain, oursSlice, 'wallMs')} by wall time (goal ≥ 2.5×). LangChain was measured on 1 MB, not the whole corpus.`,
    `- The search words' share of a pipeline thread's work on this text (chunkForIndex less chunkText, CPU medians): ` +
      `${fmt(median(oursForIndex.map((r) => r.cpuMs)) - median(ours.map((r) => r.cpuMs)), 0)} ms.`,
    '- "chunks > 512 tokens": each chunk\'s text re-encoded on its own with o200k_base.',
    '',
    ...whitespaceFree(slice, sliceBytes, options),
  ];
  return { title: 'Chunking throughput', lines };
};

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const section = await run();
  console.log(`## ${section.title}\n\n${section.lines.join('\n')}`);
}
