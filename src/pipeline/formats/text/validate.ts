// Whether the start of a file is usable text: shared by the text formats' detection (txt, md,
// html) and by refusals that say a file "is plain text".
import { signatureOf } from '../sniff.js';
import { bomOf } from './decode.js';

/**
 * Why the head is not usable text, or null. UTF-16 needs its BOM; anything else must be UTF-8
 * (when `requireUtf8`) and free of the control characters that only binary files are full of.
 * Later damage is repaired at extraction (U+FFFD); a file that starts wrong is refused outright.
 */
export function textProblem(head: Buffer, truncated: boolean, requireUtf8: boolean): string | null {
  const signature = signatureOf(head);
  if (signature) return `starts with ${signature} signature`;
  const bom = bomOf(head);
  let text: string;
  if (bom?.encoding === 'utf-16le' || bom?.encoding === 'utf-16be') {
    // An odd length when truncated is just a cut in the middle of a code unit.
    text = new TextDecoder(bom.encoding).decode(truncated ? head.subarray(0, head.length & ~1) : head);
  } else {
    const invalidAt = firstInvalidUtf8(head, truncated);
    if (invalidAt !== -1 && requireUtf8) {
      return `not UTF-8: invalid byte 0x${head[invalidAt]!.toString(16).padStart(2, '0')} at offset ${invalidAt}; save it as UTF-8`;
    }
    text = head.toString('latin1');
  }
  let control = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    // Tab, line feed, vertical tab, form feed, carriage return and escape occur in real text.
    if (code < 0x20 && (code < 0x09 || code > 0x0d) && code !== 0x1b) control++;
  }
  // A stray NUL or two is text with a defect (extraction drops them); more is a binary file.
  if (control > Math.max(2, text.length / 100)) return 'it contains binary data';
  return null;
}

/** Offset of the first byte that breaks UTF-8, or -1. A sequence cut off by the head's end is fine. */
export function firstInvalidUtf8(bytes: Uint8Array, truncated: boolean): number {
  let i = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let min: number;
    if (b >= 0xc2 && b <= 0xdf) {
      need = 1;
      min = 0x80;
    } else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      min = 0x800;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      min = 0x10000;
    } else {
      return i;
    }
    let code = b & (0x3f >> need);
    for (let k = 1; k <= need; k++) {
      const next = bytes[i + k];
      if (next === undefined) return truncated ? -1 : i;
      if ((next & 0xc0) !== 0x80) return i;
      code = (code << 6) | (next & 0x3f);
    }
    // Overlong forms, UTF-16 surrogates and code points past U+10FFFF are not UTF-8.
    if (code < min || (code >= 0xd800 && code <= 0xdfff) || code > 0x10ffff) return i;
    i += need + 1;
  }
  return -1;
}
