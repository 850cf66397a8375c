// A file's chunks through the streamed path (indexFile: the thread reads, decodes or parses the
// file a piece at a time and chunks it through a window) must be exactly the chunks of the whole
// extracted text (extract, then chunkForIndex on it), for the corpus files and for text files
// built to put awkward bytes where reads are cut (a CRLF, a NUL, a multi-byte character, a damaged
// sequence, a UTF-16 BOM).
import { readdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectChunks } from '../../src/domain/chunk-batches.js';
import type { FormatId } from '../../src/domain/formats.js';
import { chunkForIndex } from '../../src/pipeline/chunk/for-index.js';
import { createPipelineThreads, type PipelineThreads } from '../../src/pipeline/extract/index.js';
import { CORPUS_DIR, describeWithCorpus, HAVE_CORPUS } from '../helpers/shared.js';
import { makeTempDir, makeZip, type TempDir, workbookEntries } from './extract-support.js';

const OPTIONS = { chunkSize: 128, chunkOverlap: 16 };
/** The size of a read in decodeTextPieces: awkward bytes go right around multiples of it. */
const READ = 256 * 1024;

let tmp: TempDir;
let extractor: PipelineThreads;
beforeAll(async () => {
  tmp = await makeTempDir();
  extractor = createPipelineThreads({
    maxWorkers: 1,
    timeoutMs: 300_000,
    maxHeapMb: 512,
    pdfMaxPages: 5_000,
  });
});
afterAll(async () => {
  await extractor.close();
  await tmp.remove();
});

async function expectSameChunks(file: string, format: FormatId, markdown = false): Promise<void> {
  const options = { ...OPTIONS, markdown };
  const streamed = await collectChunks({
    ...extractor.indexFile(file, format, options),
    contentType: null,
    bytes: null,
  });
  const whole = await extractor.extract(file, format);
  const reference = chunkForIndex(
    whole.text,
    { ...options, pages: whole.pages },
    { given: null, configured: 'auto' },
  );
  expect(streamed.chunks).toEqual(reference.chunks);
  expect(streamed.totals).toMatchObject({
    tokenCount: reference.tokenCount,
    contentSha256: reference.contentSha256,
    language: reference.language,
  });
}

/** `filler` bytes with `awkward` placed across each of the first few read boundaries. */
function straddling(awkward: Buffer, filler: string, head = Buffer.alloc(0)): Buffer {
  const parts: Buffer[] = [head];
  let size = head.length;
  for (let boundary = READ; boundary <= 4 * READ; boundary += READ) {
    const fill = Buffer.from(filler.repeat(Math.ceil((boundary - size) / filler.length))).subarray(
      0,
      boundary - size - Math.floor(awkward.length / 2),
    );
    parts.push(fill, awkward);
    size += fill.length + awkward.length;
  }
  parts.push(Buffer.from(' and the end.\n'));
  return Buffer.concat(parts);
}

describe('streamed text files', () => {
  const filler = 'Plain words, then a line.\n';
  const cases: [string, Buffer][] = [
    ['a CRLF cut between its two bytes', straddling(Buffer.from('end\r\nnext'), filler)],
    ['a CR, a NUL, then an LF', straddling(Buffer.from('x\r\0\ny'), filler)],
    ['a character of four bytes', straddling(Buffer.from('a😀b'), filler)],
    ['a damaged UTF-8 sequence', straddling(Buffer.from([0x61, 0xe2, 0x82, 0x20, 0x62]), filler)],
    ['paragraph breaks of CRs only', straddling(Buffer.from('.\r\r\r\rNext'), filler)],
  ];
  it.each(cases)(
    '%s: the same chunks as the whole text',
    async (name, bytes) => {
      const file = path.join(tmp.dir, `${name.replaceAll(' ', '-')}.txt`);
      await writeFile(file, bytes);
      await expectSameChunks(file, 'txt');
    },
    120_000,
  );

  it('UTF-16 with its BOM, and Markdown', async () => {
    const text = '# Title\r\n\r\nSome text with ünïcödé, 中文, and 😀.\r\n'.repeat(20_000);
    const utf16 = path.join(tmp.dir, 'utf16.txt');
    await writeFile(utf16, Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]));
    await expectSameChunks(utf16, 'txt');
    const md = path.join(tmp.dir, 'notes.md');
    await writeFile(md, text);
    await expectSameChunks(md, 'md', true);
  }, 120_000);

  it('a CSV of many pieces', async () => {
    const rows = ['id,name,notes'];
    for (let i = 0; i < 30_000; i++) rows.push(`${i},"name ${i}","a note, with | a pipe\nand a line"`);
    const file = path.join(tmp.dir, 'many.csv');
    await writeFile(file, rows.join('\r\n'));
    await expectSameChunks(file, 'csv');
  }, 120_000);

  it('an Excel workbook of many pieces, two sheets', async () => {
    const strings: string[] = [];
    const rows = (sheet: number) => {
      const xml: string[] = [];
      for (let r = 1; r <= 15_000; r++) {
        if (r % 97 === 0) continue; // a gap: rows missing from the file
        strings.push(`<si><t>sheet ${sheet} note ${r}, with | a pipe&#10;and a line</t></si>`);
        xml.push(
          `<row r="${r}"><c r="A${r}"><v>${r}</v></c><c r="B${r}" t="s"><v>${strings.length - 1}</v></c>${r % 5 === 0 ? `<c r="D${r}" t="inlineStr"><is><t>wide ${r}</t></is></c>` : ''}</row>`,
        );
      }
      return xml.join('');
    };
    const sheets = [
      { name: 'One', rows: rows(1) },
      { name: 'Two', rows: rows(2) },
    ];
    const file = path.join(tmp.dir, 'many.xlsx');
    await writeFile(file, makeZip(workbookEntries({ sheets, sharedStrings: strings })));
    await expectSameChunks(file, 'xlsx');
    const { text } = await extractor.extract(file, 'xlsx');
    expect(text.length).toBeGreaterThan(4 * 256 * 1024);
    expect(text).toContain('| 5 | sheet 1 note 5, with \\| a pipe and a line |  | wide 5 |');
    expect(text).toContain(
      '\n\n## Two\n\n| 1 | sheet 2 note 1, with \\| a pipe and a line |  |  |\n| --- | --- | --- | --- |\n',
    );
  }, 120_000);
});

describeWithCorpus('streamed corpus files', () => {
  const folders: [string, FormatId][] = [
    ['csv', 'csv'],
    ['html', 'html'],
    ['epub', 'epub'],
    ['rtf', 'rtf'],
    ['xlsx', 'xlsx'],
    ['pdf', 'pdf'],
  ];
  // Listed only when the corpus is there: this runs while tests are collected, before the skip.
  const files = (HAVE_CORPUS ? folders : []).flatMap(([folder, format]) =>
    readdirSync(path.join(CORPUS_DIR, folder))
      .filter((name) => name.endsWith(`.${format}`) && !name.includes('password'))
      .map((name) => [`${folder}/${name}`, format] as const),
  );
  it.each(files)(
    '%s: the same chunks as the whole text',
    async (file, format) => {
      await expectSameChunks(path.join(CORPUS_DIR, file), format);
    },
    300_000,
  );
});
