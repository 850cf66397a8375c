// Large files for the memory bench (section 7), generated from the bench corpus's prose: a PDF of
// many text pages, a CSV of many rows and an Excel workbook of many rows. Each is described by its exact length up front (the
// upload's Content-Length) and its bytes in parts, so the bench never has to guess a size.

import { makeZip, workbookEntries } from '../test/helpers/zip.js';
import { asciiCorpus } from './corpus.js';
import type { UploadFile } from './server.js';

const LINE_CHARS = 90;

/** The corpus as lines of at most LINE_CHARS characters, cut at spaces (no blank lines). */
function proseLines(): string[] {
  const words = asciiCorpus()
    .split(/\s+/)
    .filter((word) => word !== '' && word.length < LINE_CHARS);
  const lines: string[] = [];
  let line = '';
  for (const word of words) {
    if (line.length + 1 + word.length > LINE_CHARS) {
      lines.push(line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  if (line !== '') lines.push(line);
  return lines;
}

/**
 * A PDF of `pages` pages, each with `linesPerPage` lines of prose in Helvetica (uncompressed
 * content streams, so the file is about as large as its text). Built whole: it is the bench's
 * memory, not the server's.
 */
export function textPdf(pages: number, linesPerPage: number): UploadFile {
  const lines = proseLines();
  const parts: Buffer[] = [];
  const offsets: number[] = [];
  let size = 0;
  const add = (text: string) => {
    const buffer = Buffer.from(text, 'latin1');
    parts.push(buffer);
    size += buffer.length;
  };
  const object = (id: number, body: string) => {
    offsets[id] = size;
    add(`${id} 0 obj\n${body}\nendobj\n`);
  };
  add('%PDF-1.4\n');
  const pageId = (i: number) => 4 + 2 * i;
  const kids = Array.from({ length: pages }, (_, i) => `${pageId(i)} 0 R`).join(' ');
  object(1, '<< /Type /Catalog /Pages 2 0 R >>');
  object(2, `<< /Type /Pages /Kids [${kids}] /Count ${pages} >>`);
  object(3, '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>');
  let next = 0;
  for (let i = 0; i < pages; i++) {
    const ops = ['BT', '/F1 3 Tf', '3.4 TL', '20 830 Td'];
    for (let l = 0; l < linesPerPage; l++) {
      const line = lines[next++ % lines.length]!.replace(/[\\()]/g, (c) => `\\${c}`);
      ops.push(`(${line}) Tj T*`);
    }
    ops.push('ET');
    const content = ops.join('\n');
    object(
      pageId(i),
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> >> /Contents ${pageId(i) + 1} 0 R >>`,
    );
    object(
      pageId(i) + 1,
      `<< /Length ${Buffer.byteLength(content, 'latin1')} >>\nstream\n${content}\nendstream`,
    );
  }
  const count = pageId(pages);
  const xref = size;
  const entries = ['0000000000 65535 f \n'];
  for (let id = 1; id < count; id++) entries.push(`${String(offsets[id]).padStart(10, '0')} 00000 n \n`);
  add(
    `xref\n0 ${count}\n${entries.join('')}trailer\n<< /Size ${count} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`,
  );
  return { filename: 'large.pdf', contentType: 'application/pdf', bytes: size, parts };
}

/**
 * A CSV of about `bytes` bytes (whole rows): an id, a word, a number, and a quoted sentence with
 * commas in it, so the parser's quoting path is exercised on every row.
 */
export function proseCsv(bytes: number): UploadFile {
  const lines = proseLines();
  const header = 'id,word,amount,notes\n';
  const rows: Buffer[] = [Buffer.from(header, 'latin1')];
  let size = rows[0]!.length;
  let block: string[] = [];
  let blockSize = 0;
  for (let i = 0; ; i++) {
    const line = lines[i % lines.length]!;
    const row = `${i},${line.split(' ', 1)[0]},${(i * 37) % 10007}.${i % 100},"${line.replaceAll('"', '""').replaceAll(' ', ', ')}"\n`;
    if (size + blockSize + row.length > bytes) break;
    block.push(row);
    blockSize += row.length;
    if (blockSize >= 1 << 20) {
      rows.push(Buffer.from(block.join(''), 'latin1'));
      size += blockSize;
      block = [];
      blockSize = 0;
    }
  }
  if (block.length > 0) {
    rows.push(Buffer.from(block.join(''), 'latin1'));
    size += blockSize;
  }
  return { filename: 'large.csv', contentType: 'text/csv', bytes: size, parts: rows };
}

/**
 * An Excel workbook whose XML parts inflate to about `xmlBytes` bytes: one sheet of rows holding
 * an id, a date, one of ten categories, a note and an amount, written as Excel writes them
 * (shared strings, a date style). Each note is unique (its row number appended), so the shared
 * string table holds every one: the worst case for a reader's memory.
 */
export function proseXlsx(xmlBytes: number): UploadFile {
  const lines = proseLines();
  const categories = Array.from({ length: 10 }, (_, i) => lines[i]!.split(' ', 1)[0]!);
  const strings = categories.map((c) => `<si><t>${c}</t></si>`);
  const rows: string[] = [];
  let size = 0;
  for (let r = 1; size < xmlBytes; r++) {
    const note = `<si><t>${escapeXml(lines[r % lines.length]!)} (${r})</t></si>`;
    strings.push(note);
    const row = `<row r="${r}"><c r="A${r}"><v>${r}</v></c><c r="B${r}" s="1"><v>${40_000 + (r % 3_000)}</v></c><c r="C${r}" t="s"><v>${r % 10}</v></c><c r="D${r}" t="s"><v>${strings.length - 1}</v></c><c r="E${r}"><v>${(r * 37) % 10_007}.${r % 100}</v></c></row>`;
    rows.push(row);
    size += note.length + row.length;
  }
  const zip = makeZip(
    workbookEntries({
      sheets: [{ name: 'Ledger', rows: rows.join('') }],
      sharedStrings: strings,
      cellXfs: '<xf numFmtId="0"/><xf numFmtId="14"/>',
    }),
  );
  return {
    filename: 'large.xlsx',
    contentType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    bytes: zip.length,
    parts: [zip],
  };
}

function escapeXml(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}
