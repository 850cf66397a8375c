// PDF extraction speed: pages per second of the whole extractor (worker pool, pdf.js, layout,
// page spans) against poppler's pdftotext (the C++ reference) on the same file, in the same run.
// Goal: at least 0.5× poppler with two worker threads. pdftotext comes from Debian's
// poppler-utils (`apt-get install poppler-utils`); without it the section says so.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createPipelineThreads } from '../src/pipeline/extract/index.js';
import { type Benchmark, type BenchSection, fmt, median, timeRuns } from './lib.js';
import { cpuMilliseconds } from './server.js';

const run$ = promisify(execFile);
const REPEATS = 5;
const FILE_NAME = 'GeoTopo-komprimiert.pdf';

/** The project root: the nearest folder above this file with a package.json (bench/ or dist/bench/). */
function projectRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('package.json not found above bench/pdf.bench');
    dir = parent;
  }
  return dir;
}

async function pdftotextVersion(): Promise<string | null> {
  try {
    const { stdout, stderr } = await run$('pdftotext', ['-v']);
    return (`${stdout}${stderr}`.split('\n')[0] ?? '').trim();
  } catch {
    return null;
  }
}

/**
 * CPU time of this process (every thread), its pipeline processes and its waited-for children
 * (pdftotext), in ms.
 */
function cpuMs(): number {
  return cpuMilliseconds(process.pid);
}

interface Sample {
  wallMs: number;
  cpuMs: number;
}

async function sample(fn: () => Promise<unknown>): Promise<Sample> {
  const cpu = cpuMs();
  const [wallMs] = await timeRuns(1, fn);
  return { wallMs: wallMs!, cpuMs: cpuMs() - cpu };
}

export const run: Benchmark = async (): Promise<BenchSection> => {
  const file = path.resolve(projectRoot(), '../shared/corpus/pdf', FILE_NAME);
  const title = 'PDF extraction: pages/s vs poppler pdftotext';
  if (!existsSync(file)) return { title, lines: [`- skipped: ${file} not found`] };

  const version = await pdftotextVersion();
  const out = await mkdtemp(path.join(tmpdir(), 'pdf-bench-'));
  const options = { timeoutMs: 300_000, maxHeapMb: 512, pdfMaxPages: 5_000 };
  const two = createPipelineThreads({ ...options, maxWorkers: 2 });
  const one = createPipelineThreads({ ...options, maxWorkers: 1 });
  try {
    const poppler = () => run$('pdftotext', ['-enc', 'UTF-8', file, path.join(out, 'out.txt')]);
    let pages = 0;
    let chars = 0;
    const loadBefore = loadavg()[0]!;
    // The first document also starts the threads and loads pdf.js: reported apart, because a
    // running service pays that once per thread, not once per document.
    const cold = await sample(async () => {
      const result = await two.extract(file, 'pdf');
      pages = result.pages?.length ?? 0;
      chars = result.text.length;
    });
    await one.extract(file, 'pdf');
    if (version !== null) await poppler(); // page cache and binary warm for poppler too

    // Interleaved, so that load from anything else on the machine falls on every contestant alike.
    const samples = { two: [] as Sample[], one: [] as Sample[], poppler: [] as Sample[] };
    for (let i = 0; i < REPEATS; i++) {
      if (version !== null) samples.poppler.push(await sample(poppler));
      samples.two.push(await sample(() => two.extract(file, 'pdf')));
      samples.one.push(await sample(() => one.extract(file, 'pdf')));
    }
    const wall = (list: Sample[]) => median(list.map((s) => s.wallMs));
    const cpu = (list: Sample[]) => median(list.map((s) => s.cpuMs));
    const row = (name: string, wallMs: number, cpuMsValue: number) =>
      `| ${name} | ${fmt(wallMs)} | ${fmt((pages / wallMs) * 1000)} | ${fmt(cpuMsValue, 0)} |`;
    const lines = [
      `File: \`${FILE_NAME}\` (${pages} pages, ${chars.toLocaleString('en-US')} characters extracted). Median of ${REPEATS} runs each, interleaved, after a warm-up; all figures from this run. ${cpus().length} CPUs, load average ${fmt(loadBefore, 2)} before / ${fmt(loadavg()[0]!, 2)} after (other work on the machine slows every row).`,
      '',
      '| extractor | median wall ms | pages/s | median CPU ms (all threads) |',
      '|---|---:|---:|---:|',
      row(
        'docindex, 2 worker threads (createPipelineThreads().extract)',
        wall(samples.two),
        cpu(samples.two),
      ),
      row('docindex, 1 worker thread', wall(samples.one), cpu(samples.one)),
      row('docindex, 2 worker threads, first document (threads starting)', cold.wallMs, cold.cpuMs),
    ];
    if (version === null) {
      lines.push(
        '',
        '- pdftotext not installed (Debian: `apt-get install poppler-utils`): no poppler comparison in this run.',
      );
      return { title, lines };
    }
    const ratio = wall(samples.poppler) / wall(samples.two);
    lines.push(
      row(`poppler pdftotext (${version}, one process)`, wall(samples.poppler), cpu(samples.poppler)),
      '',
      `- Ratio docindex (2 threads) / poppler, pages/s: **${fmt(ratio, 3)}×** (goal ≥ 0.500×): ${ratio >= 0.5 ? 'met' : 'NOT met'}.`,
      "- pdftotext is Debian's poppler-utils, installed for this benchmark with `apt-get install poppler-utils`.",
    );
    return { title, lines };
  } finally {
    await Promise.all([two.close(), one.close()]);
    await rm(out, { recursive: true, force: true });
  }
};

// Run directly (`npm run build && node dist/bench/pdf.bench.js`): print the section.
const thisFile = fileURLToPath(import.meta.url);
if (process.argv.slice(1).some((arg) => path.resolve(arg) === thisFile)) {
  const section = await run();
  console.log(`## ${section.title}\n\n${section.lines.join('\n')}`);
}
