// Excel text: every sheet in workbook order as "## Sheet name" and a Markdown table, a row per
// line, its cells as Excel last showed them: shared and inline strings, numbers, booleans, dates
// (numbers whose style has a date format), and for a formula the value Excel cached when it last
// saved (nothing is recalculated). Error values (#N/A) and empty rows are left out, and so are the
// empty columns right of the last filled one.
//
// Worksheets are read as they inflate (shared/xml.ts's readXmlPieces), twice each: once for the
// table's width, which its header line needs, and once for its rows, which go out in pieces as they
// are read. So a worksheet of 150 MB of XML is never held, as XML or as rows; only the shared
// strings are, which every cell may point into. A reader that holds every part as one string and
// every sheet as a grid (read-excel-file does) fails such a workbook on memory (bench/RESULTS.md,
// sections 7 and 13).
import { ExtractionError } from '../../extract/errors.js';
import { checkArchive, openZipParts, type ZipFormat, type ZipParts } from '../shared/archive.js';
import { markdownCell } from '../shared/markdown-table.js';
import { readRelationships, readXml, readXmlPieces, resolvePart, type XmlEvents } from '../shared/xml.js';

export const XLSX: ZipFormat = {
  name: 'XLSX',
  plural: 'Excel workbooks',
  aKind: 'an Excel workbook',
  required: ['[content_types].xml', 'xl/workbook.xml'],
  parsedXml: (name) => name.endsWith('.xml') || name.endsWith('.rels'),
  refuse: 'doctype',
  legacyName: '.xls',
};

/** Characters of Markdown a piece of xlsxTextPieces holds, about. */
const PIECE_CHARS = 256 * 1024;

export async function extractXlsxText(filePath: string): Promise<string> {
  const pieces: string[] = [];
  for await (const piece of xlsxTextPieces(filePath)) pieces.push(piece);
  return pieces.join('');
}

/** The workbook's text in pieces of about PIECE_CHARS, as its sheets are read: joined, extractXlsxText's text. */
export async function* xlsxTextPieces(filePath: string): AsyncGenerator<string> {
  await checkArchive(filePath, XLSX);
  const zip = await openZipParts(filePath, XLSX);
  try {
    const book = await readWorkbook(zip);
    let out: string[] = [];
    let size = 0;
    const add = (text: string) => {
      out.push(text);
      size += text.length;
    };
    const flush = () => {
      const piece = out.join('');
      out = [];
      size = 0;
      return piece;
    };
    for (const [i, sheet] of book.sheets.entries()) {
      add(`${i === 0 ? '' : '\n\n'}## ${sheet.name}`);
      // A chart sheet, or a worksheet left empty, still says it is there.
      if (sheet.part === null) continue;
      const width = await tableWidth(zip, sheet.part, book);
      if (width === 0) continue;
      let header = true;
      const rows = readRows(zip, sheet.part, book, (cells) => {
        const line = `| ${Array.from({ length: width }, (_, c) => cells[c] ?? '').join(' | ')} |`;
        add(`${header ? '\n\n' : '\n'}${line}`);
        if (header) add(`\n|${' --- |'.repeat(width)}`);
        header = false;
      });
      for await (const _ of rows) if (size >= PIECE_CHARS) yield flush();
    }
    if (size > 0) yield flush();
  } finally {
    zip.close();
  }
}

/** What every sheet's cells are read with. */
interface Workbook {
  /** In workbook order; `part` null for a sheet with no worksheet (a chart sheet). */
  sheets: { name: string; part: string | null }[];
  /** The shared string table, each already a Markdown cell's text (cells point into it, often many to one). */
  sharedStrings: string[];
  /** By style index (a cell's s attribute): its number format shows a date or a time. */
  dateStyles: boolean[];
  /** The workbook counts its dates from 1904 (Excel for Mac's old default), not 1900. */
  epoch1904: boolean;
}

const WORKSHEET = /\/relationships\/worksheet$/;
const SHARED_STRINGS = /\/relationships\/sharedStrings$/;
const STYLES = /\/relationships\/styles$/;

async function readWorkbook(zip: ZipParts): Promise<Workbook> {
  const relationships = readRelationships(
    zip.has('xl/_rels/workbook.xml.rels') ? await zip.read('xl/_rels/workbook.xml.rels') : undefined,
    'the XLSX part xl/_rels/workbook.xml.rels',
  );
  const partOf = (type: RegExp, fallback: string): string => {
    for (const { target, type: relType } of relationships.values()) {
      if (type.test(relType)) return resolvePart('xl', target);
    }
    return fallback;
  };
  const listed: { name: string; rid: string }[] = [];
  let epoch1904 = false;
  readXml(
    await zip.read('xl/workbook.xml'),
    {
      open(name, attributes) {
        if (name === 'workbookPr') epoch1904 = attributes.date1904 === '1' || attributes.date1904 === 'true';
        // The relationship id is the prefixed "id" (r:id); nothing unprefixed is called id here.
        if (name === 'sheet') listed.push({ name: attributes.name ?? '', rid: attributes.id ?? '' });
      },
    },
    'the XLSX part xl/workbook.xml',
  );
  const sheets = listed.map(({ name, rid }) => {
    const relationship = relationships.get(rid);
    const part =
      relationship && WORKSHEET.test(relationship.type) ? resolvePart('xl', relationship.target) : null;
    // The heading is one line, whatever the name holds.
    const heading = unescapeXlsx(name).replace(/\s+/g, ' ').replaceAll('\u0000', '').trim();
    return { name: heading, part: part !== null && zip.has(part) ? part : null };
  });
  // Each worksheet once, under the first name that lists it: a workbook that lists one sheet
  // thousands of times would otherwise multiply a small file's text past any ratio the archive checks.
  const read = new Set<string>();
  const sheetsOnce = sheets.filter((sheet) => {
    if (sheet.part === null) return true;
    if (read.has(sheet.part)) return false;
    read.add(sheet.part);
    return true;
  });
  const stringsPart = partOf(SHARED_STRINGS, 'xl/sharedstrings.xml');
  const stylesPart = partOf(STYLES, 'xl/styles.xml');
  return {
    sheets: sheetsOnce,
    sharedStrings: zip.has(stringsPart) ? await readSharedStrings(zip, stringsPart) : [],
    dateStyles: zip.has(stylesPart)
      ? readDateStyles(await zip.read(stylesPart), `the XLSX part ${stylesPart}`)
      : [],
    epoch1904,
  };
}

/**
 * The shared string table: each <si>'s text, its rich-text runs joined, its phonetic guides (<rPh>,
 * the furigana over Japanese text) left out. Read as it inflates: it can be as large as the sheets.
 */
async function readSharedStrings(zip: ZipParts, part: string): Promise<string[]> {
  const strings: string[] = [];
  let text: string | null = null;
  let inT = false;
  let phonetic = 0;
  const events: XmlEvents = {
    open(name) {
      if (name === 'si') text = '';
      else if (name === 't') inT = true;
      else if (name === 'rPh') phonetic++;
    },
    close(name) {
      if (name === 'si' && text !== null) {
        strings.push(markdownCell(unescapeXlsx(text)));
        text = null;
      } else if (name === 't') inT = false;
      else if (name === 'rPh') phonetic--;
    },
    text(value) {
      if (text !== null && inT && phonetic === 0) text += value;
    },
  };
  for await (const _ of readXmlPieces(zip.pieces(part), events, `the XLSX part ${part}`));
  return strings;
}

/**
 * Which cell styles (styles.xml's <cellXfs>, indexed by a cell's s attribute) have a number format
 * that shows a date or a time: one of the built-in ones that do, or a custom format code made of
 * date and time tokens only.
 */
function readDateStyles(xml: Uint8Array, what: string): boolean[] {
  const customCodes = new Map<number, string>();
  const styles: boolean[] = [];
  let inCellXfs = false;
  readXml(
    xml,
    {
      open(name, attributes) {
        if (name === 'numFmt' && attributes.numFmtId !== undefined) {
          customCodes.set(Number(attributes.numFmtId), attributes.formatCode ?? '');
        } else if (name === 'cellXfs') {
          inCellXfs = true;
        } else if (name === 'xf' && inCellXfs) {
          const id = Number(attributes.numFmtId ?? 0);
          const code = customCodes.get(id);
          styles.push(code === undefined ? BUILT_IN_DATE_FORMATS.has(id) : isDateFormatCode(code));
        }
      },
      close(name) {
        if (name === 'cellXfs') inCellXfs = false;
      },
    },
    what,
  );
  return styles;
}

/**
 * Built-in number formats (ECMA-376 Part 1, §18.8.30) that show dates or times: 14–22 and 45–47 in
 * every locale, 27–36 and 50–58 in the Chinese, Japanese and Korean ones, 71–81 in the Thai one.
 */
const BUILT_IN_DATE_FORMATS = new Set([
  ...range(14, 22),
  ...range(27, 36),
  ...range(45, 47),
  ...range(50, 58),
  ...range(71, 81),
]);

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

/**
 * A custom number format code shows a date or a time when, of its first section (positive
 * numbers), what is left after its literal text, colours, locales and conditions has a date or time
 * token (d, m, y, h, s, e for the era year) and no digit placeholder (0 # ?) but a fraction of a
 * second's. "General" and "0.00E+00" are numbers; "yyyy-mm-dd", "[h]:mm:ss" and "d mmm;@" are dates.
 */
export function isDateFormatCode(code: string): boolean {
  const section = (code.split(';')[0] ?? '')
    .replace(/"[^"]*"/g, '')
    .replace(/[\\_*]./g, '')
    .replace(/\[(h+|m+|s+)\]/gi, '$1')
    .replace(/\[[^\]]*\]/g, '')
    .toLowerCase();
  if (section.includes('general')) return false;
  const rest = section.replace(/am\/pm|a\/p/g, '').replace(/(s)\.0+/g, '$1');
  return !/[0#?]/.test(rest) && /[dmyhse]/.test(rest);
}

type CellReader = typeof cellText;

/**
 * Calls `row` with each row that has a filled cell (its cells' text by column, from A, as `read`
 * gives it), as the worksheet inflates; yields after each piece of it, so the caller can pass on
 * the lines so far.
 */
function readRows(
  zip: ZipParts,
  part: string,
  book: Workbook,
  row: (cells: readonly string[]) => void,
  read: CellReader = cellText,
): AsyncGenerator<void> {
  let cells: string[] = [];
  let filled = false;
  let column = 0;
  let cell: { ref?: string; type?: string; style?: string } | null = null;
  /** The text of the cell's <v>, and of its inline string (<is>); null when it has none. */
  let value: string | null = null;
  let inline: string | null = null;
  let inV = false;
  let inT = false;
  let phonetic = 0;
  const what = `the XLSX part ${part}`;
  const events: XmlEvents = {
    open(name, attributes) {
      switch (name) {
        case 'row':
          cells = [];
          filled = false;
          column = 0;
          break;
        case 'c':
          cell = { ref: attributes.r, type: attributes.t, style: attributes.s };
          value = null;
          inline = null;
          break;
        case 'v':
          inV = true;
          if (cell) value = '';
          break;
        case 'is':
          if (cell) inline = '';
          break;
        case 't':
          inT = true;
          break;
        case 'rPh':
          phonetic++;
          break;
      }
    },
    close(name) {
      switch (name) {
        case 'c': {
          if (!cell) break;
          // A cell without a reference is the one after the previous cell.
          column = cell.ref ? columnOf(cell.ref, what) : column + 1;
          const text = read(cell, value ?? undefined, inline ?? undefined, book, what);
          if (text !== '') {
            cells[column - 1] = text;
            filled = true;
          }
          cell = null;
          break;
        }
        case 'row':
          if (filled) row(cells);
          break;
        case 'v':
          inV = false;
          break;
        case 't':
          inT = false;
          break;
        case 'rPh':
          phonetic--;
          break;
      }
    },
    text(text) {
      if (inline !== null && inT && phonetic === 0) inline += text;
      else if (value !== null && inV) value += text;
    },
  };
  return readXmlPieces(zip.pieces(part), events, what);
}

/** How many columns the worksheet's table needs: up to its rightmost filled cell (0: none). */
async function tableWidth(zip: ZipParts, part: string, book: Workbook): Promise<number> {
  let width = 0;
  const rows = readRows(
    zip,
    part,
    book,
    (cells) => {
      width = Math.max(width, cells.length);
    },
    cellMark,
  );
  for await (const _ of rows);
  return width;
}

/**
 * For the width alone: 'x' where cellText gives text, without making it for the cells most sheets
 * are made of (numbers, dates, shared strings). A shared string that does not exist is left to
 * the second pass to refuse.
 */
function cellMark(...args: Parameters<CellReader>): string {
  const [cell, value, , book] = args;
  switch (cell.type ?? 'n') {
    case 'n':
      return value?.trim() ? 'x' : '';
    case 's':
      return value?.trim() && book.sharedStrings[Number(value)] !== '' ? 'x' : '';
    case 'e':
      return '';
    default:
      return cellText(...args);
  }
}

/** A cell's text in a Markdown table ('' for an empty cell or an error value). */
function cellText(
  cell: { type?: string; style?: string },
  value: string | undefined,
  inline: string | undefined,
  book: Workbook,
  what: string,
): string {
  switch (cell.type ?? 'n') {
    case 's': {
      if (value === undefined || value.trim() === '') return '';
      const text = book.sharedStrings[Number(value)];
      if (text === undefined) {
        throw new ExtractionError(
          'corrupt',
          `${what} points to shared string ${value}, which does not exist`,
        );
      }
      return text;
    }
    case 'inlineStr':
      return markdownCell(unescapeXlsx(inline ?? ''));
    case 'str': // a formula's text result
      return markdownCell(unescapeXlsx(value ?? ''));
    case 'b':
      return value === '1' ? 'true' : value === '0' ? 'false' : markdownCell(value ?? '');
    case 'e':
      return '';
    case 'd': // an ISO 8601 date, written by some tools instead of a serial number
      return value ? dateText(new Date(value)) : '';
    default: {
      const text = value?.trim() ?? '';
      if (text === '') return '';
      const number = Number(text);
      if (Number.isNaN(number)) return markdownCell(text);
      if (cell.style !== undefined && book.dateStyles[Number(cell.style)]) {
        return dateText(serialDate(number, book.epoch1904));
      }
      return String(number);
    }
  }
}

/** Days between Excel's day 0 (1899-12-30, counting its phantom 1900-02-29) and 1970-01-01. */
const UNIX_EPOCH_SERIAL = 25_569;
/** Days between the 1900 and the 1904 day counts. */
const EPOCH_1904_OFFSET = 1_462;
const DAY_MS = 86_400_000;

/** A date serial number as a date, to the millisecond (a time of 1/3 day is 08:00, not 07:59:59.999). */
function serialDate(serial: number, epoch1904: boolean): Date {
  const days = serial + (epoch1904 ? EPOCH_1904_OFFSET : 0) - UNIX_EPOCH_SERIAL;
  return new Date(Math.round(days * DAY_MS));
}

/** A date as ISO 8601, without the time when it is midnight (what a date-only cell holds). */
function dateText(date: Date): string {
  if (Number.isNaN(date.getTime())) return '';
  const iso = date.toISOString();
  return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso.replace('.000Z', 'Z');
}

/** A cell reference's column number, from 1 ("C12" → 3). */
function columnOf(ref: string, what: string): number {
  let column = 0;
  for (let i = 0; i < ref.length; i++) {
    const code = ref.charCodeAt(i) | 0x20; // lowercase
    if (code < 0x61 || code > 0x7a) break;
    column = column * 26 + (code - 0x60);
  }
  // Excel's last column is XFD, 16,384.
  if (column === 0 || column > 16_384) {
    throw new ExtractionError('corrupt', `${what} has a cell at "${ref}", which is no cell reference`);
  }
  return column;
}

/** Characters OOXML escapes as _xHHHH_ (control characters, mostly) back as themselves. */
function unescapeXlsx(text: string): string {
  if (!text.includes('_x')) return text;
  return text.replace(/_x([0-9A-Fa-f]{4})_/g, (_, hex: string) =>
    String.fromCharCode(Number.parseInt(hex, 16)),
  );
}
