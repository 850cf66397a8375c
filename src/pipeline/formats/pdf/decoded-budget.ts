// A PDF's Flate-compressed streams inflated and counted before pdf.js opens the file. pdf.js
// decodes a stream whole, into ArrayBuffers that a thread's heap cap does not bound, so a
// one-page file whose content stream inflates a thousandfold (1.5 MB → 1.5 GB) would otherwise
// take gigabytes of the process before its text turned out empty. Counting is streamed: nothing
// inflated is kept, and counting stops as soon as the budget is spent.
import { createInflate } from 'node:zlib';
import { ExtractionError } from '../../extract/errors.js';

/** Decoded bytes any PDF may hold, whatever its size. */
export const DECODED_FLOOR_BYTES = 256 * 1024 * 1024;
/** Decoded bytes per byte of the file beyond that floor. */
export const DECODED_RATIO = 32;

/** What a file of `bytes` bytes may inflate to in all. */
export function decodedBudget(bytes: number): number {
  return Math.max(DECODED_FLOOR_BYTES, DECODED_RATIO * bytes);
}

const STREAM = Buffer.from('stream');
const END_STREAM = Buffer.from('endstream');
/** How far before `stream` its dictionary is looked for. */
const DICTIONARY_WINDOW = 4096;

/** Where each FlateDecode stream's data starts and ends (`endstream` excluded). */
export function* flateStreams(file: Buffer): Generator<[number, number]> {
  let at = file.indexOf(STREAM, 0);
  while (at !== -1) {
    const keywordEnd = at + STREAM.length;
    // The keyword itself, not `endstream`, and followed by its end of line.
    const isKeyword =
      (at < 3 || file.toString('latin1', at - 3, at) !== 'end') &&
      (file[keywordEnd] === 0x0a || (file[keywordEnd] === 0x0d && file[keywordEnd + 1] === 0x0a));
    if (!isKeyword) {
      at = file.indexOf(STREAM, keywordEnd);
      continue;
    }
    const start = keywordEnd + (file[keywordEnd] === 0x0d ? 2 : 1);
    const end = file.indexOf(END_STREAM, start);
    if (end === -1) return;
    const before = file.toString('latin1', Math.max(0, at - DICTIONARY_WINDOW), at);
    const dictionary = before.slice(before.lastIndexOf('obj') + 1);
    // The first filter of the chain must be Flate: inflating data that is ASCII85 first fails.
    if (/\/Filter\s*\[?\s*\/(FlateDecode|Fl)\b/.test(dictionary)) yield [start, end];
    at = file.indexOf(STREAM, end + END_STREAM.length);
  }
}

/** Bytes one stream inflates to, counted up to `limit` (a damaged stream counts what it gave). */
function inflatedBytes(data: Buffer, limit: number): Promise<number> {
  return new Promise((resolve) => {
    let count = 0;
    let settled = false;
    const inflate = createInflate();
    const finish = () => {
      if (settled) return;
      settled = true;
      inflate.destroy();
      resolve(count);
    };
    inflate.on('data', (chunk: Buffer) => {
      count += chunk.length;
      if (count > limit) finish();
    });
    inflate.on('end', finish);
    inflate.on('error', finish);
    inflate.on('close', finish);
    inflate.end(data);
  });
}

/**
 * Fails `too_large` when the file's Flate streams inflate to more than `budget` bytes in all.
 * Streams behind another filter first, or with other expanding filters (LZW), are not counted.
 */
export async function checkDecodedSize(
  data: Uint8Array,
  budget = decodedBudget(data.byteLength),
): Promise<void> {
  const file = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  let total = 0;
  for (const [start, end] of flateStreams(file)) {
    total += await inflatedBytes(file.subarray(start, end), budget - total);
    if (total > budget) {
      throw new ExtractionError(
        'too_large',
        `the PDF's compressed streams inflate to more than ${Math.round(budget / 1024 / 1024)} MiB (a file of ${data.byteLength} bytes may give at most max(256 MiB, 32 × its size))`,
      );
    }
  }
}
