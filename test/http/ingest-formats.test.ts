// Every format added after PDF, DOCX, text and HTML, end to end through POST /v1/ingest/file: a
// real file of each (../shared/corpus) ends `ready`, recorded with its format's media type, and a
// query finds a word that only that file holds. Wrong and damaged files end as a user would see.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentTypeOf, type FormatId } from '../../src/domain/formats.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { multipart, type Part } from '../helpers/multipart.js';
import { CORPUS_DIR, describeWithCorpus } from '../helpers/shared.js';
import { makeZip } from '../pipeline/extract-support.js';

describe('POST /v1/ingest/file with the newer formats', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  const upload = async (parts: Part[]) => {
    const { payload, contentType } = await multipart(parts);
    return h.request('POST', '/v1/ingest/file', { payload, headers: { 'content-type': contentType } });
  };

  /** [format, corpus file, words to query, what the best hit holds] */
  const CASES: [FormatId, string, string, string, number | null][] = [
    ['pptx', 'pptx/powerpoint_sample.pptx', 'rectangle shape', 'A rectangle shape with this text inside.', 2],
    ['pptx', 'pptx/powerpoint_sample.pptx', 'final notes third slide', 'Final notes on the third slide.', 3],
    [
      'xlsx',
      'xlsx/xlsx_03_chartsheet.xlsx',
      'saltwater ducks',
      '| Year | Freshwater Ducks | Saltwater Ducks | Ducks |',
      null,
    ],
    ['csv', 'csv/seattle-weather.csv', 'drizzle', '| drizzle |', null],
    ['html', 'html/v8-blog.html', 'standalone Emscripten', 'Emscripten', null],
    ['odt', 'odt/fake.odt', 'Sarah Mark Ryan', '| Leader | Sarah | Mark | Ryan |', null],
    ['epub', 'epub/alice.epub', 'caterpillar hookah', 'Caterpillar', null],
    ['rtf', 'rtf/issue_15.rtf', 'Arenal volcano', 'Arenal Volcano', null],
    ['eml', 'eml/fake-email-attachment.eml', 'fake attachment', 'Hey this is a fake attachment!', null],
  ];

  describeWithCorpus('a corpus file of each format', () => {
    it.each(CASES)('%s (%s): ready, and "%s" finds it', async (format, file, query, expected, page) => {
      const bytes = readFileSync(path.join(CORPUS_DIR, file));
      const res = await upload([{ name: 'file', value: bytes, filename: path.basename(file) }]);
      expect(res.statusCode).toBe(202);
      const [doc] = await h.waitForDone(h.orgA, res.json().document_ids);
      expect(doc).toMatchObject({ status: 'ready', source: { content_type: contentTypeOf(format) } });
      const [hit] = (
        await h.request('POST', '/v1/query', { body: { query, document_ids: [doc!.id], top_k: 1 } })
      ).json().results;
      expect(hit.text).toContain(expected);
      if (page !== null) {
        expect(hit.page_start).toBeLessThanOrEqual(page);
        expect(hit.page_end).toBeGreaterThanOrEqual(page);
      }
    });
  });

  it('a wrong extension is refused at once (415); a damaged archive ends failed: corrupt', async () => {
    const refused = await upload([
      { name: 'file', value: '%PDF-1.7\nnot a workbook', filename: 'sheet.xlsx' },
    ]);
    expect(refused.statusCode).toBe(415);
    expect(refused.json().detail).toMatch(/^sheet.xlsx is not an XLSX \(starts with PDF signature\)/);
    // Only the first bytes of a ZIP: detection cannot read its directory.
    const stub = await upload([
      { name: 'file', value: Buffer.from('PK\x03\x04AAAAAAAA'), filename: 'deck.pptx' },
    ]);
    expect(stub.statusCode).toBe(415);
    expect(stub.json().detail).toMatch(/^deck.pptx is not a PPTX \(a damaged ZIP archive/);
    // A whole directory, but a part whose deflated bytes are garbage: detection passes (it reads
    // only the directory), extraction fails.
    const damaged = makeZip([
      { name: '[Content_Types].xml', data: '<Types/>' },
      {
        name: 'ppt/presentation.xml',
        deflated: Buffer.from([0xff, 0xff, 0xff, 0xff, 0x00, 0x13, 0x37]),
        claimedSize: 100,
      },
    ]);
    const broken = await upload([{ name: 'file', value: damaged, filename: 'deck.pptx' }]);
    expect(broken.statusCode).toBe(202);
    const [doc] = await h.waitForDone(h.orgA, broken.json().document_ids);
    expect(doc).toMatchObject({ status: 'failed', error: { code: 'corrupt' } });
  });
});
