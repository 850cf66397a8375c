// Bytes to a string the chunker can trust, for every format that starts from text (txt, md, html)
// and for extracted text (DOCX): BOM detection, decoding, NULs and line endings. A file can also
// be decoded as it is read (decodeTextPieces), for a chunker that takes its text in pieces.
import { createReadStream } from 'node:fs';

/** The byte-order mark a file starts with, if any, and how long it is. */
export function bomOf(
  bytes: Uint8Array,
): { encoding: 'utf-8' | 'utf-16le' | 'utf-16be'; length: number } | null {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return { encoding: 'utf-8', length: 3 };
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return { encoding: 'utf-16le', length: 2 };
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return { encoding: 'utf-16be', length: 2 };
  return null;
}

/**
 * UTF-8 unless a UTF-16 BOM says otherwise. Invalid sequences become U+FFFD instead of failing:
 * detection already refused files whose beginning is not UTF-8, so what is left is a damaged
 * byte here and there, and losing one character beats losing the document.
 */
export function decodeText(bytes: Uint8Array): string {
  const bom = bomOf(bytes);
  // TextDecoder drops the BOM of its own encoding itself (ignoreBOM defaults to false).
  const text = new TextDecoder(bom?.encoding ?? 'utf-8').decode(bytes);
  return normalizeText(text);
}

/**
 * NUL characters are removed (they end C strings in databases and FTS tokenizers), and line
 * endings become \n so that offsets and paragraph breaks mean the same for every source.
 */
export function normalizeText(text: string): string {
  return text.replaceAll('\u0000', '').replace(/\r\n?/g, '\n');
}

/** Bytes read from a file at a time when it is decoded in pieces. */
const READ_BYTES = 256 * 1024;

/**
 * decodeText of a file, read and decoded a piece at a time: the pieces joined are exactly
 * decodeText(the file's bytes), and the file is never held whole, as bytes or as text. A
 * carriage return at the end of a piece waits for the next one, which may start with its \n.
 */
export async function* decodeTextPieces(path: string): AsyncGenerator<string> {
  let decoder: InstanceType<typeof TextDecoder> | null = null;
  let carry = '';
  const tidy = (decoded: string, last: boolean): string => {
    let text = carry + decoded.replaceAll('\u0000', '');
    carry = '';
    if (!last && text.endsWith('\r')) {
      carry = '\r';
      text = text.slice(0, -1);
    }
    return text.replace(/\r\n?/g, '\n');
  };
  for await (const bytes of createReadStream(path, { highWaterMark: READ_BYTES }) as AsyncIterable<Buffer>) {
    // TextDecoder drops the BOM of its own encoding itself (ignoreBOM defaults to false).
    decoder ??= new TextDecoder(bomOf(bytes)?.encoding ?? 'utf-8');
    const text = tidy(decoder.decode(bytes, { stream: true }), false);
    if (text !== '') yield text;
  }
  const text = tidy(decoder?.decode() ?? '', true);
  if (text !== '') yield text;
}
