// A file may give at most 16 characters of text per byte of its size (4 Mi characters whatever
// its size), with the default settings: past that, a ZIP-based file or an e-mail fails
// `archive_limits` and any other file `too_large`. Each format gets a crafted file well within
// the archive limits (every part inflates to under 100× its packed size) whose text is over 20
// times its size: before the bound, each gave megabytes of text, thousands of chunks. A real
// document of each kind still passes; the largest ratio among real files is in bench/RESULTS.md.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExtractionError } from '../../src/pipeline/extract/errors.js';
import { createPipelineThreads, type PipelineThreads } from '../../src/pipeline/extract/index.js';
import type { SourceFormat } from '../../src/pipeline/extract/types.js';
import { crafted, emailWith, paragraphs, spanningTable, TEXT_CHARS } from '../helpers/text-bombs.js';
import { makeZip } from '../helpers/zip.js';
import { makeTempDir, type TempDir } from './extract-support.js';

let extractor: PipelineThreads;
let tmp: TempDir;
beforeAll(async () => {
  // The default text bound: no maxTextRatio or textFloorChars given.
  extractor = createPipelineThreads({
    maxWorkers: 2,
    timeoutMs: 60_000,
    maxHeapMb: 1024,
    pdfMaxPages: 5_000,
  });
  tmp = await makeTempDir();
});
afterAll(async () => {
  await extractor.close();
  await tmp.remove();
});

async function extractOrFail(name: string, data: Buffer | string, format: SourceFormat) {
  const file = await tmp.write(name, data);
  return extractor.extract(file, format).then(
    (result) => ({ ok: true as const, chars: result.text.length, size: Buffer.byteLength(data) }),
    (error: unknown) => {
      if (!(error instanceof ExtractionError)) throw error;
      return { ok: false as const, code: error.code, message: error.message };
    },
  );
}

describe('the text a file may give, relative to its size', () => {
  for (const format of ['docx', 'odt', 'epub', 'pptx', 'xlsx'] as const) {
    it(`a ${format} whose text is over 20 times its size fails archive_limits`, async () => {
      const zip = makeZip(crafted(format, paragraphs(TEXT_CHARS)));
      expect(TEXT_CHARS / zip.length).toBeGreaterThan(20);
      const outcome = await extractOrFail(`big.${format}`, zip, format);
      expect(outcome).toMatchObject({
        ok: false,
        code: 'archive_limits',
        message: expect.stringContaining('at most 16 per byte of the file'),
      });
    });
  }

  it('an e-mail whose attached DOCX gives text over 20 times the message’s size fails archive_limits', async () => {
    const eml = emailWith(makeZip(crafted('docx', paragraphs(TEXT_CHARS))));
    expect(TEXT_CHARS / eml.length).toBeGreaterThan(20);
    expect(await extractOrFail('big.eml', eml, 'eml')).toMatchObject({ ok: false, code: 'archive_limits' });
  });

  it('a web page of cells spanning 100 columns fails too_large', async () => {
    const html = spanningTable(500);
    expect(await extractOrFail('span.html', html, 'html')).toMatchObject({ ok: false, code: 'too_large' });
  });

  it('the same files, smaller, pass: the floor lets any file give 4 Mi characters', async () => {
    const texts = paragraphs(1_000_000);
    for (const format of ['docx', 'odt', 'epub', 'pptx', 'xlsx'] as const) {
      const outcome = await extractOrFail(`small.${format}`, makeZip(crafted(format, texts)), format);
      expect(outcome, format).toMatchObject({ ok: true });
    }
    expect(await extractOrFail('span.html', spanningTable(50), 'html')).toMatchObject({ ok: true });
  });
});
