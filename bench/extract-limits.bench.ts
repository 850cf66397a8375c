// Extraction limits against hostile files. (A) The text bound relative to a file's size
// (pipeline/extract/text-limit.ts): the ratio of text to file size over every real document of
// the shared corpus and the test fixtures (the bound must pass them all), and, for a crafted file
// of each format that unpacks parts (and a web page), the chunks it gives per byte uploaded with
// the bound off and with the default bound, in the same run. (B) A web page of 200,000 nested
// <div>s through the extractor: its extraction time now that nesting is bounded.
import { readdirSync, statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FormatId } from '../src/domain/formats.js';
import { createPipelineThreads, detectFormat, type PipelineThreads } from '../src/pipeline/extract/index.js';
import { DEFAULT_MAX_TEXT_RATIO, DEFAULT_TEXT_FLOOR_CHARS } from '../src/pipeline/extract/text-limit.js';
import { crafted, emailWith, paragraphs, spanningTable, TEXT_CHARS } from '../test/helpers/text-bombs.js';
import { makeZip } from '../test/helpers/zip.js';
import { type Benchmark, fmt, median, projectRoot, timeRuns } from './lib.js';

const CHUNKING = { chunkSize: 512, chunkOverlap: 64 };
const BASE = { maxWorkers: 1, timeoutMs: 600_000, maxHeapMb: 2048, pdfMaxPages: 5_000 };

function filesUnder(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) filesUnder(full, out);
    else out.push(full);
  }
  return out;
}

/** Characters of text per byte of file, for every file detection accepts. */
async function realRatios(
  extractor: PipelineThreads,
): Promise<{ file: string; format: string; ratio: number }[]> {
  const root = projectRoot();
  const corpus = path.resolve(root, '../shared/corpus');
  const files = [...filesUnder(corpus), ...filesUnder(path.join(root, 'test/fixtures'))];
  const ratios: { file: string; format: string; ratio: number }[] = [];
  for (const file of files) {
    const detected = await detectFormat({ path: file, filename: path.basename(file) });
    if (!detected.ok) continue;
    // Some fixtures are meant to fail (encrypted, damaged): they give no text to measure.
    const text = await extractor.extract(file, detected.format).then(
      (extracted) => extracted.text,
      () => null,
    );
    if (text === null) continue;
    const shown = file.startsWith(corpus)
      ? `corpus/${path.relative(corpus, file)}`
      : path.relative(root, file);
    ratios.push({ file: shown, format: detected.format, ratio: text.length / statSync(file).size });
  }
  return ratios.sort((a, b) => b.ratio - a.ratio);
}

/** Chunks of the file, or the failure's code. */
async function chunksOf(
  extractor: PipelineThreads,
  file: string,
  format: FormatId,
): Promise<number | string> {
  try {
    let chunks = 0;
    for await (const batch of extractor.indexFile(file, format, CHUNKING).chunks) chunks += batch.length;
    return chunks;
  } catch (error) {
    return `failed \`${(error as { code?: string }).code ?? 'error'}\``;
  }
}

export const run: Benchmark = async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'docindex-bench-limits-'));
  const unbounded = createPipelineThreads({ ...BASE, maxTextRatio: 1_000_000 });
  const bounded = createPipelineThreads(BASE);
  try {
    const ratios = await realRatios(bounded);
    const largest = ratios[0]!;

    const texts = paragraphs(TEXT_CHARS);
    const docx = makeZip(crafted('docx', texts));
    const cases: { format: FormatId; what: string; data: Buffer | string }[] = [
      ...(['docx', 'odt', 'epub', 'pptx', 'xlsx'] as const).map((format) => ({
        format,
        what: 'one text part, deflated ~34×',
        data: format === 'docx' ? docx : makeZip(crafted(format, texts)),
      })),
      { format: 'eml', what: 'that DOCX attached in base64', data: emailWith(docx) },
      { format: 'html', what: 'cells spanning 100 columns', data: spanningTable(500) },
    ];
    const rows: string[] = [];
    for (const { format, what, data } of cases) {
      const file = path.join(dir, `crafted.${format}`);
      await writeFile(file, data);
      const bytes = Buffer.byteLength(data);
      const before = await chunksOf(unbounded, file, format);
      const after = await chunksOf(bounded, file, format);
      const perKb = (n: number | string) => (typeof n === 'number' ? fmt((n / bytes) * 1024, 1) : '0');
      rows.push(
        `| ${format} | ${what} | ${fmt(bytes / 1024, 0)} KiB | ${before} | ${perKb(before)} | ${after} | ${perKb(after)} |`,
      );
    }

    const depth = 200_000;
    const page = `<html><body>${'<div>'.repeat(depth)}deep text${'</div>'.repeat(depth)}</body></html>`;
    const pageFile = path.join(dir, 'deep.html');
    await writeFile(pageFile, page);
    const deepMs = await timeRuns(3, () => bounded.extract(pageFile, 'html'));

    return {
      title: 'Extraction limits: text per upload byte, deep markup',
      lines: [
        `### A. Text per byte of file (bound: ${DEFAULT_MAX_TEXT_RATIO} characters per byte, at least ${DEFAULT_TEXT_FLOOR_CHARS.toLocaleString('en-US')} characters)`,
        '',
        `Over the ${ratios.length} real files of the shared corpus and test/fixtures that detection accepts, the largest ` +
          `ratio of extracted characters to file bytes is **${fmt(largest.ratio, 3)}** (${largest.file}, ${largest.format}); the next: ` +
          ratios
            .slice(1, 4)
            .map((r) => `${fmt(r.ratio, 3)} (${r.file})`)
            .join(', ') +
          '.',
        '',
        `Crafted files (every ZIP part within the archive limits), chunked with chunk_size ${CHUNKING.chunkSize}, overlap ${CHUNKING.chunkOverlap}; ` +
          '"before" is the same extractor with the ratio bound off (maxTextRatio 1,000,000), in the same run. Chunk counts are ' +
          'deterministic, so one run each.',
        '',
        '| format | crafted file | size | chunks before | per KiB before | after | per KiB after |',
        '|---|---|---:|---:|---:|---:|---:|',
        ...rows,
        '',
        '### B. 200,000 nested <div>s (2.2 MB) through the extractor',
        '',
        `Extraction (one thread): median **${fmt(median(deepMs) / 1000, 2)} s** of 3 runs ` +
          `(${fmt(Math.min(...deepMs) / 1000, 2)}–${fmt(Math.max(...deepMs) / 1000, 2)} s); ` +
          'with nesting unbounded, the same page took over a minute of one thread (it fails `timeout` under a 30 s cap in test/pipeline/html-nesting.test.ts).',
      ],
    };
  } finally {
    await unbounded.close();
    await bounded.close();
    await rm(dir, { recursive: true, force: true });
  }
};
