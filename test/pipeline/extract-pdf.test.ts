// PDF extraction through the real extractor (worker threads, pdf.js) on real files: the words
// poppler finds, in reading order, on the right pages; and the failures a user would see.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleCpuHeadroom } from '../../src/pipeline/extract/cpu-headroom.js';
import {
  createPipelineThreads,
  type ExtractedText,
  ExtractionError,
  type PipelineThreads,
} from '../../src/pipeline/extract/index.js';
import { type PageRange, splitPages } from '../../src/pipeline/extract/page-ranges.js';
import { assemblePages } from '../../src/pipeline/extract/pages.js';
import { createWorkerPool } from '../../src/pipeline/extract/pool.js';
import { layoutPageText, type PdfTextItem } from '../../src/pipeline/formats/pdf/extract.js';
import { describeWithCorpus, HAVE_CORPUS, itWithCorpus } from '../helpers/shared.js';
import {
  FIXTURES,
  makeTempDir,
  PDF_DIR,
  positionsInOrder,
  squash,
  type TempDir,
  wordRecall,
} from './extract-support.js';

const OPTIONS = { maxWorkers: 2, timeoutMs: 60_000, maxHeapMb: 512, pdfMaxPages: 5_000 };

let extractor: PipelineThreads;
let tmp: TempDir;
beforeAll(async () => {
  extractor = createPipelineThreads(OPTIONS);
  tmp = await makeTempDir();
});
afterAll(async () => {
  await extractor.close();
  await tmp.remove();
});

const pageCounts = new Map<string, number>(
  HAVE_CORPUS
    ? (
        JSON.parse(readFileSync(path.join(PDF_DIR, 'files.json'), 'utf8')) as {
          data: { path: string; pages: number }[];
        }
      ).data.map((file) => [path.basename(file.path), file.pages])
    : [],
);
const readable = [
  'minimal-document',
  '002-trivial-libre-office-writer',
  'pdflatex-4-pages',
  'pdflatex-outline',
  'GeoTopo-komprimiert',
  'google-doc-document',
  'habibi',
  'libre-office-link',
  'crazyones-pdfa',
  'pdfkit',
  'multicolumn',
  'pdflatex-forms',
];

function reference(name: string): string {
  return readFileSync(path.join(PDF_DIR, 'pdftotext', `${name}.txt`), 'utf8');
}

function pageText(result: ExtractedText, page: number): string {
  const span = result.pages!.find((p) => p.page === page)!;
  return result.text.slice(span.charStart, span.charEnd);
}

async function failure(promise: Promise<unknown>): Promise<ExtractionError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ExtractionError);
  return error as ExtractionError;
}

describeWithCorpus('corpus PDFs against poppler', () => {
  const results = new Map<string, ExtractedText>();
  beforeAll(async () => {
    for (const name of readable)
      results.set(name, await extractor.extract(path.join(PDF_DIR, `${name}.pdf`), 'pdf'));
  });

  it.each(readable)('%s: ≥ 90%% of pdftotext words, one span per page', (name) => {
    const result = results.get(name)!;
    expect(result.format).toBe('pdf');
    expect(result.contentType).toBe('application/pdf');
    expect(wordRecall(reference(name), result.text)).toBeGreaterThanOrEqual(0.9);
    expect(result.pages!.map((p) => p.page)).toEqual(
      Array.from({ length: pageCounts.get(`${name}.pdf`)! }, (_, i) => i + 1),
    );
  });

  it('page spans hold that page of pdftotext (form feeds split its pages)', () => {
    for (const name of ['pdflatex-4-pages', 'pdflatex-outline', 'multicolumn', 'GeoTopo-komprimiert']) {
      const pages = reference(name).split('\f');
      const result = results.get(name)!;
      const recalls = result.pages!.map((span) =>
        wordRecall(pages[span.page - 1]!, pageText(result, span.page)),
      );
      // Formula-heavy pages of the thesis lose sub- and superscripts; a shifted page would score near 0.
      expect(Math.min(...recalls), name).toBeGreaterThanOrEqual(0.7);
      expect(recalls.filter((r) => r >= 0.9).length / recalls.length, name).toBeGreaterThanOrEqual(0.85);
    }
  });

  it('pdflatex-4-pages: each page starts where poppler says and ends with its page number', () => {
    const result = results.get('pdflatex-4-pages')!;
    const starts = [
      'Hello, here is some text without a meaning.',
      'information. Really? Is there no information?',
      'you information about the selected font,',
      'in of the original language.',
    ];
    starts.forEach((start, i) => {
      const text = squash(pageText(result, i + 1));
      expect(text.startsWith(start), `page ${i + 1}`).toBe(true);
      expect(text.endsWith(` ${i + 1}`), `page ${i + 1}`).toBe(true);
    });
    // Pages are separated by a blank line, and spans point at exactly their text.
    const [first, second] = result.pages!;
    expect(result.text.slice(first!.charEnd, second!.charStart)).toBe('\n\n');
  });

  it('multicolumn.pdf: the left column is read before the right one, lines never interleave', () => {
    const text = results.get('multicolumn')!.text;
    const order = positionsInOrder(text, [
      'Two-Column Document with Lorem Ipsum',
      'This is a sample document with two columns filled with Lorem Ipsum text.',
      'Lorem ipsum dolor sit amet, consectetuer adipiscing elit.',
      'Pellentesque cursus luctus mauris.',
      'Vivamus viverra fermentum felis.',
      'pellentesque ante. Phasellus adipiscing semper elit.',
      'Maecenas lacinia.',
      'Quisque ullamcorper placerat ipsum.',
      'Quisque egestas wisi eget nunc.',
      'Table 1: EU Countries Information',
    ]);
    expect(order).not.toContain(-1);
  });

  it('GeoTopo: umlauts, ligatures and known sentences in order, on their pages', () => {
    const result = results.get('GeoTopo-komprimiert')!;
    expect(
      positionsInOrder(result.text, [
        'Einführung in die Geometrie und Topologie',
        'Dieses Skript wurde im Wintersemester 2013/2014 von Martin Thoma geschrieben.',
        'Jérôme Urhausen hat durch viele Verbesserungsvorschläge und Beweise',
        'Die Kugeloberfläche S2 lässt sich durch strecken, stauchen und umformen zur Würfeloberfläche',
      ]),
    ).not.toContain(-1);
    // pdf.js maps the "fi"/"fl" ligature glyphs to plain letters (NFKC).
    expect(result.text).not.toMatch(/[\ufb00-\ufb06]/);
    expect(squash(pageText(result, 2))).toContain('Dieses Skript wurde im Wintersemester 2013/2014');
    // Words split by TeX at a line end come back whole.
    expect(result.text).toContain('Widerspruchsbeweisen');
  });

  it('habibi.pdf: Arabic comes out as Arabic letters', () => {
    const text = results.get('habibi')!.text;
    expect(text).toContain('habibi');
    expect(text).toMatch(/[\u0600-\u06ff]{4}/);
  });

  it('short documents from other producers keep their words', () => {
    expect(squash(results.get('libre-office-link')!.text)).toContain('This is a link to an awesome blog.');
    expect(squash(results.get('pdfkit')!.text)).toContain('Header Foo: bar ABC: DEF');
    expect(squash(results.get('pdflatex-forms')!.text)).toContain('Name Check Submit');
  });
});

describe('fixture PDFs (test/fixtures/extract)', () => {
  it('hyphenation.pdf (groff): words hyphenated at a line end are rejoined; markers on their pages', async () => {
    const result = await extractor.extract(path.join(FIXTURES, 'hyphenation.pdf'), 'pdf');
    expect(result.pages).toHaveLength(3);
    // groff broke "man-ufacturing" and "uncharacteristi-cally" across lines (see pdftotext -layout).
    expect(result.text).toContain('manufacturing');
    expect(result.text).toContain('uncharacteristically');
    expect(result.text).not.toMatch(/man-\s*ufacturing|uncharacteristi-\s*cally/);
    expect(squash(pageText(result, 1))).toContain(
      'The marker sentence for page one is: alpha bravo charlie.',
    );
    expect(squash(pageText(result, 2))).toContain('The marker sentence for page two is: delta echo foxtrot.');
    expect(squash(pageText(result, 3))).toContain('The marker sentence for page three is: golf hotel india.');
    expect(pageText(result, 1)).not.toContain('delta echo');
    // Headings stand apart from the body by a blank line.
    expect(result.text).toMatch(/\n\n2\. Second Page\n/);
  });

  it('owner-protected.pdf (qpdf, AES-256, empty user password): opens without a password, so it is read', async () => {
    const result = await extractor.extract(path.join(FIXTURES, 'owner-protected.pdf'), 'pdf');
    expect(squash(result.text)).toContain('The marker sentence for page two is: delta echo foxtrot.');
  });
});

describe('PDF failures', () => {
  itWithCorpus('a password-protected PDF → encrypted', async () => {
    const error = await failure(
      extractor.extract(path.join(PDF_DIR, 'libreoffice-writer-password.pdf'), 'pdf'),
    );
    expect(error.code).toBe('encrypted');
    expect(error.message).toBe('the PDF is password-protected');
  });

  itWithCorpus('a PDF truncated at half → corrupt', async () => {
    for (const name of ['GeoTopo-komprimiert.pdf', 'pdflatex-4-pages.pdf']) {
      const bytes = await readFile(path.join(PDF_DIR, name));
      const file = await tmp.write(`half-${name}`, bytes.subarray(0, bytes.length >> 1));
      const error = await failure(extractor.extract(file, 'pdf'));
      expect(error.code, name).toBe('corrupt');
      expect(error.message).toMatch(/damaged or truncated/);
    }
  });

  it('a PNG handed over as a PDF → corrupt', async () => {
    const file = await tmp.write('image.pdf', Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'));
    expect((await failure(extractor.extract(file, 'pdf'))).code).toBe('corrupt');
  });

  itWithCorpus('more pages than pdfMaxPages → too_large, before any page is read', async () => {
    const capped = createPipelineThreads({ ...OPTIONS, maxWorkers: 1, pdfMaxPages: 3 });
    try {
      const error = await failure(capped.extract(path.join(PDF_DIR, 'pdflatex-4-pages.pdf'), 'pdf'));
      expect(error.code).toBe('too_large');
      expect(error.message).toBe('the PDF has 4 pages; at most 3 are allowed');
      // At the cap is fine.
      const ok = await capped.extract(path.join(FIXTURES, 'hyphenation.pdf'), 'pdf');
      expect(ok.pages).toHaveLength(3);
    } finally {
      await capped.close();
    }
  });

  itWithCorpus('a PDF that takes longer than timeoutMs → timeout, and the pool carries on', async () => {
    const hasty = createPipelineThreads({ ...OPTIONS, maxWorkers: 1, timeoutMs: 300 });
    try {
      const started = Date.now();
      const error = await failure(hasty.extract(path.join(PDF_DIR, 'GeoTopo-komprimiert.pdf'), 'pdf'));
      expect(error.code).toBe('timeout');
      expect(error.message).toBe('extraction took longer than 300 ms');
      expect(Date.now() - started).toBeLessThan(5_000);
      // The stuck thread was terminated; a fresh one serves the next document.
      const text = await tmp.write('after-timeout.txt', 'still working');
      expect((await hasty.extract(text, 'txt')).text).toBe('still working');
    } finally {
      await hasty.close();
    }
  });
});

describe('a big PDF split across threads', () => {
  const headroom = (cpus: number) => ({ current: () => cpus, stop: () => {} });

  itWithCorpus('with CPUs to spare: split in two, same text and spans as one thread', async () => {
    const file = path.join(PDF_DIR, 'GeoTopo-komprimiert.pdf');
    const plans: PageRange[][] = [];
    const idle = createWorkerPool(
      { ...OPTIONS, maxWorkers: 2 },
      { cpuHeadroom: headroom(2), onPdfPlan: (r) => plans.push(r) },
    );
    const single = createPipelineThreads({ ...OPTIONS, maxWorkers: 1 });
    try {
      const split = await idle.extract(file, 'pdf');
      expect(plans).toEqual([
        [
          { from: 1, to: 59 },
          { from: 60, to: 117 },
        ],
      ]);
      const alone = await single.extract(file, 'pdf');
      expect(split.text).toBe(alone.text);
      expect(split.pages).toEqual(alone.pages);
    } finally {
      await Promise.all([idle.close(), single.close()]);
    }
  });

  itWithCorpus('on a machine whose CPUs are busy, or for a short PDF: one thread', async () => {
    const plans: PageRange[][] = [];
    const busy = createWorkerPool(
      { ...OPTIONS, maxWorkers: 2 },
      { cpuHeadroom: headroom(0.6), onPdfPlan: (r) => plans.push(r) },
    );
    const idle = createWorkerPool(
      { ...OPTIONS, maxWorkers: 2 },
      { cpuHeadroom: headroom(2), onPdfPlan: (r) => plans.push(r) },
    );
    try {
      await busy.extract(path.join(PDF_DIR, 'GeoTopo-komprimiert.pdf'), 'pdf');
      await idle.extract(path.join(PDF_DIR, 'pdflatex-4-pages.pdf'), 'pdf');
      expect(plans).toEqual([[{ from: 1, to: 117 }], [{ from: 1, to: 4 }]]);
    } finally {
      await Promise.all([busy.close(), idle.close()]);
    }
  });

  it('the real CPU sampler sees a CPU that another process keeps busy', async () => {
    const sampler = sampleCpuHeadroom(100);
    // A child process spinning for 1.5 s: its CPU is not this process's, so it is not headroom.
    const spinner = spawn(process.execPath, [
      '-e',
      'const end = Date.now() + 1500; while (Date.now() < end);',
    ]);
    try {
      await new Promise((resolve) => setTimeout(resolve, 700));
      expect(sampler.current()).toBeGreaterThanOrEqual(0);
      expect(sampler.current()).toBeLessThanOrEqual(availableParallelism() - 0.5);
    } finally {
      sampler.stop();
      spinner.kill();
    }
  });

  it('the CPU a pool’s own pipeline process uses is not counted as another process’s', async () => {
    const spinner = spawn(process.execPath, [
      '-e',
      'const end = Date.now() + 2500; while (Date.now() < end);',
    ]);
    // Two samplers see the same machine; only one is told the spinner is its own. On a machine
    // whose cores other tests keep busy the spinner may get less than half a CPU, so the bound is
    // what a 250 ms sample tells from nothing (CPU time comes in 10 ms ticks), not a full core.
    const own = sampleCpuHeadroom(250, () => [spinner.pid!]);
    const other = sampleCpuHeadroom(250);
    try {
      await new Promise((resolve) => setTimeout(resolve, 1200));
      expect(own.current() - other.current()).toBeGreaterThanOrEqual(0.25);
    } finally {
      own.stop();
      other.stop();
      spinner.kill();
    }
  });

  it('splitPages covers every page once, in order', () => {
    expect(splitPages(117, 2)).toEqual([
      { from: 1, to: 59 },
      { from: 60, to: 117 },
    ]);
    expect(splitPages(10, 3)).toEqual([
      { from: 1, to: 4 },
      { from: 5, to: 7 },
      { from: 8, to: 10 },
    ]);
    expect(splitPages(0, 1)).toEqual([{ from: 1, to: 0 }]);
  });

  it('assemblePages: empty pages (a scan without text layer) get empty spans and no extra blank lines', () => {
    const result = assemblePages(
      new Map([
        [1, ['one', '']],
        [3, ['three', '']],
      ]),
      'pdf',
    );
    expect(result.text).toBe('one\n\nthree');
    expect(result.pages).toEqual([
      { page: 1, charStart: 0, charEnd: 3 },
      { page: 2, charStart: 3, charEnd: 3 },
      { page: 3, charStart: 5, charEnd: 10 },
      { page: 4, charStart: 10, charEnd: 10 },
    ]);
    expect(assemblePages(new Map([[1, ['', '']]]), 'pdf').text).toBe('');
  });
});

describe('layoutPageText', () => {
  const at = (str: string, y: number, hasEOL = true, size = 10): PdfTextItem => ({
    str,
    transform: [size, 0, 0, size, 72, y],
    hasEOL,
  });

  it('rejoins a word hyphenated at a line end, keeps real hyphens and capitalised continuations', () => {
    expect(layoutPageText([at('an exam-', 700), at('ple of it', 688)])).toBe('an example of it');
    expect(layoutPageText([at('Schwarz-', 700), at('Weiß', 688)])).toBe('Schwarz-\nWeiß');
    expect(layoutPageText([at('one --', 700), at('two', 688)])).toBe('one --\ntwo');
    expect(layoutPageText([at('soft\u00ad', 700), at('ware', 688)])).toBe('software');
  });

  it('starts a paragraph at a larger gap, or when the next line is higher up (next column)', () => {
    const lines = [at('a1', 700), at('a2', 688), at('a3', 676), at('b1', 640), at('b2', 628), at('c1', 700)];
    expect(layoutPageText(lines)).toBe('a1\na2\na3\n\nb1\nb2\n\nc1');
  });

  it('breaks lines on a baseline jump even without an end-of-line mark', () => {
    expect(
      layoutPageText([
        at('first', 700, false),
        at(' ', 700, false),
        at('line', 700, false),
        at('second', 688, false),
      ]),
    ).toBe('first line\nsecond');
  });

  it('drops control characters of unmapped glyphs and empty lines', () => {
    expect(layoutPageText([at('\u0001\u0002', 700), at('text\u0000', 688), at('   ', 676)])).toBe('text');
    expect(layoutPageText([])).toBe('');
  });
});
