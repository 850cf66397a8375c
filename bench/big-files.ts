// Large files for the memory bench (section 7), generated from the bench corpus's prose: a PDF of
// many text pages and a CSV of many rows. Each is described by its exact length up front (the
// upload's Content-Length) and its bytes in parts, so the bench never has to guess a size.
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
