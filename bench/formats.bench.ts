// Extraction speed of the formats added after PDF, DOCX, text and HTML: MB/s of input per format
// over the shared corpus files (../shared/corpus/<format>/), through the whole extractor (worker
// thread, archive limits, parser, Markdown), and the process's RSS peak above its baseline while
// the largest file of each format is extracted (threads are in this process, so its RSS counts
// theirs). A generated 24 MB CSV (the corpus's weather table repeated) and a generated workbook
// show how the table paths scale; they are labelled as generated.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import type { FormatId } from '../src/domain/formats.js';
import { createPipelineThreads, type PipelineThreads } from '../src/pipeline/extract/index.js';
import { proseXlsx } from './big-files.js';
import { type Benchmark, type BenchSection, fmt, median, megabytes, projectRoot, timeRuns } from './lib.js';
import { residentBytes } from './server.js';

const FORMATS: readonly { format: FormatId; folder: string; extensions: readonly string[] }[] = [
  { format: 'pptx', folder: 'pptx', extensions: ['.pptx'] },
  { format: 'xlsx', folder: 'xlsx', extensions: ['.xlsx'] },
  { format: 'csv', folder: 'csv', extensions: ['.csv'] },
  { format: 'html', folder: 'html', extensions: ['.html'] },
  { format: 'odt', folder: 'odt', extensions: ['.odt'] },
  { format: 'epub', folder: 'epub', extensions: ['.epub'] },
  { format: 'rtf', folder: 'rtf', extensions: ['.rtf'] },
  { format: 'eml', folder: 'eml', extensions: ['.eml'] },
];

/** Peak RSS (this process and its pipeline processes) above `baseline` while `fn` runs, sampled every 2 ms. */
async function rssPeak(baseline: number, fn: () => Promise<unknown>): Promise<number> {
  let peak = residentBytes(process.pid);
  const timer = setInterval(() => {
    peak = Math.max(peak, residentBytes(process.pid));
  }, 2);
  try {
    await fn();
  } finally {
    clearInterval(timer);
  }
  return Math.max(0, Math.max(peak, residentBytes(process.pid)) - baseline);
}

/** One timed extraction of a generated file, as a row of the table. */
async function generatedRow(
  extractor: PipelineThreads,
  label: string,
  file: string,
  format: FormatId,
): Promise<string> {
  const size = statSync(file).size;
  const baseline = await settledRss();
  let chars = 0;
  const started = performance.now();
  const peak = await rssPeak(baseline, async () => {
    chars = (await extractor.extract(file, format)).text.length;
  });
  const ms = performance.now() - started;
  return `| ${label} | 1 | ${megabytes(size, 1)} | ${chars.toLocaleString('en-US')} | ${fmt(ms)} (one run) | ${fmt(size / 1e6 / (ms / 1000), 2)} | ${path.basename(file)} | ${megabytes(peak)} |`;
}

async function settledRss(): Promise<number> {
  (globalThis as { gc?: () => void }).gc?.();
  await new Promise((resolve) => setTimeout(resolve, 200));
  return residentBytes(process.pid);
}

export const run: Benchmark = async (options): Promise<BenchSection> => {
  const title = 'Office, e-book, e-mail and table formats: MB/s extracted and RSS peak';
  const corpus = path.resolve(projectRoot(), '../shared/corpus');
  if (!existsSync(corpus)) return { title, lines: [`- skipped: ${corpus} not found`] };
  const repeats = options?.quick ? 2 : 7;
  const extractor: PipelineThreads = createPipelineThreads({
    maxWorkers: 1,
    timeoutMs: 300_000,
    maxHeapMb: 1024,
    pdfMaxPages: 5_000,
  });
  const tmp = await mkdtemp(path.join(tmpdir(), 'formats-bench-'));
  const loadBefore = loadavg()[0]!;
  const lines = [
    '| format | files | input | characters out | median ms (all files) | MB/s | largest file | RSS peak above baseline, largest file |',
    '|---|---:|---:|---:|---:|---:|---|---:|',
  ];
  try {
    // Thread start and parser loading are paid once per thread, not per document: not counted.
    await extractor.extract(path.join(corpus, 'csv', 'csv-comma.csv'), 'csv');
    for (const { format, folder, extensions } of FORMATS) {
      const dir = path.join(corpus, folder);
      const files = readdirSync(dir)
        .filter((name) => extensions.some((ext) => name.endsWith(ext)) && !name.includes('.expected'))
        .map((name) => path.join(dir, name));
      const bytes = files.reduce((sum, file) => sum + statSync(file).size, 0);
      let chars = 0;
      for (const file of files) chars += (await extractor.extract(file, format)).text.length; // warm-up
      const times = await timeRuns(repeats, async () => {
        for (const file of files) await extractor.extract(file, format);
      });
      const ms = median(times);
      const largest = files.reduce((a, b) => (statSync(a).size >= statSync(b).size ? a : b));
      const baseline = await settledRss();
      const peak = await rssPeak(baseline, () => extractor.extract(largest, format));
      lines.push(
        `| ${format} | ${files.length} | ${megabytes(bytes, 2)} | ${chars.toLocaleString('en-US')} | ${fmt(ms)} | ${fmt(bytes / 1e6 / (ms / 1000), 2)} | ${path.basename(largest)} (${megabytes(statSync(largest).size, 2)}) | ${megabytes(peak)} |`,
      );
    }
    // The generated table: the weather CSV's rows repeated to about 24 MB.
    const weather = readFileSync(path.join(corpus, 'csv', 'seattle-weather.csv'), 'utf8');
    const [header, ...rows] = weather.trim().split('\n');
    const copies = options?.quick ? 50 : 500;
    const big = path.join(tmp, 'big.csv');
    await writeFile(big, `${header}\n${Array.from({ length: copies }, () => rows.join('\n')).join('\n')}\n`);
    lines.push(
      await generatedRow(extractor, `csv (generated: seattle-weather.csv rows × ${copies})`, big, 'csv'),
    );
    // The generated workbook (bench section 7's, smaller): a ledger whose XML inflates to ~40 MB.
    const xml = options?.quick ? 4 : 40;
    const ledger = proseXlsx(xml * 1e6);
    const xlsx = path.join(tmp, ledger.filename);
    await writeFile(xlsx, Buffer.concat([...ledger.parts]));
    const label = `xlsx (generated: a ledger as in section 7, its XML ${xml} MB)`;
    lines.push(await generatedRow(extractor, label, xlsx, 'xlsx'));
  } finally {
    await extractor.close();
    await rm(tmp, { recursive: true, force: true });
  }
  lines.push(
    '',
    `- One pipeline thread (a child process: files are read in one); median of ${repeats} passes over every corpus file of the format, after a warm-up pass; MB/s is input bytes per second. The corpus files are small (6 KB–0.5 MB), so fixed costs per file (opening the archive twice: limits, then parts) weigh more than they would on large files.`,
    `- RSS: the resident set of the process and its pipeline processes (they read the files), sampled every 2 ms while the largest file is extracted, minus the RSS after the warm-up.`,
    `- ${cpus().length} CPUs, load average ${fmt(loadBefore, 2)} before / ${fmt(loadavg()[0]!, 2)} after (other work shares this machine; every figure is slowed alike).`,
  );
  return { title, lines };
};
