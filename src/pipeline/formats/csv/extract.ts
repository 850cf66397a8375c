// CSV and TSV as a Markdown table, the first record as its header. csv-parse reads the records
// (quotes, embedded delimiters and line breaks, ragged rows) as a stream, so a 100 MB file is never
// held as both bytes and records. The delimiter is the one of comma, tab and semicolon that the
// first line holds most of: the stored file has lost its name, and a .tsv is a CSV with tabs.
import { createReadStream } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import { ExtractionError } from '../../extract/errors.js';
import { markdownCell } from '../shared/markdown-table.js';
import { bomOf } from '../text/decode.js';

const DELIMITERS = [',', '\t', ';'] as const;

export async function extractCsvText(filePath: string): Promise<string> {
  const pieces: string[] = [];
  for await (const piece of csvTextPieces(filePath)) pieces.push(piece);
  return pieces.join('');
}

/** Characters of Markdown rows per piece csvTextPieces yields. */
const PIECE_CHARS = 256 * 1024;

/**
 * The CSV's Markdown table in pieces of about PIECE_CHARS, as the records are parsed: joined,
 * exactly extractCsvText's text (rows joined by line breaks).
 */
export async function* csvTextPieces(filePath: string): AsyncGenerator<string> {
  const head = await readHead(filePath, 64 * 1024);
  const bom = bomOf(head);
  // Excel's "Unicode text" export is UTF-16 with a BOM and tabs: decoded whole (csv-parse reads
  // UTF-8 streams only), which such exports are small enough for.
  const utf16 = bom !== null && bom.encoding !== 'utf-8';
  const source: Readable = utf16
    ? Readable.from([new TextDecoder(bom.encoding).decode(await readFile(filePath))])
    : createReadStream(filePath);
  const delimiter = delimiterOf(utf16 ? new TextDecoder(bom.encoding).decode(head) : head.toString('utf8'));
  const parser = source.pipe(
    parse({
      delimiter,
      bom: true,
      relax_column_count: true,
      relax_quotes: true,
      skip_empty_lines: true,
    }),
  );
  let lines: string[] = [];
  let size = 0;
  let rows = 0;
  let width = 0;
  /** A piece went out: the next starts with the line break that joins it to that one. */
  let yielded = false;
  try {
    for await (const record of parser as AsyncIterable<string[]>) {
      const cells = record.map(markdownCell);
      if (rows === 0) {
        width = cells.length;
        lines.push(
          row(cells, width),
          row(
            cells.map(() => '---'),
            width,
          ),
        );
      } else {
        lines.push(row(cells, width));
      }
      size += lines[lines.length - 1]!.length;
      rows++;
      if (size >= PIECE_CHARS) {
        yield (yielded ? '\n' : '') + lines.join('\n');
        yielded = true;
        lines = [];
        size = 0;
      }
    }
  } catch (error) {
    throw new ExtractionError(
      'corrupt',
      `the CSV cannot be read (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  // Every cell went through markdownCell (one line, no NUL): normalizeText's two more copies of
  // a large table would find nothing to change.
  if (lines.length > 0) yield (yielded ? '\n' : '') + lines.join('\n');
}

/** A record as a Markdown row, padded to the header's width (longer rows keep their extra cells). */
function row(cells: string[], width: number): string {
  while (cells.length < width) cells.push('');
  return `| ${cells.join(' | ')} |`;
}

function delimiterOf(head: string): string {
  const firstLine = head.split('\n', 1)[0] ?? '';
  let best: string = DELIMITERS[0];
  let most = 0;
  for (const delimiter of DELIMITERS) {
    const count = firstLine.split(delimiter).length - 1;
    if (count > most) {
      most = count;
      best = delimiter;
    }
  }
  return best;
}

async function readHead(filePath: string, bytes: number): Promise<Buffer> {
  const handle = await open(filePath, 'r');
  try {
    const buffer = Buffer.alloc(bytes);
    const { bytesRead } = await handle.read(buffer, 0, bytes, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}
