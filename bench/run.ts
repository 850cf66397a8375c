// `npm run bench`: runs the benchmarks one after another in this process and rewrites
// bench/RESULTS.md with the machine, the date, the Node version, the commit and every section.
//
//   node dist/bench/run.js                 every benchmark
//   node dist/bench/run.js chunk query     only these; the other sections of RESULTS.md are kept
//   node dist/bench/run.js --quick         smaller sizes, a smoke run: written to RESULTS.quick.md
//
// A benchmark that throws is recorded as "failed: <reason>" in its section; the rest still run.
// Benchmarks are loaded by file name at run time, so one that does not exist yet (or does not
// compile) fails its own section instead of the whole bench.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { type Benchmark, type BenchSection, fmt, projectRoot } from './lib.js';

interface Entry {
  id: string;
  /** Compiled module next to this file, exporting `run: Benchmark`. */
  module: string;
  /** Heading used when the benchmark fails before naming its section. */
  title: string;
  /** Runs only when named on the command line (it takes too long for every `npm run bench`). */
  namedOnly?: boolean;
}

/** Section numbers in RESULTS.md follow this order: a new benchmark goes at the end. */
const BENCHMARKS: readonly Entry[] = [
  { id: 'chunk', module: 'chunk.bench.js', title: 'Chunking throughput' },
  { id: 'ingest', module: 'ingest.bench.js', title: 'JSON ingest end to end (embedded)' },
  { id: 'accept', module: 'accept.bench.js', title: 'Accept rate: POST /v1/ingest under load' },
  {
    id: 'query',
    module: 'query.bench.js',
    title: 'Query latency: BM25 at 100k and 1M chunks, short and long queries',
  },
  { id: 'pdf', module: 'pdf.bench.js', title: 'PDF extraction: pages/s vs poppler pdftotext' },
  { id: 'url', module: 'url.bench.js', title: 'URL ingest: download start latency behind a PDF backlog' },
  {
    id: 'upload',
    module: 'upload.bench.js',
    title: 'Memory: server RSS during a 100 MB upload and its processing',
  },
  {
    id: 'neighbour',
    module: 'neighbour.bench.js',
    title: 'Noisy neighbour: other tenants during three large uploads',
  },
  {
    id: 'peer',
    module: 'peer.bench.js',
    title: 'Peer pipeline: LangChain.js splitter + in-memory BM25 vs docindex',
  },
  { id: 'mechanisms', module: 'mechanisms.bench.js', title: 'Mechanisms: what each still earns' },
  {
    id: 'beir',
    module: 'beir.bench.js',
    title: 'Ranking quality: BEIR collections in several languages, nDCG@10 and Recall@100',
  },
  {
    id: 'webhooks',
    module: 'webhooks.bench.js',
    title: 'Webhooks: delivery latency from ready to the receiver’s 2xx',
  },
  {
    id: 'formats',
    module: 'formats.bench.js',
    title: 'Office, e-book, e-mail and table formats: MB/s extracted and RSS peak',
  },
  { id: 'ocr', module: 'ocr.bench.js', title: 'OCR: pages/s and character accuracy on the corpus scans' },
  {
    id: 'embed-ingest',
    module: 'embed-ingest.bench.js',
    title: 'Ingest with the openai embedding provider vs keyword only',
  },
  {
    id: 'replace',
    module: 'replace.bench.js',
    title: 'Replace throughput: re-ingest by external_id vs first ingest (embedded)',
  },
  {
    id: 'hybrid',
    module: 'hybrid.bench.js',
    title: 'Semantic and hybrid query latency at 100k and 1M chunks (embedded)',
  },
  {
    id: 'hybrid-pg',
    module: 'hybrid-pg.bench.js',
    title: 'Semantic and hybrid query latency at 100k and 1M chunks (PostgreSQL)',
  },
  {
    id: 'query10m',
    module: 'query-10m.bench.js',
    title: 'Query latency at 10M chunks (embedded)',
    namedOnly: true,
  },
  {
    id: 'provider-outage',
    module: 'provider-outage.bench.js',
    title: 'Provider outage: hybrid vs keyword latency with the embedding provider dead; rerank overhead',
  },
  {
    id: 'first-document',
    module: 'first-document.bench.js',
    title: 'First contact: npm start, and the first document after a start',
  },
  {
    id: 'fairness',
    module: 'fairness.bench.js',
    title: 'Fairness: another org’s small document behind one org’s backlog',
  },
  {
    id: 'idle',
    module: 'idle.bench.js',
    title: 'Idle footprint: RSS of an idle embedded server, empty and after 100 documents',
  },
  {
    id: 'webhook-fairness',
    module: 'webhook-fairness.bench.js',
    title: "Webhooks: another org's event behind a hostile org's backlog",
  },
  {
    id: 'extract-limits',
    module: 'extract-limits.bench.js',
    title: 'Extraction limits: text per upload byte, deep markup',
  },
  {
    id: 'traces',
    module: 'traces.bench.js',
    title: 'Tracing on vs off: ingest (section 2) and BM25 queries (section 4)',
  },
  {
    id: 'sources',
    module: 'sources.bench.js',
    title: 'Sources: a 10,000-object bucket, then 1% changed (embedded, s3rver)',
  },
  {
    id: 'partitions',
    module: 'partitions.bench.js',
    title: 'Partitions: restricted query latency',
    namedOnly: true,
  },
];

const MARKER = /^<!-- bench:([a-z0-9-]+) -->$/;

function usage(): string {
  return `usage: node dist/bench/run.js [--quick] [${BENCHMARKS.map((b) => b.id).join('|')} …]`;
}

function gitCommit(root: string): string {
  try {
    const sha = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    // The results files are this program's own output: a run that follows another is not
    // "uncommitted changes" on their account.
    const status = ['status', '--porcelain', '--untracked-files=no', '--', '.'];
    const ownOutput = [':(exclude)bench/RESULTS.md', ':(exclude)bench/RESULTS.quick.md'];
    const dirty = execFileSync('git', [...status, ...ownOutput], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    return dirty === '' ? sha : `${sha} (with uncommitted changes)`;
  } catch {
    return 'unavailable (no git commit)';
  }
}

function machine(): string {
  const cpus = os.cpus();
  const model = cpus[0]?.model.trim() ?? 'unknown CPU';
  return `${model}, ${cpus.length} cores, ${fmt(os.totalmem() / 1024 ** 3, 1)} GiB RAM, ${os.type()} ${os.release()} (${os.arch()})`;
}

/** Splits an existing RESULTS.md into its sections by marker; text before the first is dropped. */
function readSections(file: string): Map<string, string> {
  const sections = new Map<string, string>();
  if (!existsSync(file)) return sections;
  let id: string | null = null;
  let lines: string[] = [];
  const flush = () => {
    if (id !== null) sections.set(id, lines.join('\n').trim());
  };
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const match = MARKER.exec(line);
    if (match) {
      flush();
      id = match[1]!;
      lines = [line];
    } else {
      lines.push(line);
    }
  }
  flush();
  return sections;
}

function failureLines(error: unknown): string[] {
  const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
  const message = error instanceof Error ? error.message : String(error);
  const [first = 'unknown error', ...rest] = message.split('\n');
  const detail = (rest.length > 0 ? rest.join('\n') : text.split('\n').slice(1).join('\n')).trim();
  const lines = [`- failed: ${first}`];
  if (detail !== '') {
    lines.push('', '```', ...detail.split('\n').slice(-25), '```');
  }
  return lines;
}

function render(entry: Entry, number: number, section: BenchSection, stamp: string): string {
  return [
    `<!-- bench:${entry.id} -->`,
    `## ${number}. ${section.title}`,
    '',
    `_${stamp}_`,
    '',
    ...section.lines,
  ].join('\n');
}

async function runOne(entry: Entry, quick: boolean): Promise<BenchSection> {
  const file = path.join(path.dirname(fileURLToPath(import.meta.url)), entry.module);
  if (!existsSync(file)) {
    return {
      title: entry.title,
      lines: [
        `- failed: ${path.basename(file)} not found (bench/${entry.module.replace(/\.js$/, '.ts')} not written or not built)`,
      ],
    };
  }
  try {
    const mod = (await import(pathToFileURL(file).href)) as { run?: Benchmark };
    if (typeof mod.run !== 'function') throw new Error(`${entry.module} does not export run()`);
    return await mod.run({ quick });
  } catch (error) {
    return { title: entry.title, lines: failureLines(error) };
  }
}

async function main(argv: string[]): Promise<number> {
  let parsed: ReturnType<
    typeof parseArgs<{ args: string[]; options: { quick: { type: 'boolean' } }; allowPositionals: true }>
  >;
  try {
    parsed = parseArgs({ args: argv, options: { quick: { type: 'boolean' } }, allowPositionals: true });
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : error}\n${usage()}\n`);
    return 2;
  }
  const quick = parsed.values.quick === true;
  const unknown = parsed.positionals.filter((id) => !BENCHMARKS.some((b) => b.id === id));
  if (unknown.length > 0) {
    process.stderr.write(`unknown benchmark(s): ${unknown.join(', ')}\n${usage()}\n`);
    return 2;
  }
  const selected = BENCHMARKS.filter((b) =>
    parsed.positionals.length === 0 ? b.namedOnly !== true : parsed.positionals.includes(b.id),
  );

  const root = projectRoot();
  const out = path.join(root, 'bench', quick ? 'RESULTS.quick.md' : 'RESULTS.md');
  const commit = gitCommit(root);
  const sections = readSections(out);
  const startedAt = new Date();

  for (const entry of selected) {
    const number = BENCHMARKS.indexOf(entry) + 1;
    process.stderr.write(`bench: ${number}. ${entry.id}…\n`);
    const start = performance.now();
    const section = await runOne(entry, quick);
    const seconds = (performance.now() - start) / 1000;
    const stamp = `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC · Node ${process.version} · commit ${commit}${quick ? ' · --quick (reduced sizes)' : ''} · took ${fmt(seconds, 0)} s`;
    const text = render(entry, number, section, stamp);
    sections.set(entry.id, text);
    process.stderr.write(`${text}\n\n`);
  }

  const header = [
    quick ? '# Benchmark results (--quick smoke run)' : '# Benchmark results',
    '',
    'Written by `npm run bench` (bench/run.ts); see docs/BENCHMARKS.md. The machine is shared and noisy, so every comparison is a ratio of figures taken in the same run, side by side; absolute figures move with load. Each section says when it was last measured.',
    '',
    `- Machine: ${machine()}`,
    `- Last run: ${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC (${selected.map((b) => b.id).join(', ')})`,
    `- Node.js: ${process.version}`,
    `- Commit: ${commit}`,
  ];
  // Sections no benchmark writes (the hand-kept table of changes that moved a figure) stay, after
  // the figures.
  const kept = [...sections.entries()].filter(([id]) => !BENCHMARKS.some((b) => b.id === id));
  const body = [
    ...BENCHMARKS.filter((b) => sections.has(b.id)).map((b) => sections.get(b.id)!),
    ...kept.map(([, text]) => text),
  ];
  writeFileSync(out, `${[header.join('\n'), ...body].join('\n\n')}\n`);
  process.stderr.write(`bench: wrote ${path.relative(process.cwd(), out)}\n`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : error}\n`);
    process.exit(1);
  },
);
