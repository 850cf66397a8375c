// Images for the OCR tests that the corpus does not have: a TIFF (re-encoded from the corpus PNG's
// pixels, so its ground truth still applies) and hostile files built byte by byte.
import { crc32 } from 'node:zlib';

/** A baseline TIFF (little-endian, 8-bit RGB, one uncompressed strip). */
export function rgbaToTiff(width: number, height: number, rgba: Uint8Array | Uint8ClampedArray): Buffer {
  return multiPageTiff([rgbaToTiffPage(width, height, rgba)]);
}

/** One page of a baseline TIFF: `width` × `height` 8-bit RGB pixels in one uncompressed strip. */
export interface TiffPage {
  width: number;
  height: number;
  strip: Buffer;
}

/**
 * A TIFF whose header declares `width` × `height` RGB pixels, followed by `strip` as its only
 * strip: a decompression bomb when the strip is far shorter than the declared size.
 */
export function tiffWithStrip(width: number, height: number, strip: Buffer): Buffer {
  return multiPageTiff([{ width, height, strip }]);
}

/** A little-endian baseline TIFF with one image directory per page, chained in order. */
export function multiPageTiff(pages: TiffPage[]): Buffer {
  const parts: Buffer[] = [];
  let offset = 8;
  const header = Buffer.alloc(8);
  header.write('II', 0, 'latin1');
  header.writeUInt16LE(42, 2);
  header.writeUInt32LE(offset, 4);
  parts.push(header);
  pages.forEach(({ width, height, strip }, p) => {
    // tag, type (3 SHORT, 4 LONG), count, value
    const entries: Array<[number, number, number, number]> = [
      [256, 4, 1, width],
      [257, 4, 1, height],
      [258, 3, 3, 0], // BitsPerSample → offset of 8,8,8
      [259, 3, 1, 1], // no compression
      [262, 3, 1, 2], // RGB
      [273, 4, 1, 0], // StripOffsets → data
      [277, 3, 1, 3],
      [278, 4, 1, height],
      [279, 4, 1, strip.length],
    ];
    const ifd = offset;
    const bitsAt = ifd + 2 + entries.length * 12 + 4;
    const dataAt = bitsAt + 6;
    const nextIfd = p === pages.length - 1 ? 0 : dataAt + strip.length;
    entries[2]![3] = bitsAt;
    entries[5]![3] = dataAt;
    const head = Buffer.alloc(dataAt - ifd);
    head.writeUInt16LE(entries.length, 0);
    entries.forEach(([tag, type, count, value], k) => {
      const at = 2 + k * 12;
      head.writeUInt16LE(tag, at);
      head.writeUInt16LE(type, at + 2);
      head.writeUInt32LE(count, at + 4);
      if (type === 3 && count === 1) head.writeUInt16LE(value, at + 8);
      else head.writeUInt32LE(value, at + 8);
    });
    head.writeUInt32LE(nextIfd, 2 + entries.length * 12);
    for (let k = 0; k < 3; k++) head.writeUInt16LE(8, bitsAt - ifd + 2 * k);
    parts.push(head, strip);
    offset = dataAt + strip.length;
  });
  return Buffer.concat(parts);
}

/** RGBA pixels as the RGB strip of a TiffPage. */
export function rgbaToTiffPage(
  width: number,
  height: number,
  rgba: Uint8Array | Uint8ClampedArray,
): TiffPage {
  const rgb = Buffer.alloc(width * height * 3);
  for (let i = 0, j = 0; i < width * height * 4; i += 4) {
    rgb[j++] = rgba[i]!;
    rgb[j++] = rgba[i + 1]!;
    rgb[j++] = rgba[i + 2]!;
  }
  return { width, height, strip: rgb };
}

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const typed = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typed));
  return Buffer.concat([length, typed, crc]);
}

/** A valid-looking PNG declaring `width` × `height` grey pixels, with a few bytes of image data. */
export function pngBomb(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 0; // greyscale
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', Buffer.from([0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01])),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}
