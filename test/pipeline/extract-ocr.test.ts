// OCR through the real extractor (worker threads, Tesseract wasm, pdf.js rendering) on the
// corpus's scans and photos: the text read against the ground truth, `ocr_pages`, the caps, and
// what OCR=off does.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createCanvas, loadImage } from '@napi-rs/canvas';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { characterAccuracy } from '../../bench/ocr-accuracy.js';
import {
  createPipelineThreads,
  ExtractionError,
  type PipelineThreads,
} from '../../src/pipeline/extract/index.js';
import { MAX_OCR_PIXELS } from '../../src/pipeline/ocr/engine.js';
import { CORPUS_DIR, describeWithCorpus, itWithCorpus } from '../helpers/shared.js';
import { makeTempDir, PDF_DIR, type TempDir } from './extract-support.js';
import { multiPageTiff, pngBomb, rgbaToTiff, rgbaToTiffPage, tiffWithStrip } from './ocr-images.js';

// Recognition takes seconds a page, and many times longer on a machine busy with other work.
vi.setConfig({ testTimeout: 300_000 });

const SCANNED = path.join(CORPUS_DIR, 'scanned-pdf');
const IMAGES = path.join(CORPUS_DIR, 'ocr-image');
const OPTIONS = { maxWorkers: 2, timeoutMs: 240_000, maxHeapMb: 512, pdfMaxPages: 5_000 };

let extractor: PipelineThreads;
let ocrOff: PipelineThreads;
let tmp: TempDir;
beforeAll(async () => {
  extractor = createPipelineThreads({ ...OPTIONS, ocr: { enabled: true, languages: ['eng'] } });
  ocrOff = createPipelineThreads({ ...OPTIONS, maxWorkers: 1, ocr: { enabled: false, languages: ['eng'] } });
  tmp = await makeTempDir('docindex-ocr-');
});
afterAll(async () => {
  await Promise.all([extractor.close(), ocrOff.close()]);
  await tmp.remove();
});

async function failure(promise: Promise<unknown>): Promise<ExtractionError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ExtractionError);
  return error as ExtractionError;
}

/** A corpus image's pixels: width, height and RGBA. */
async function corpusPixels(
  name: string,
): Promise<{ width: number; height: number; data: Uint8ClampedArray }> {
  const image = await loadImage(readFileSync(path.join(IMAGES, name)));
  const canvas = createCanvas(image.width, image.height);
  const context = canvas.getContext('2d');
  context.drawImage(image, 0, 0);
  const { data } = context.getImageData(0, 0, image.width, image.height);
  return { width: image.width, height: image.height, data };
}

/** The corpus PNG's pixels as a TIFF: the same ground truth applies. */
async function corpusPngAsTiff(): Promise<Buffer> {
  const { width, height, data } = await corpusPixels('testocr.png');
  return rgbaToTiff(width, height, data);
}

describeWithCorpus('OCR of images', () => {
  itWithCorpus(
    'reads the PNG scan of printed English at ≥ 95% character accuracy, as one OCR page',
    async () => {
      const truth = readFileSync(path.join(IMAGES, 'testocr.expected.txt'), 'utf8');
      const out = await extractor.extract(path.join(IMAGES, 'testocr.png'), 'png');
      expect(characterAccuracy(out.text, truth)).toBeGreaterThanOrEqual(0.95);
      expect(out).toMatchObject({ format: 'png', contentType: 'image/png', ocrPages: 1, pages: null });
    },
  );

  itWithCorpus('reads the same page as a TIFF', async () => {
    const truth = readFileSync(path.join(IMAGES, 'testocr.expected.txt'), 'utf8');
    const file = await tmp.write('testocr.tiff', await corpusPngAsTiff());
    const out = await extractor.extract(file, 'tiff');
    expect(characterAccuracy(out.text, truth)).toBeGreaterThanOrEqual(0.95);
    expect(out.contentType).toBe('image/tiff');
  });

  itWithCorpus('reads every page of a multi-page TIFF, each as its own page', async () => {
    const truth = readFileSync(path.join(IMAGES, 'testocr.expected.txt'), 'utf8');
    const scan = await corpusPixels('testocr.png');
    const print = await corpusPixels('congress.jpg');
    const file = await tmp.write(
      'letter.tiff',
      multiPageTiff([
        rgbaToTiffPage(scan.width, scan.height, scan.data),
        rgbaToTiffPage(print.width, print.height, print.data),
      ]),
    );
    const out = await extractor.extract(file, 'tiff');
    expect(out).toMatchObject({ format: 'tiff', contentType: 'image/tiff', ocrPages: 2 });
    expect(out.pages).toHaveLength(2);
    const [first, second] = out.pages!;
    expect(first!.page).toBe(1);
    expect(second!.page).toBe(2);
    expect(characterAccuracy(out.text.slice(first!.charStart, first!.charEnd), truth)).toBeGreaterThanOrEqual(
      0.95,
    );
    const secondPage = out.text.slice(second!.charStart, second!.charEnd);
    expect(secondPage).toContain('CONGRESS');
    expect(out.text.slice(first!.charStart, first!.charEnd)).not.toContain('CONGRESS');
  });

  itWithCorpus('reads the headings of a photographed 19th-century print (JPEG)', async () => {
    const out = await extractor.extract(path.join(IMAGES, 'congress.jpg'), 'jpeg');
    expect(out.text).toContain('CONGRESS');
    expect(out.text).toContain('PRESIDENT OF THE UNITED STATES');
    expect(out.ocrPages).toBe(1);
  });

  itWithCorpus('fails a truncated PNG as corrupt', async () => {
    const whole = readFileSync(path.join(IMAGES, 'testocr.png'));
    const file = await tmp.write('cut.png', whole.subarray(0, Math.floor(whole.length / 3)));
    expect((await failure(extractor.extract(file, 'png'))).code).toBe('corrupt');
  });
});

describe('OCR caps on hostile images', () => {
  it('refuses a PNG declaring 100,000 × 100,000 pixels as too_large, before decoding it', async () => {
    const file = await tmp.write('bomb.png', pngBomb(100_000, 100_000));
    const error = await failure(extractor.extract(file, 'png'));
    expect(error.code).toBe('too_large');
    expect(error.message).toContain('100000 × 100000');
  });

  it('refuses a TIFF bomb just over the pixel cap, and reads nothing of it', async () => {
    const side = Math.ceil(Math.sqrt(MAX_OCR_PIXELS)) + 1;
    const file = await tmp.write('bomb.tiff', tiffWithStrip(side, side, Buffer.alloc(1024)));
    expect((await failure(extractor.extract(file, 'tiff'))).code).toBe('too_large');
  });

  it('refuses a multi-page TIFF whose second page is over the pixel cap, before decoding any page', async () => {
    const side = Math.ceil(Math.sqrt(MAX_OCR_PIXELS)) + 1;
    const file = await tmp.write(
      'bomb-page-2.tiff',
      multiPageTiff([
        { width: 4, height: 4, strip: Buffer.alloc(48, 255) },
        { width: side, height: side, strip: Buffer.alloc(1024) },
      ]),
    );
    const error = await failure(extractor.extract(file, 'tiff'));
    expect(error.code).toBe('too_large');
    expect(error.message).toContain('page 2');
  });

  it('fails a TIFF whose page directories loop back on themselves as corrupt, at once', async () => {
    const tiff = multiPageTiff([
      { width: 4, height: 4, strip: Buffer.alloc(48, 255) },
      { width: 4, height: 4, strip: Buffer.alloc(48, 255) },
    ]);
    // The second directory's "next" pointer, aimed back at the first directory (offset 8).
    const second = 8 + 2 + 9 * 12 + 4 + 6 + 48;
    tiff.writeUInt32LE(8, second + 2 + 9 * 12);
    const file = await tmp.write('loop.tiff', tiff);
    const error = await failure(extractor.extract(file, 'tiff'));
    expect(error.code).toBe('corrupt');
    expect(error.message).toContain('directories');
  });

  it('fails an image whose header cannot be read as corrupt', async () => {
    const file = await tmp.write(
      'header.png',
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0]),
    );
    expect((await failure(extractor.extract(file, 'png'))).code).toBe('corrupt');
  });
});

describeWithCorpus('OCR of scanned PDFs', () => {
  itWithCorpus('reads a PDF page that has no text layer, matching the ground truth', async () => {
    const truth = readFileSync(path.join(SCANNED, 'ocr_test.expected.txt'), 'utf8');
    const out = await extractor.extract(path.join(SCANNED, 'ocr_test.pdf'), 'pdf');
    expect(characterAccuracy(out.text, truth)).toBeGreaterThanOrEqual(0.95);
    expect(out.ocrPages).toBe(1);
    expect(out.pages).toEqual([{ page: 1, charStart: 0, charEnd: out.text.length }]);
  });

  itWithCorpus('reads the other scans of the corpus', async () => {
    const lorem = await extractor.extract(path.join(SCANNED, 'loremipsum-flat.pdf'), 'pdf');
    expect(lorem.text).toContain('Lorem ipsum dolor sit amet');
    expect(lorem.ocrPages).toBeGreaterThan(0);
    const book = await extractor.extract(path.join(SCANNED, 'c02-22.pdf'), 'pdf');
    expect(book.text).toContain('garden');
    expect(book.ocrPages).toBeGreaterThan(0);
  });

  itWithCorpus('leaves PDFs with a text layer to pdf.js: no page goes to OCR', async () => {
    const out = await extractor.extract(path.join(PDF_DIR, 'pdflatex-4-pages.pdf'), 'pdf');
    expect(out.ocrPages).toBe(0);
    expect(out.text.length).toBeGreaterThan(1000);
  });
});

describeWithCorpus('the time cap', () => {
  itWithCorpus(
    'ends an OCR that overruns it as timeout, and the pool carries on with a fresh thread',
    async () => {
      // Far below the seconds this photo takes to recognise: the thread is ended inside the wasm.
      const hasty = createPipelineThreads({ ...OPTIONS, maxWorkers: 1, timeoutMs: 1_000 });
      try {
        const error = await failure(hasty.extract(path.join(IMAGES, 'congress.jpg'), 'jpeg'));
        expect(error.code).toBe('timeout');
        const file = await tmp.write('after.txt', 'still working\n');
        expect((await hasty.extract(file, 'txt')).text).toBe('still working\n');
      } finally {
        await hasty.close();
      }
    },
  );
});

describeWithCorpus('OCR=off', () => {
  itWithCorpus(
    'fails a scanned PDF no_text, saying OCR is off, instead of a ready document without text',
    async () => {
      const error = await failure(ocrOff.extract(path.join(SCANNED, 'ocr_test.pdf'), 'pdf'));
      expect(error.code).toBe('no_text');
      expect(error.message).toContain('OCR=off');
    },
  );

  itWithCorpus(
    'fails it no_text as well when the PDF is large enough to be chunked page by page',
    async () => {
      const paged = createPipelineThreads({
        ...OPTIONS,
        maxWorkers: 1,
        ocr: { enabled: false, languages: ['eng'] },
        pagedStreamFromBytes: 0,
      });
      try {
        const stream = paged.indexFile(path.join(SCANNED, 'ocr_test.pdf'), 'pdf', {
          chunkSize: 64,
          chunkOverlap: 8,
        });
        const error = await failure(
          (async () => {
            for await (const _ of stream.chunks) {
              // nothing is expected before the failure
            }
          })(),
        );
        expect(error.code).toBe('no_text');
        expect(error.message).toContain('OCR=off');
      } finally {
        await paged.close();
      }
    },
  );

  itWithCorpus('fails an image no_text', async () => {
    const error = await failure(ocrOff.extract(path.join(IMAGES, 'testocr.png'), 'png'));
    expect(error.code).toBe('no_text');
  });

  itWithCorpus('still reads PDFs with a text layer', async () => {
    const out = await ocrOff.extract(path.join(PDF_DIR, 'pdflatex-4-pages.pdf'), 'pdf');
    expect(out.ocrPages).toBe(0);
    expect(out.text.length).toBeGreaterThan(1000);
  });
});
