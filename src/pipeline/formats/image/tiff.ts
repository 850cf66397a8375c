// TIFF scans, one page per image directory (fax machines and document scanners put a whole
// letter in one file): a paged format, so each chunk says which pages it came from. Pages are
// decoded by UTIF (utif2: pure JavaScript, the TIFF compressions scanners write — none, PackBits,
// LZW, Deflate, CCITT G3/G4, JPEG) and read by OCR as grey bitmaps. Leptonica, which reads PNG and
// JPEG inside the Tesseract wasm, stops at a TIFF's first page.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { IFD } from 'utif2';
import { ExtractionError } from '../../extract/errors.js';
import { MAX_OCR_PIXELS, OCR_RENDER_DPI, ocrEnabled, recognizeGrayBitmap } from '../../ocr/engine.js';
import type { PagedDocument } from '../handler.js';

/** What is used of utif2 (its own typings leave out decode's options). */
interface Utif {
  decode(buffer: Uint8Array, options: { parseMN: boolean; debug: boolean }): IFD[];
  decodeImage(buffer: Uint8Array, ifd: IFD): void;
  toRGBA8(ifd: IFD): Uint8Array;
}

// utif2 is CommonJS that fills its exports object after assigning it: Node's ESM import cannot
// see its names, so it is required.
const UTIF = createRequire(import.meta.url)('utif2') as Utif;

/**
 * More image directories than any scan holds: the chain is walked before UTIF reads it, since a
 * chain that loops back on itself would keep UTIF reading forever.
 */
const MAX_DIRECTORIES = 10_000;

/** The file offsets of the top-level image directories, in order; throws on a loop or a bad offset. */
function directoryOffsets(bytes: Buffer): number[] {
  const order = bytes.toString('latin1', 0, 2);
  if (bytes.length < 8 || (order !== 'II' && order !== 'MM')) {
    throw new ExtractionError('corrupt', 'the TIFF image is damaged: its header cannot be read');
  }
  const little = order === 'II';
  const u16 = (at: number) => (little ? bytes.readUInt16LE(at) : bytes.readUInt16BE(at));
  const u32 = (at: number) => (little ? bytes.readUInt32LE(at) : bytes.readUInt32BE(at));
  const offsets: number[] = [];
  const seen = new Set<number>();
  for (let at = u32(4); at !== 0; ) {
    if (seen.has(at) || at + 2 > bytes.length) {
      throw new ExtractionError('corrupt', 'the TIFF image is damaged: its page directories are broken');
    }
    if (offsets.length >= MAX_DIRECTORIES) {
      throw new ExtractionError('too_large', `the TIFF image has more than ${MAX_DIRECTORIES} pages`);
    }
    seen.add(at);
    offsets.push(at);
    const next = at + 2 + u16(at) * 12;
    if (next + 4 > bytes.length) {
      throw new ExtractionError('corrupt', 'the TIFF image is damaged: it ends inside a page directory');
    }
    at = u32(next);
  }
  return offsets;
}

const tagNumber = (ifd: IFD, tag: number): number | null => {
  const value = ifd[`t${tag}`];
  return Array.isArray(value) && typeof value[0] === 'number' ? value[0] : null;
};

/** A page's resolution in dots per inch (OCR scales by it); scanners write it, others may not. */
function dpiOf(ifd: IFD): number {
  const resolution = tagNumber(ifd, 282);
  const unit = tagNumber(ifd, 296) ?? 2;
  if (resolution === null || !(resolution > 0)) return OCR_RENDER_DPI;
  const dpi = unit === 3 ? resolution * 2.54 : resolution;
  return Math.round(Math.min(2400, Math.max(70, dpi)));
}

/** RGBA over white to one grey byte per pixel (scans are dark on light; transparency is paper). */
function toGray(rgba: Uint8Array, pixels: number): Uint8Array {
  const gray = new Uint8Array(pixels);
  for (let i = 0, j = 0; j < pixels; i += 4, j++) {
    const luma = (rgba[i]! * 77 + rgba[i + 1]! * 150 + rgba[i + 2]! * 29) >> 8;
    const alpha = rgba[i + 3]!;
    gray[j] = (luma * alpha + 255 * (255 - alpha)) / 255;
  }
  return gray;
}

export async function openTiff(filePath: string): Promise<PagedDocument> {
  if (!ocrEnabled()) {
    throw new ExtractionError('no_text', `an image's text can only be read by OCR, and OCR is off (OCR=off)`);
  }
  const bytes = await readFile(filePath);
  const directories = directoryOffsets(bytes);
  let ifds: IFD[];
  try {
    ifds = UTIF.decode(bytes, { parseMN: false, debug: false });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new ExtractionError('corrupt', `the TIFF image is damaged: ${reason}`);
  }
  // Reduced-resolution copies (thumbnails: NewSubfileType bit 0) are not pages of their own.
  const pages = ifds
    .slice(0, directories.length)
    .filter((ifd) => tagNumber(ifd, 256) !== null && ((tagNumber(ifd, 254) ?? 0) & 1) === 0);
  if (pages.length === 0) throw new ExtractionError('corrupt', 'the TIFF file holds no image');
  for (const [i, ifd] of pages.entries()) {
    const width = tagNumber(ifd, 256) ?? 0;
    const height = tagNumber(ifd, 257) ?? 0;
    if (!(width > 0 && height > 0)) {
      throw new ExtractionError(
        'corrupt',
        `the TIFF image is damaged: page ${i + 1} declares ${width} × ${height} pixels`,
      );
    }
    // Checked for every page before any is decoded: a few KB can declare billions of pixels.
    if (width * height > MAX_OCR_PIXELS) {
      throw new ExtractionError(
        'too_large',
        `page ${i + 1} of the TIFF image is ${width} × ${height} pixels; OCR reads at most ${MAX_OCR_PIXELS.toLocaleString('en-US')} pixels`,
      );
    }
  }
  let recognised = 0;
  return {
    numPages: pages.length,
    async pageTexts(from: number, to: number): Promise<string[]> {
      const texts: string[] = [];
      for (let page = from; page <= to; page++) {
        const ifd = pages[page - 1]!;
        let gray: Uint8Array;
        try {
          UTIF.decodeImage(bytes, ifd);
          gray = toGray(UTIF.toRGBA8(ifd), ifd.width * ifd.height);
        } catch (error) {
          const reason = error instanceof Error ? error.message : String(error);
          throw new ExtractionError(
            'corrupt',
            `page ${page} of the TIFF image cannot be decoded (${reason})`,
          );
        } finally {
          // Only the grey copy is needed from here on.
          ifd.data = new Uint8Array(0);
        }
        texts.push(await recognizeGrayBitmap(ifd.width, ifd.height, gray, dpiOf(ifd)));
        recognised += 1;
      }
      return texts;
    },
    ocrCounts: () => ({ recognised, skipped: 0 }),
    close: async () => {},
  };
}
