// OCR: pages per second on the corpus's scans and photos through the whole extractor (worker
// thread, pdf.js rendering, Tesseract wasm), character accuracy against the ground truth where the
// corpus has one (goal ≥ 95% on clean printed English), the process's peak RSS meanwhile, and a
// PDF with a text layer extracted with OCR on and off (it must not pay for OCR).
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPipelineThreads } from '../src/pipeline/extract/index.js';
import type { SourceFormat } from '../src/pipeline/extract/types.js';
import { type Benchmark, type BenchSection, fmt, median, projectRoot, timeRuns } from './lib.js';
import { characterAccuracy } from './ocr-accuracy.js';
import { cpuMilliseconds, residentBytes } from './server.js';

interface Scan {
  file: string;
  format: SourceFormat;
  truth: string | null;
}

const SCANS: readonly Scan[] = [
  { file: 'scanned-pdf/ocr_test.pdf', format: 'pdf', truth: 'scanned-pdf/ocr_test.expected.txt' },
  { file: 'scanned-pdf/loremipsum-flat.pdf', format: 'pdf', truth: null },
  { file: 'scanned-pdf/c02-22.pdf', format: 'pdf', truth: null },
  { file: 'ocr-image/testocr.png', format: 'png', truth: 'ocr-image/testocr.expected.txt' },
  { file: 'ocr-image/congress.jpg', format: 'jpeg', truth: null },
];

const TEXT_PDF = 'pdf/GeoTopo-komprimiert.pdf';

export const run: Benchmark = async (options): Promise<BenchSection> => {
  const title = 'OCR: pages/s and character accuracy on the corpus scans';
  const corpus = path.resolve(projectRoot(), '../shared/corpus');
  if (!existsSync(corpus)) return { title, lines: [`- skipped: ${corpus} not found`] };
  const repeats = options?.quick ? 1 : 3;
  const base = { maxWorkers: 1, timeoutMs: 600_000, maxHeapMb: 512, pdfMaxPages: 5_000 };
  const on = createPipelineThreads({ ...base, ocr: { enabled: true, languages: ['eng'] } });
  const off = createPipelineThreads({ ...base, ocr: { enabled: false, languages: ['eng'] } });
  // The baseline has both threads started and idle with what every thread loads (the tokenizer
  // tables, loaded ahead when idle), so the peak above it is what OCR itself costs.
  const warmText = path.join(tmpdir(), `ocr-bench-${process.pid}.txt`);
  writeFileSync(warmText, 'warm up\n');
  await Promise.all([
    on.chunk('warm up', { chunkSize: 64, chunkOverlap: 0, pages: null }),
    off.chunk('warm up', { chunkSize: 64, chunkOverlap: 0, pages: null }),
  ]);
  await Promise.all([on.extract(warmText, 'txt'), off.extract(warmText, 'txt')]);
  rmSync(warmText);
  let peakRss = residentBytes(process.pid);
  const baselineRss = peakRss;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, residentBytes(process.pid));
  }, 20);
  try {
    const loadBefore = loadavg()[0]!;
    // The first OCR in a thread loads the wasm and the language data: measured apart.
    const [coldMs] = await timeRuns(1, () => on.extract(path.join(corpus, SCANS[0]!.file), 'pdf'));
    const rows: string[] = [];
    let totalPages = 0;
    let totalMs = 0;
    let totalCpuMs = 0;
    const accuracies: number[] = [];
    for (const scan of SCANS) {
      const file = path.join(corpus, scan.file);
      let text = '';
      let pages = 0;
      const cpuTimes: number[] = [];
      const times = await timeRuns(repeats, async () => {
        const cpu = cpuMilliseconds(process.pid);
        const out = await on.extract(file, scan.format);
        cpuTimes.push(cpuMilliseconds(process.pid) - cpu);
        text = out.text;
        pages = out.ocrPages ?? 0;
      });
      const ms = median(times);
      const cpuMs = median(cpuTimes);
      totalCpuMs += cpuMs;
      totalPages += pages;
      totalMs += ms;
      let accuracy = '—';
      if (scan.truth) {
        const value = characterAccuracy(text, readFileSync(path.join(corpus, scan.truth), 'utf8'));
        accuracies.push(value);
        accuracy = `${fmt(value * 100, 1)}%`;
      }
      rows.push(
        `| \`${scan.file}\` | ${pages} | ${fmt(ms, 0)} | ${fmt(cpuMs, 0)} | ${fmt((pages / ms) * 1000, 2)} | ${fmt((pages / cpuMs) * 1000, 2)} | ${text.length} | ${accuracy} |`,
      );
    }
    // The five scans queued at once: one thread reads them all with one loaded engine.
    const burstCpu = cpuMilliseconds(process.pid);
    const [burstMs] = await timeRuns(1, () =>
      Promise.all(SCANS.map((scan) => on.extract(path.join(corpus, scan.file), scan.format))),
    );
    const burstCpuMs = cpuMilliseconds(process.pid) - burstCpu;
    const scansPeakRss = peakRss;
    // A thread that ran OCR is ended once idle: the memory should come back.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const idleRss = residentBytes(process.pid);
    const textPdf = path.join(corpus, TEXT_PDF);
    const withOcr: number[] = [];
    const withoutOcr: number[] = [];
    let textPdfOcrPages: number | null = null;
    await on.extract(textPdf, 'pdf');
    await off.extract(textPdf, 'pdf');
    for (let i = 0; i < repeats + 2; i++) {
      withOcr.push(
        ...(await timeRuns(1, async () => {
          textPdfOcrPages = (await on.extract(textPdf, 'pdf')).ocrPages;
        })),
      );
      withoutOcr.push(...(await timeRuns(1, () => off.extract(textPdf, 'pdf'))));
    }
    const minAccuracy = Math.min(...accuracies);
    return {
      title,
      lines: [
        `One worker thread (\`tesseract-core-simd-lstm\`, \`eng\` from @tesseract.js-data/eng, PDF pages rendered at 300 dpi with pdf.js + @napi-rs/canvas). Median of ${repeats} run(s) per file, one after another: a thread that ran OCR ends once idle (to give its memory back), so each of these runs also starts a thread and loads the engine (wasm + language data); queued scans share one (the burst line below). ${cpus().length} CPUs, load average ${fmt(loadBefore, 2)} before / ${fmt(loadavg()[0]!, 2)} after (other work on the machine slows every row).`,
        '',
        '| file | OCR pages | median wall ms | median CPU ms (all threads) | pages/s (wall) | pages per CPU-second | characters | character accuracy |',
        '|---|---:|---:|---:|---:|---:|---:|---:|',
        ...rows,
        '',
        `- All scans: **${fmt((totalPages / totalMs) * 1000, 2)} pages/s** wall on this loaded machine (${totalPages} pages in ${fmt(totalMs, 0)} ms of medians), one thread; **${fmt((totalPages / totalCpuMs) * 1000, 2)} pages per CPU-second** (${fmt(totalCpuMs, 0)} ms of CPU), what one idle core would give.`,
        `- The five scans queued at once (one thread, one engine load): ${fmt(burstMs!, 0)} ms wall, ${fmt(burstCpuMs, 0)} ms CPU: **${fmt((totalPages / burstCpuMs) * 1000, 2)} pages per CPU-second**, ${fmt((totalPages / burstMs!) * 1000, 2)} pages/s wall.`,
        `- Character accuracy (1 − edit distance ÷ ground-truth length, whitespace folded) on the files with ground truth: lowest **${fmt(minAccuracy * 100, 1)}%** (goal ≥ 95%): ${minAccuracy >= 0.95 ? 'met' : 'NOT met'}.`,
        `- First OCR in a fresh thread (loads the wasm and the language data, then reads \`${SCANS[0]!.file}\`): ${fmt(coldMs!, 0)} ms.`,
        `- Peak RSS of the process and its pipeline processes while recognising the scans: ${fmt((scansPeakRss - baselineRss) / 1024 / 1024, 0)} MiB above its ${fmt(baselineRss / 1024 / 1024, 0)} MiB with both threads started, idle and warm (tokenizer loaded): Tesseract's wasm memory, pdf.js and the Skia canvas of one OCR thread. Two seconds after the last scan (the thread that ran OCR ended once idle): ${fmt((idleRss - baselineRss) / 1024 / 1024, 0)} MiB above that level.`,
        `- A PDF with a text layer (\`${TEXT_PDF}\`, ${textPdfOcrPages} pages sent to OCR): median ${fmt(median(withOcr), 0)} ms with OCR on, ${fmt(median(withoutOcr), 0)} ms with OCR off (${repeats + 2} interleaved runs each): pages with text never reach OCR.`,
      ],
    };
  } finally {
    clearInterval(sampler);
    await Promise.all([on.close(), off.close()]);
  }
};

// Run directly (`npm run build && node dist/bench/ocr.bench.js`): print the section.
const thisFile = fileURLToPath(import.meta.url);
if (process.argv.slice(1).some((arg) => path.resolve(arg) === thisFile)) {
  const section = await run();
  console.log(`## ${section.title}\n\n${section.lines.join('\n')}`);
}
