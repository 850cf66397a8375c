// The formats added after PDF, DOCX, text and HTML: pptx, xlsx, csv/tsv, odt, epub, rtf and eml.
// Real files made by other people's tools (../shared/corpus) give their text through the worker
// pool, compared with the reference outputs where the corpus has them (docling's Markdown by word
// overlap, striprtf's text more strictly); hostile files built here (ZIP bombs, 10,001 entries,
// billion laughs and external entities, truncated files, wrong extensions) end with the failure
// code a user would see, never a crash or a hang.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectChunks } from '../../src/domain/chunk-batches.js';
import { type FormatId, formatSpec } from '../../src/domain/formats.js';
import {
  createPipelineThreads,
  detectFormat,
  ExtractionError,
  type PipelineThreads,
} from '../../src/pipeline/extract/index.js';
import { describeWithCorpus, itWithCorpus } from '../helpers/shared.js';
import {
  CORPUS,
  deflatedZeros,
  makeTempDir,
  makeZip,
  oleFile,
  type TempDir,
  type WorkbookSpec,
  wordRecall,
  workbookEntries,
  type ZipEntrySpec,
} from './extract-support.js';

let extractor: PipelineThreads;
let tmp: TempDir;
beforeAll(async () => {
  extractor = createPipelineThreads({ maxWorkers: 2, timeoutMs: 30_000, maxHeapMb: 512, pdfMaxPages: 5_000 });
  tmp = await makeTempDir();
});
afterAll(async () => {
  await extractor.close();
  await tmp.remove();
});

const corpus = (format: string, name: string) => path.join(CORPUS, format, name);

async function failure(promise: Promise<unknown>): Promise<ExtractionError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ExtractionError);
  return error as ExtractionError;
}

/** What the corpus file extracts to, after detection by its name agreed on the format. */
async function extractCorpus(format: FormatId, name: string) {
  const file = corpus(format, name);
  const detected = await detectFormat({ path: file, filename: name });
  expect(detected).toEqual({ ok: true, format });
  // Without a name (a URL like /download?id=3) the bytes alone say the same.
  if (format !== 'csv')
    expect(await detectFormat({ path: file, filename: null })).toEqual({ ok: true, format });
  return extractor.extract(file, format);
}

describeWithCorpus('PowerPoint (.pptx)', () => {
  itWithCorpus('slides are pages, in order, with tables as Markdown and the speaker notes', async () => {
    const result = await extractCorpus('pptx', 'powerpoint_sample.pptx');
    expect(result.pages).toHaveLength(3);
    const page = (n: number) =>
      result.text.slice(result.pages![n - 1]!.charStart, result.pages![n - 1]!.charEnd);
    expect(page(1)).toMatch(/^Test Table Slide/);
    expect(page(1)).toContain('| R1 | True | False |');
    expect(page(1)).toContain('| --- |');
    expect(page(2)).toContain('Second slide title');
    expect(page(2)).toContain('A rectangle shape with this text inside.');
    expect(page(2)).toContain('Notes:\nSome notes on the second slide.');
    expect(page(3)).toContain('Notes:\nFinal notes on the third slide.\nSecond line of notes.');
    const reference = await readFile(corpus('pptx', 'powerpoint_sample.expected.md'), 'utf8');
    expect(wordRecall(reference, result.text)).toBeGreaterThan(0.9);
  });

  itWithCorpus('a Google Slides export: nested bullets and a 3×3 table', async () => {
    const result = await extractCorpus('pptx', 'sample-presentation.pptx');
    expect(result.pages).toHaveLength(4);
    expect(result.text).toContain('This one is a sub-sub-bullet');
    expect(result.text).toContain('| Table | A | B | C |\n| --- | --- | --- | --- |\n| 1 | A1 | B1 | C1 |');
  });

  itWithCorpus('python-pptx table cells, merged cells repeated across their columns', async () => {
    const { text } = await extractCorpus('pptx', 'tbl-cell.pptx');
    expect(text).toContain('unladen swallows');
    expect(text).toContain('| merged cell | merged cell |');
    expect(text).toContain('| a | b | c |\n| --- | --- | --- |\n| d | e | f |\n| g | h | i |');
  });
});

/**
 * docling's Markdown with its chart blocks removed (the series caption, "<!-- image -->", the
 * chart's kind and its data table, or a chart's title): docindex reads cells, not charts.
 */
function withoutCharts(markdown: string): string {
  return markdown
    .replace(/^(?:'[^\n]*\n\n)?<!-- image -->\n\n(?:\w+ chart\n\n(?:\|[^\n]*\n?)+)?/gm, '')
    .replace(/^Wild Duck Observations by Year$/m, '');
}

describeWithCorpus('Excel (.xlsx)', () => {
  itWithCorpus('every sheet under its name, rows as Markdown table lines, close to docling', async () => {
    const { text } = await extractCorpus('xlsx', 'xlsx_01.xlsx');
    expect(text.match(/^## Sheet\d$/gm)).toEqual(['## Sheet1', '## Sheet2', '## Sheet3', '## Sheet4']);
    expect(text).toContain('| first | second | third |\n| --- | --- | --- |\n| 1 | 5 | 9 |');
    const reference = withoutCharts(await readFile(corpus('xlsx', 'xlsx_01.expected.md'), 'utf8'));
    expect(wordRecall(reference, text)).toBeGreaterThan(0.9);
  });

  itWithCorpus('formulas give the values Excel cached; a chart sheet is named with no table', async () => {
    const { text } = await extractCorpus('xlsx', 'xlsx_03_chartsheet.xlsx');
    expect(text).toContain('## Duck Observations');
    // "Ducks" is a formula (fresh + salt water): its cached values are there.
    expect(text).toContain('| 2019 | 120 | 80 | 200 |');
    expect(text).toContain('| 2024 | 180 | 130 | 310 |');
    expect(text).toMatch(/## Duck Chart$/);
    const reference = withoutCharts(await readFile(corpus('xlsx', 'xlsx_03_chartsheet.expected.md'), 'utf8'));
    expect(wordRecall(reference, text)).toBeGreaterThan(0.9);
  });

  itWithCorpus('dates, booleans and special characters (calamine test workbook)', async () => {
    const { text } = await extractCorpus('xlsx', 'issues.xlsx');
    expect(text).toContain('| 2016-10-20 |');
    expect(text).toContain('| false |');
    expect(text).toContain('àâéêèçöïî«»');
    expect(text).toContain('☺');
    const cups = await extractCorpus('xlsx', 'stanley-cups.xlsx');
    expect(cups.text).toContain('## Stanley Cups Since 67');
    expect(cups.text).toContain('| Maple Leafs | TOR | 13 |');
  });
});

describe('Excel cells, in workbooks built here', () => {
  let counter = 0;
  const extract = async (spec: WorkbookSpec) =>
    extractor.extract(await tmp.write(`built-${counter++}.xlsx`, makeZip(workbookEntries(spec))), 'xlsx');

  it('each cell type as Excel shows it; empty rows, error values and empty right columns left out', async () => {
    const { text } = await extract({
      sharedStrings: [
        '<si><t>Name</t></si>',
        // Rich text runs are one string; the phonetic guide above Japanese text is not part of it.
        '<si><r><t>Bold </t></r><r><rPr><b/></rPr><t>and plain</t></r><rPh sb="0" eb="1"><t>ふりがな</t></rPh></si>',
        '<si><t>line_x000D_\nbreak | pipe</t></si>',
        '<si><t>  </t></si>',
      ],
      numFmts:
        '<numFmt numFmtId="164" formatCode="yyyy\\-mm\\-dd;@"/><numFmt numFmtId="165" formatCode="0.00"/>',
      cellXfs:
        '<xf numFmtId="0"/><xf numFmtId="14"/><xf numFmtId="164"/><xf numFmtId="165"/><xf numFmtId="20"/>',
      sheets: [
        {
          name: 'Data',
          rows: [
            '<row r="1"><c r="A1" t="s"><v>3</v></c></row>', // only a blank string: an empty row
            '<row r="2"><c r="B2" t="s"><v>0</v></c><c r="C2" t="inlineStr"><is><t>Inline</t></is></c></row>',
            '<row r="3"><c r="B3" t="s"><v>1</v></c><c r="C3" s="1"><v>42663</v></c><c r="D3" s="3"><v>3.5</v></c></row>',
            // A formula's cached text result, with the formula after the value.
            '<row r="5"><c r="B5" t="str"><v>from a formula</v><f>CONCAT("a","b")</f></c><c r="C5" s="2"><v>45292</v></c><c r="D5" t="b"><v>1</v></c></row>',
            '<row r="6"><c r="B6" t="e"><v>#N/A</v></c><c r="C6" s="4"><v>0.75</v></c><c r="D6" t="b"><v>0</v></c><c r="G6" t="e"><v>#DIV/0!</v></c></row>',
            '<row r="7"><c r="B7" t="s"><v>2</v></c><c><v>1e3</v></c></row>',
          ].join(''),
        },
      ],
    });
    expect(text).toBe(
      [
        '## Data',
        '',
        '|  | Name | Inline |  |',
        '| --- | --- | --- | --- |',
        '|  | Bold and plain | 2016-10-20 | 3.5 |',
        '|  | from a formula | 2024-01-01 | true |',
        '|  |  | 1899-12-30T18:00:00Z | false |',
        '|  | line break \\| pipe | 1000 |  |',
      ].join('\n'),
    );
  });

  it('sheets in workbook order, a chart sheet by name only, 1904 dates', async () => {
    const { text } = await extract({
      date1904: true,
      cellXfs: '<xf numFmtId="0"/><xf numFmtId="14"/>',
      sheets: [
        { name: 'First', rows: '<row r="1"><c r="A1" s="1"><v>0</v></c></row>' },
        { name: 'Chart', rows: null },
        { name: 'Blank', rows: '' },
        { name: 'Last', rows: '<row r="1"><c r="A1"><v>7</v></c></row>' },
      ],
    });
    expect(text).toBe(
      '## First\n\n| 1904-01-01 |\n| --- |\n\n## Chart\n\n## Blank\n\n## Last\n\n| 7 |\n| --- |',
    );
  });

  it('a cell pointing past the shared strings, or a reference that is no cell → corrupt', async () => {
    for (const rows of [
      '<row r="1"><c r="A1" t="s"><v>5</v></c></row>',
      '<row r="1"><c r="1A"><v>1</v></c></row>',
    ]) {
      const error = await failure(
        extract({ sharedStrings: ['<si><t>only</t></si>'], sheets: [{ name: 'S', rows }] }),
      );
      expect(error.code).toBe('corrupt');
      expect(error.message).toMatch(
        /^the XLSX part xl\/worksheets\/sheet1\.xml (points to shared string 5|has a cell at "1A")/,
      );
    }
  });
});

describeWithCorpus('CSV and TSV', () => {
  itWithCorpus('a CSV becomes a Markdown table, close to docling', async () => {
    const { text } = await extractCorpus('csv', 'csv-comma.csv');
    expect(text).toMatch(/^\| Index \| Customer Id \| First Name \|/);
    // A quoted field with a comma stays one cell.
    expect(text).toContain('| Lozano, Dr |');
    const reference = await readFile(corpus('csv', 'csv-comma.expected.md'), 'utf8');
    expect(wordRecall(reference, text)).toBeGreaterThan(0.95);
  });

  itWithCorpus('a TSV (the same data with tabs) gives the same table', async () => {
    const csv = await readFile(corpus('csv', 'seattle-weather.csv'), 'utf8');
    const tsv = await tmp.write('weather.tsv', csv.replaceAll(',', '\t'));
    expect(await detectFormat({ path: tsv, filename: 'weather.tsv' })).toEqual({ ok: true, format: 'csv' });
    const fromTsv = await extractor.extract(tsv, 'csv');
    const fromCsv = await extractor.extract(corpus('csv', 'seattle-weather.csv'), 'csv');
    expect(fromTsv.text).toBe(fromCsv.text);
    expect(fromCsv.text.split('\n')).toHaveLength(csv.trim().split('\n').length + 1);
    expect(fromCsv.text).toContain('| 2012-01-02 | 10.9 | 10.6 | 2.8 | 4.5 | rain |');
  });
});

describeWithCorpus('OpenDocument text (.odt)', () => {
  itWithCorpus('headings as Markdown headings, paragraphs and lists, close to docling', async () => {
    const { text } = await extractCorpus('odt', 'text_document_01.odt');
    expect(text).toContain('# heading level 1.0');
    expect(text).toContain('## Heading level 2: A');
    const reference = await readFile(corpus('odt', 'text_document_01.expected.md'), 'utf8');
    expect(wordRecall(reference, text)).toBeGreaterThan(0.9);
  });

  itWithCorpus('tables, nested tables and rich cells', async () => {
    const { text } = await extractCorpus('odt', 'text_document_03.odt');
    const reference = await readFile(corpus('odt', 'text_document_03.expected.md'), 'utf8');
    expect(wordRecall(reference, text)).toBeGreaterThan(0.85);
    const fake = await extractCorpus('odt', 'fake.odt');
    expect(fake.text).toBe(
      'Lorem ipsum dolor sit amet.\n\n| Header row | Mon | Wed | Fri |\n| --- | --- | --- | --- |\n' +
        '| Color | Blue | Red | Green |\n| Time | 1pm | 2pm | 3pm |\n| Leader | Sarah | Mark | Ryan |',
    );
  });
});

describeWithCorpus('EPUB', () => {
  itWithCorpus('chapters in spine order, with their headings', async () => {
    const { text } = await extractCorpus('epub', 'alice.epub');
    const chapters = [
      '## Down The Rabbit-Hole',
      '## The Pool Of Tears',
      '## A Mad Tea-Party',
      "## Alice's Evidence",
    ];
    const at = chapters.map((heading) => text.indexOf(heading));
    expect(at).not.toContain(-1);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    expect(text).toContain('Alice was beginning to get very tired of sitting by her sister on the bank');
  });

  itWithCorpus(
    'an EPUB 3 from Standard Ebooks, close to docling; an EPUB 2 from Project Gutenberg',
    async () => {
      const { text } = await extractCorpus('epub', 'epub_purvis_poetry.epub');
      const reference = await readFile(corpus('epub', 'epub_purvis_poetry.expected.md'), 'utf8');
      expect(wordRecall(reference, text)).toBeGreaterThan(0.9);
      const gutenberg = await extractCorpus('epub', 'winter-sports.epub');
      expect(gutenberg.text).toContain('Winter Sports in Switzerland');
      expect(gutenberg.text.length).toBeGreaterThan(200_000);
    },
  );
});

describeWithCorpus('RTF', () => {
  it.each(['Example_text', 'issue_15', 'nutridoc'])('%s.rtf matches striprtf’s text', async (name) => {
    const { text } = await extractCorpus('rtf', `${name}.rtf`);
    const reference = await readFile(corpus('rtf', `${name}.expected.txt`), 'utf8');
    // Whitespace and layout choices differ between tools; the words must not.
    expect(wordRecall(reference, text)).toBeGreaterThan(0.97);
    expect(wordRecall(text, reference)).toBeGreaterThan(0.97);
  });
});

describeWithCorpus('E-mail (.eml)', () => {
  itWithCorpus('the headers that matter, the body, and a text attachment', async () => {
    const { text } = await extractCorpus('eml', 'fake-email-attachment.eml');
    expect(text).toMatch(
      /^From: "Mallori Harrell" <mallori@unstructured.io>\nTo: .*\nDate: 2022-12-23T18:08:48.000Z\nSubject: Fake email with attachment\n\nHello!/,
    );
    expect(text).toContain('Attachment: fake-attachment.txt\n\nHey this is a fake attachment!');
  });

  itWithCorpus(
    'a forwarded message (message/rfc822) is read as an e-mail; encoded words decoded',
    async () => {
      const { text } = await extractCorpus('eml', 'attachment_message_rfc822.eml');
      expect(text).toContain('Subject: testing\n\nThis is the first part.');
      expect(text).toContain('Attachment: ForwardedMessage.eml\n\nFrom: "Test Tester"');
      expect(text).toContain('Subject: Another PDF');
      // The forwarded message's PDF is damaged: named, with why, and the message is still read.
      expect(text).toContain('Attachment: broken.pdf\n\n(not read: corrupt)');
      const quoted = await extractCorpus('eml', 'attachment_with_quoted_filename.eml');
      expect(quoted.text).toContain('Subject: Eelanalüüsi päring');
    },
  );
});

describeWithCorpus("URL downloads: no usable name, the server's Content-Type", () => {
  const FILES: [FormatId, string][] = [
    ['pptx', 'pptx/tbl-cell.pptx'],
    ['xlsx', 'xlsx/stanley-cups.xlsx'],
    ['csv', 'csv/csv-comma.csv'],
    ['odt', 'odt/fake.odt'],
    ['epub', 'epub/winter-sports.epub'],
    ['rtf', 'rtf/nutridoc.rtf'],
    ['eml', 'eml/fake-email-attachment.eml'],
  ];
  it.each(FILES)('%s (%s) by its media types', async (format, file) => {
    for (const type of formatSpec(format).mediaTypes) {
      const detected = await detectFormat({
        path: path.join(CORPUS, file),
        filename: null,
        declaredContentType: `${type}; charset=utf-8`,
      });
      expect(detected, type).toEqual({ ok: true, format });
    }
  });

  itWithCorpus(
    'a server that says "octet-stream" (or nothing) still gets the format from the bytes',
    async () => {
      for (const [format, file] of FILES.filter(([f]) => f !== 'csv')) {
        for (const type of ['application/octet-stream', null]) {
          expect(
            await detectFormat({ path: path.join(CORPUS, file), filename: null, declaredContentType: type }),
          ).toEqual({
            ok: true,
            format,
          });
        }
      }
    },
  );
});

// ---- hostile files, built here ----

const CT =
  '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>';

/** The smallest file of each ZIP-based format the extractor reads, and its part that holds the text. */
function minimal(format: 'pptx' | 'xlsx' | 'odt' | 'epub', xmlProlog = ''): ZipEntrySpec[] {
  switch (format) {
    case 'pptx':
      return [
        { name: '[Content_Types].xml', data: CT },
        {
          name: 'ppt/presentation.xml',
          data: `${xmlProlog}<p:presentation xmlns:p="p" xmlns:r="r"><p:sldIdLst><p:sldId id="256" r:id="rId1"/></p:sldIdLst></p:presentation>`,
        },
        {
          name: 'ppt/_rels/presentation.xml.rels',
          data: '<Relationships><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/slide" Target="slides/slide1.xml"/></Relationships>',
        },
        {
          name: 'ppt/slides/slide1.xml',
          data: '<p:sld xmlns:p="p" xmlns:a="a"><p:cSld><p:spTree><p:sp><p:txBody><a:p><a:r><a:t>Hello slide</a:t></a:r></a:p></p:txBody></p:sp></p:spTree></p:cSld></p:sld>',
        },
      ];
    case 'xlsx':
      return [
        { name: '[Content_Types].xml', data: CT },
        {
          name: 'xl/workbook.xml',
          data: `${xmlProlog}<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Hello sheet" sheetId="1" r:id="rId1"/></sheets></workbook>`,
        },
        {
          name: 'xl/_rels/workbook.xml.rels',
          data: '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>',
        },
        {
          name: 'xl/worksheets/sheet1.xml',
          data: '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>Hello cell</t></is></c></row></sheetData></worksheet>',
        },
      ];
    case 'odt':
      return [
        { name: 'mimetype', data: 'application/vnd.oasis.opendocument.text', stored: true },
        {
          name: 'content.xml',
          data: `${xmlProlog}<office:document-content xmlns:office="o" xmlns:text="t"><office:body><office:text><text:p>Hello odt</text:p></office:text></office:body></office:document-content>`,
        },
      ];
    case 'epub':
      return [
        { name: 'mimetype', data: 'application/epub+zip', stored: true },
        {
          name: 'META-INF/container.xml',
          data: '<container><rootfiles><rootfile full-path="book.opf"/></rootfiles></container>',
        },
        {
          name: 'book.opf',
          data: '<package><manifest><item id="c1" href="c1.xhtml" media-type="application/xhtml+xml"/></manifest><spine><itemref idref="c1"/></spine></package>',
        },
        { name: 'c1.xhtml', data: `${xmlProlog}<html><body><p>Hello epub &amp; co</p></body></html>` },
      ];
  }
}

/** The XML part an attack goes in. */
const ATTACKED = {
  pptx: 'ppt/presentation.xml',
  xlsx: 'xl/workbook.xml',
  odt: 'content.xml',
  epub: 'c1.xhtml',
};

describe.each(['pptx', 'xlsx', 'odt', 'epub'] as const)('hostile %s archives', (format) => {
  let counter = 0;
  const write = (entries: ZipEntrySpec[]) =>
    tmp.write(`h-${format}-${counter++}.${format}`, makeZip(entries));

  it('a minimal file is read (the hostile variants below differ from it in one way)', async () => {
    const result = await extractor.extract(await write(minimal(format)), format);
    expect(result.text).toMatch(format === 'xlsx' ? /^## Hello sheet\n\n\| Hello cell \|/ : /^Hello/);
  });

  it('a zip bomb (~1 MB → 1 GiB) → archive_limits, at once', async () => {
    const file = await write([
      ...minimal(format),
      { name: 'media/zeros.bin', deflated: deflatedZeros(1024), claimedSize: 1000 },
    ]);
    const error = await failure(extractor.extract(file, format));
    expect(error.code).toBe('archive_limits');
    expect(error.message).toMatch(/"media\/zeros.bin" inflates more than 100× \(a ZIP bomb\?\)$/);
  });

  it('10,001 entries → archive_limits', async () => {
    const filler = Array.from(
      { length: 10_001 },
      (_, i): ZipEntrySpec => ({ name: `f/${i}.txt`, data: '', stored: true }),
    );
    const error = await failure(extractor.extract(await write([...minimal(format), ...filler]), format));
    expect(error.code).toBe('archive_limits');
    expect(error.message).toMatch(/archive has 10\d\d\d entries; at most 1000 are allowed$/);
  });

  it('billion laughs and an external entity in an XML part → corrupt, nothing expanded or read', async () => {
    const lol = (n: number) => `<!ENTITY lol${n} "${`&lol${n - 1};`.repeat(10)}">`;
    const laughs = `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY lol0 "lol">${[1, 2, 3, 4, 5, 6, 7, 8, 9].map(lol).join('')}]>`;
    const xxe = '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>';
    for (const prolog of [laughs, xxe]) {
      const error = await failure(extractor.extract(await write(minimal(format, prolog)), format));
      expect(error.code).toBe('corrupt');
      expect(error.message).toContain(`part "${ATTACKED[format]}" declares`);
      expect(error.message).toContain('entity expansion attack?');
    }
  });

  it('the file cut in half → corrupt; an HTML page or a legacy OLE file under its name → corrupt', async () => {
    const whole = makeZip(minimal(format));
    const half = await tmp.write(`half-${counter++}.${format}`, whole.subarray(0, whole.length >> 1));
    expect((await failure(extractor.extract(half, format))).code).toBe('corrupt');
    const page = await tmp.write(
      `page-${counter++}.${format}`,
      '<!DOCTYPE html><html><body>Hi</body></html>',
    );
    expect((await failure(extractor.extract(page, format))).code).toBe('corrupt');
    const legacy = await tmp.write(`legacy-${counter++}.${format}`, oleFile(false));
    expect((await failure(extractor.extract(legacy, format))).code).toBe('corrupt');
  });

  it('encrypted entries → encrypted', async () => {
    const entries = minimal(format).map((entry) => ({ ...entry, encrypted: true }));
    expect((await failure(extractor.extract(await write(entries), format))).code).toBe('encrypted');
  });

  it('detection refuses a wrong extension with what the file is, and tells the ZIP formats apart', async () => {
    const file = await write(minimal(format));
    expect(await detectFormat({ path: file, filename: null })).toEqual({ ok: true, format });
    const other = format === 'pptx' ? 'report.xlsx' : 'report.pptx';
    const refused = await detectFormat({ path: file, filename: other });
    expect(refused.ok).toBe(false);
    const png = await tmp.write('x.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0]));
    expect(await detectFormat({ path: png, filename: `scan.${format}` })).toMatchObject({
      ok: false,
      detail: expect.stringContaining('starts with PNG signature'),
    });
  });
});

describe.each(['pptx', 'xlsx', 'epub'] as const)('%s parts listed more than once', (format) => {
  let counter = 0;
  const write = (entries: ZipEntrySpec[]) =>
    tmp.write(`r-${format}-${counter++}.${format}`, makeZip(entries));

  it('a part listed thousands of times is read once (a 20 KB file would otherwise give megabytes of text)', async () => {
    const repeated = minimal(format).map((entry) => {
      if (format === 'epub' && entry.name === 'book.opf') {
        const refs = '<itemref idref="c1"/>'.repeat(4_000);
        return { ...entry, data: String(entry.data).replace('<itemref idref="c1"/>', refs) };
      }
      if (format === 'xlsx' && entry.name === 'xl/workbook.xml') {
        // Names that differ, so the part does not compress past the archive's ratio check.
        const sheet = '<sheet name="Hello sheet" sheetId="1" r:id="rId1"/>';
        const more = Array.from(
          { length: 3_000 },
          (_, i) => `<sheet name="Copy ${i * 7919}" sheetId="${i + 2}" r:id="rId1"/>`,
        );
        return { ...entry, data: String(entry.data).replace(sheet, sheet + more.join('')) };
      }
      if (format === 'pptx' && entry.name === 'ppt/presentation.xml') {
        const ids = '<p:sldId id="256" r:id="rId1"/>'.repeat(3_000);
        return { ...entry, data: String(entry.data).replace('<p:sldId id="256" r:id="rId1"/>', ids) };
      }
      return entry;
    });
    const once = await extractor.extract(await write(minimal(format)), format);
    const result = await extractor.extract(await write(repeated), format);
    expect(result.text).toBe(once.text);
    expect(result.text.match(/Hello/g)).toHaveLength(format === 'xlsx' ? 2 : 1);
  });
});

describe('hostile text formats', () => {
  itWithCorpus('an RTF cut short → corrupt; RTF and e-mail refused under a wrong name', async () => {
    const rtf = await readFile(corpus('rtf', 'issue_15.rtf'));
    const cut = await tmp.write('cut.rtf', rtf.subarray(0, rtf.length >> 1));
    const error = await failure(extractor.extract(cut, 'rtf'));
    expect(error).toMatchObject({
      code: 'corrupt',
      message: 'the RTF is truncated (its last group is never closed)',
    });
    expect((await detectFormat({ path: corpus('rtf', 'issue_15.rtf'), filename: 'notes.docx' })).ok).toBe(
      false,
    );
    // An e-mail cut short is still a (shorter) message: read, never a hang.
    const eml = await readFile(corpus('eml', 'fake-email-attachment.eml'));
    const half = await tmp.write('half.eml', eml.subarray(0, eml.length >> 1));
    expect((await extractor.extract(half, 'eml')).text).toContain('Subject: Fake email with attachment');
  });

  it('binary bytes named .csv or .eml are refused; an RTF named .txt is told apart', async () => {
    const binary = await tmp.write(
      'b.bin',
      Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7) % 32)),
    );
    for (const name of ['data.csv', 'mail.eml']) {
      expect(await detectFormat({ path: binary, filename: name })).toMatchObject({
        ok: false,
        detail: expect.stringContaining('binary data'),
      });
    }
    const rtf = await tmp.write('r.rtf', '{\\rtf1\\ansi Hello {\\b bold} world\\par}');
    expect(await detectFormat({ path: rtf, filename: null })).toEqual({ ok: true, format: 'rtf' });
    expect((await extractor.extract(rtf, 'rtf')).text).toBe('Hello bold world');
  });

  it("a UTF-16 TSV with a BOM (Excel's Unicode text export)", async () => {
    const text = 'Stadt\tEinwohner\nKöln\t1.084.831\n';
    const file = await tmp.write(
      'u.tsv',
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]),
    );
    expect(await detectFormat({ path: file, filename: 'u.tsv' })).toEqual({ ok: true, format: 'csv' });
    expect((await extractor.extract(file, 'csv')).text).toBe(
      '| Stadt | Einwohner |\n| --- | --- |\n| Köln | 1.084.831 |',
    );
  });

  it('a CSV with ragged rows and quoted line breaks', async () => {
    const file = await tmp.write('r.csv', 'a,b,c\n1,"two\nlines",3\n4\n5,6,7,8\n');
    expect((await extractor.extract(file, 'csv')).text).toBe(
      '| a | b | c |\n| --- | --- | --- |\n| 1 | two lines | 3 |\n| 4 |  |  |\n| 5 | 6 | 7 | 8 |',
    );
  });

  it('an e-mail without a name is known by its headers; an HTML-only body is read as a page', async () => {
    const file = await tmp.write(
      'm',
      'From: A <a@example.com>\r\nTo: b@example.com\r\nSubject: Pangolins\r\nMIME-Version: 1.0\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<p>The <b>pangolin</b> rolls up.</p><table><tr><th>k</th><th>v</th></tr><tr><td>x</td><td>y</td></tr></table>\r\n',
    );
    expect(await detectFormat({ path: file, filename: null })).toEqual({ ok: true, format: 'eml' });
    const { text } = await extractor.extract(file, 'eml');
    expect(text).toContain('Subject: Pangolins\n\nThe pangolin rolls up.');
  });
});

describe('the thread caps hold for the new formats', () => {
  it('a table too big for the heap cap → too_large; too slow for the time cap → timeout; the pool lives on', async () => {
    // ~40 MB of CSV: its Markdown table alone needs more than a 64 MB heap, and reading it takes
    // far longer than 50 ms.
    const row = 'alpha,bravo,charlie,delta,echo,foxtrot,golf,hotel,india,juliet\n';
    const file = await tmp.write('huge.csv', row.repeat(Math.ceil((40 * 1024 * 1024) / row.length)));
    const small = createPipelineThreads({
      maxWorkers: 1,
      timeoutMs: 120_000,
      maxHeapMb: 64,
      pdfMaxPages: 5_000,
    });
    const hasty = createPipelineThreads({ maxWorkers: 1, timeoutMs: 50, maxHeapMb: 512, pdfMaxPages: 5_000 });
    try {
      expect((await failure(small.extract(file, 'csv'))).code).toBe('too_large');
      expect((await failure(hasty.extract(file, 'csv'))).code).toBe('timeout');
      const ok = await tmp.write('ok.csv', 'a,b\n1,2\n');
      expect((await small.extract(ok, 'csv')).text).toBe('| a | b |\n| --- | --- |\n| 1 | 2 |');
    } finally {
      await small.close();
      await hasty.close();
    }
  });

  it('a few KB of sparse table that would pad out to more text than the cap → too_large, streamed or whole', async () => {
    // A cell at A and one at XFD (column 16,384) per row: ~60 bytes of XML, 64 KiB of Markdown.
    const rows = Array.from(
      { length: 200 },
      (_, i) => `<row r="${i + 1}"><c r="A${i + 1}"><v>${i}</v></c><c r="XFD${i + 1}"><v>1</v></c></row>`,
    ).join('');
    const xlsx = await tmp.write('sparse.xlsx', makeZip(workbookEntries({ sheets: [{ name: 'S', rows }] })));
    // The CSV's header is 16,384 columns wide and its 2,000 rows are one value each.
    const csv = await tmp.write('sparse.csv', `${'h,'.repeat(16_383)}h\n${'1\n'.repeat(2_000)}`);
    const capped = createPipelineThreads({
      maxWorkers: 1,
      timeoutMs: 60_000,
      maxHeapMb: 512,
      pdfMaxPages: 5_000,
      maxTextChars: 4_000_000,
    });
    try {
      for (const [file, format] of [
        [xlsx, 'xlsx'],
        [csv, 'csv'],
      ] as const) {
        const whole = await failure(capped.extract(file, format));
        expect(whole.code).toBe('too_large');
        expect(whole.message).toBe(
          "the file's text is longer than 4,000,000 characters (a table of mostly empty cells?)",
        );
        const streamed = capped.indexFile(file, format, { chunkSize: 512, chunkOverlap: 0 });
        const error = await failure(collectChunks({ ...streamed, contentType: null, bytes: null }));
        expect(error.code).toBe('too_large');
      }
      // Under the cap, the same table reads.
      const small = await tmp.write('sparse-small.csv', `${'h,'.repeat(16_383)}h\n1\n`);
      expect((await capped.extract(small, 'csv')).text.length).toBeLessThan(4_000_000);
    } finally {
      await capped.close();
    }
  });
});
