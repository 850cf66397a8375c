// PDF extraction speed: pages per second of the whole extractor (worker pool, pdf.js, layout,
// page spans) against poppler's pdftotext (the C++ reference) on the same file, in the same run.
// Goal: at least 0.5× poppler with two worker threads. pdftotext comes from Debian's
// poppler-utils (`apt-get install poppler-utils`); without it the section says so.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createExtractor } from '../src/pipeline/extract/index.js';
import { type Benchmark, type BenchSection, fmt, median, timeRuns } from './lib.js';

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

export const run: Benchmark = async (): Promise<BenchSection> => {
  const file = path.resolve(projectRoot(), '../shared/corpus/pdf', FILE_NAME);
  const title = 'PDF extraction: pages/s vs poppler pdftotext';
  if (!existsSync(file)) return { title, lines: [`- skipped: ${file} not found`] };

  const version = await pdftotextVersion();
  const out = await mkdtemp(path.join(tmpdir(), 'pdf-bench-'));
  const options = { timeoutMs: 300_000, maxHeapMb: 512, pdfMaxPages: 5_000 };
  const two = createExtractor({ ...options, maxWorkers: 2 });
  const one = createExtractor({ ...options, maxWorkers: 1 });
  try {
    const poppler = () => run$('pdftotext', ['-enc', 'UTF-8', file, path.join(out, 'out.txt')]);
    let pages = 0;
    let chars = 0;
    // The first document also starts the threads and loads pdf.js: reported apart, because a
    // running service pays that once per thread, not once per document.
    const [cold] = await timeRuns(1, async () => {
      const result = await two.extract(file, 'pdf');
      pages = result.pages?.length ?? 0;
      chars = result.text.length;
    });
    await one.extract(file, 'pdf');
    if (version !== null) await poppler(); // page cache and binary warm for poppler too

    // Interleaved, so that load from anything else on the machine falls on every contestant alike.
    const times = { two: [] as number[], one: [] as number[], poppler: [] as number[] };
    for (let i = 0; i < REPEATS; i++) {
      if (version !== null) times.poppler.push(...(await timeRuns(1, poppler)));
      times.two.push(...(await timeRuns(1, () => two.extract(file, 'pdf'))));
      times.one.push(...(await timeRuns(1, () => one.extract(file, 'pdf'))));
    }
    const rate = (ms: number) => fmt((pages / ms) * 1000);
    const twoMs = median(times.two);
    const lines = [
      `File: \`${FILE_NAME}\` (${pages} pages, ${chars.toLocaleString('en-US')} characters extracted). Median of ${REPEATS} runs each, interleaved, after a warm-up; all figures from this run.`,
      '',
      '| extractor | median ms | pages/s |',
      '|---|---:|---:|',
      `| docindex, 2 worker threads (createExtractor().extract) | ${fmt(twoMs)} | ${rate(twoMs)} |`,
      `| docindex, 1 worker thread | ${fmt(median(times.one))} | ${rate(median(times.one))} |`,
      `| docindex, 2 worker threads, first document (threads starting) | ${fmt(cold!)} | ${rate(cold!)} |`,
    ];
    if (version === null) {
      lines.push(
        '',
        '- pdftotext not installed (Debian: `apt-get install poppler-utils`): no poppler comparison in this run.',
      );
      return { title, lines };
    }
    const popplerMs = median(times.poppler);
    const ratio = popplerMs / twoMs;
    lines.push(
      `| poppler pdftotext (${version}, one process) | ${fmt(popplerMs)} | ${rate(popplerMs)} |`,
      '',
      `- Ratio docindex (2 threads) / poppler: **${fmt(ratio, 2)}×** (goal ≥ 0.50×): ${ratio >= 0.5 ? 'met' : 'NOT met'}.`,
    );
    return { title, lines };
  } finally {
    await Promise.all([two.close(), one.close()]);
    await rm(out, { recursive: true, force: true });
  }
};

// Run directly (`node dist/bench/pdf.bench.js`, or `npx vite-node bench/pdf.bench.ts`): print the section.
const thisFile = fileURLToPath(import.meta.url);
if (process.argv.slice(1).some((arg) => path.resolve(arg) === thisFile)) {
  const section = await run();
  console.log(`## ${section.title}\n\n${section.lines.join('\n')}`);
}
