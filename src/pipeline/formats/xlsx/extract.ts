// Excel text: every sheet in workbook order as "## Sheet name" and a Markdown table, a row per
// line. read-excel-file reads the cells (shared strings, numbers, booleans, dates, and for a
// formula the value Excel cached when it last saved: nothing is recalculated). It inflates the
// parts it reads into memory, so it only sees archives that passed the archive limits.
import readXlsxFile from 'read-excel-file/node';
import { ExtractionError } from '../../extract/errors.js';
import { checkArchive, type ZipFormat } from '../shared/archive.js';
import { markdownCell, renderMarkdownTable } from '../shared/markdown-table.js';
import { normalizeText } from '../text/decode.js';

export const XLSX: ZipFormat = {
  name: 'XLSX',
  plural: 'Excel workbooks',
  aKind: 'an Excel workbook',
  required: ['[content_types].xml', 'xl/workbook.xml'],
  parsedXml: (name) => name.endsWith('.xml') || name.endsWith('.rels'),
  refuse: 'doctype',
  legacyName: '.xls',
};

type Cell = string | number | boolean | Date | null | undefined;

export async function extractXlsxText(filePath: string): Promise<string> {
  await checkArchive(filePath, XLSX);
  let sheets: { sheet: string; data: Cell[][] }[];
  try {
    sheets = (await readXlsxFile(filePath)) as { sheet: string; data: Cell[][] }[];
  } catch (error) {
    throw new ExtractionError(
      'corrupt',
      `the XLSX cannot be read (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  const parts: string[] = [];
  for (const { sheet, data } of sheets) {
    const grid = trimGrid(data.map((row) => row.map(cellText)));
    // A chart sheet, or a sheet left empty, still says it is there.
    parts.push(grid.length === 0 ? `## ${sheet}` : `## ${sheet}\n\n${renderMarkdownTable(grid)}`);
  }
  return normalizeText(parts.join('\n\n')).trim();
}

function cellText(value: Cell): string {
  if (value === null || value === undefined) return '';
  if (value instanceof Date) return dateText(value);
  return markdownCell(String(value));
}

/** A date as ISO 8601, without the time when it is midnight (what a date-only cell holds). */
function dateText(date: Date): string {
  if (Number.isNaN(date.getTime())) return '';
  const iso = date.toISOString();
  return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso.replace('.000Z', 'Z');
}

/** Drops empty rows and the empty columns to the right of the last filled one. */
function trimGrid(rows: string[][]): string[][] {
  const filled = rows.filter((row) => row.some((cell) => cell !== ''));
  let width = 0;
  for (const row of filled) {
    for (let i = row.length - 1; i >= width; i--) {
      if (row[i] !== '') {
        width = i + 1;
        break;
      }
    }
  }
  return filled.map((row) => row.slice(0, width));
}
