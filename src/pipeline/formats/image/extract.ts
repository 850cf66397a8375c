// An image's text, by OCR, in an extraction worker thread. Its size is read from its header first,
// so a decompression bomb (a few KB declaring billions of pixels) is refused before decoding.
import { readFileSync } from 'node:fs';
import { imageSize } from 'image-size';
import { ExtractionError } from '../../extract/errors.js';
import { MAX_OCR_PIXELS, ocrEnabled, recognizeEncodedImage } from '../../ocr/engine.js';
import type { ImageKind } from './kind.js';

export async function extractImageText(filePath: string, kind: ImageKind): Promise<string> {
  const what = `${kind} image`;
  if (!ocrEnabled()) {
    throw new ExtractionError('no_text', `an image's text can only be read by OCR, and OCR is off (OCR=off)`);
  }
  const bytes = readFileSync(filePath);
  let width: number;
  let height: number;
  try {
    ({ width, height } = imageSize(bytes));
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new ExtractionError('corrupt', `the ${what} is damaged: its size cannot be read (${reason})`);
  }
  if (!(width > 0 && height > 0)) {
    throw new ExtractionError('corrupt', `the ${what} is damaged: it declares ${width} × ${height} pixels`);
  }
  if (width * height > MAX_OCR_PIXELS) {
    throw new ExtractionError(
      'too_large',
      `the ${what} is ${width} × ${height} pixels; OCR reads at most ${MAX_OCR_PIXELS.toLocaleString('en-US')} pixels`,
    );
  }
  const text = await recognizeEncodedImage(bytes, what);
  if (text === '') throw new ExtractionError('no_text', `OCR found no text in the ${what}`);
  return text;
}
