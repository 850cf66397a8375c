// Optical character recognition inside an extraction worker thread: Tesseract compiled to
// WebAssembly (tesseract.js-core), with its language data read from installed npm packages
// (languages.ts). Nothing is fetched: the wasm is read from the package folder and the data from
// disk. One engine per thread, loaded with the first page or image that needs it, so threads that
// never see a scan never pay for it. The wasm runs in the thread, so the pool's time cap ends it
// like any other extraction; its memory is bounded by the pixel caps below, since wasm memory is
// not part of the V8 heap the thread's resourceLimits cap.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { ExtractionError } from '../extract/errors.js';
import { languageDataFile } from './languages.js';

/** What the composition root decided (OCR, OCR_LANGUAGES), handed to each thread. */
export interface OcrSettings {
  enabled: boolean;
  /** Installed language codes, e.g. ['eng'] or ['eng', 'deu']. */
  languages: string[];
}

/**
 * The most pixels one image or rendered page may have. An A4 page scanned at 600 dpi is about 35
 * million; Tesseract holds a few 8-bit and 1-bit copies of the image, so this keeps one page well
 * under a few hundred MB of wasm memory. A larger image (a decompression bomb declares 100,000 ×
 * 100,000 pixels in a few KB) fails `too_large` before a single pixel is decoded.
 */
export const MAX_OCR_PIXELS = 40_000_000;

/** Resolution PDF pages are rendered at for recognition: Tesseract's own recommendation. */
export const OCR_RENDER_DPI = 300;

/** The parts of Tesseract's WebIDL binding this module uses. */
interface TessBaseApi {
  Init(dataPath: string, languages: string): number;
  SetImageFile(exifOrientation?: number, angle?: number): number;
  SetSourceResolution(ppi: number): void;
  Recognize(monitor: null): number;
  GetUTF8Text(): string;
  Clear(): void;
}

interface TesseractModule {
  FS: { writeFile(path: string, data: Uint8Array): void; unlink(path: string): void };
  TessBaseAPI: new () => TessBaseApi;
}

type TesseractFactory = (options: {
  wasmBinary: Uint8Array;
  print: (line: string) => void;
  printErr: (line: string) => void;
}) => Promise<TesseractModule>;

const require = createRequire(import.meta.url);

/**
 * The SIMD, LSTM-only build: every Node this project supports has wasm SIMD, and the LSTM engine
 * is the one the language packages' models are best at (the legacy engine is not loaded at all).
 */
const CORE_BUILD = 'tesseract-core-simd-lstm';

let settings: OcrSettings = { enabled: true, languages: ['eng'] };
let loading: Promise<TessBaseApi> | null = null;

/** Called once by the thread with the settings it was started with. */
export function configureOcr(next: OcrSettings): void {
  settings = { enabled: next.enabled, languages: [...next.languages] };
  loading = null;
}

export function ocrEnabled(): boolean {
  return settings.enabled;
}

function loadEngine(): Promise<TessBaseApi> {
  loading ??= (async () => {
    const coreDir = path.dirname(require.resolve('tesseract.js-core/package.json'));
    const factory = require(path.join(coreDir, `${CORE_BUILD}.js`)) as TesseractFactory;
    // Given the bytes, the module never looks for its wasm elsewhere (no fetch, no CDN).
    const core = await factory({
      wasmBinary: readFileSync(path.join(coreDir, `${CORE_BUILD}.wasm`)),
      print: () => {},
      printErr: () => {},
    });
    for (const code of settings.languages) {
      const file = languageDataFile(code);
      const data = readFileSync(file);
      core.FS.writeFile(`/${code}.traineddata`, file.endsWith('.gz') ? gunzipSync(data) : data);
    }
    const api = new core.TessBaseAPI();
    if (api.Init('/', settings.languages.join('+')) !== 0) {
      throw new Error(`Tesseract could not load the language data for ${settings.languages.join('+')}`);
    }
    engineCore = core;
    return api;
  })();
  loading.catch(() => {
    loading = null;
  });
  return loading;
}

let engineCore: TesseractModule | null = null;

/** Recognises an encoded image (PNG, JPEG, TIFF: Leptonica decodes it inside the wasm). */
export async function recognizeEncodedImage(bytes: Uint8Array, what: string): Promise<string> {
  const api = await loadEngine();
  const core = engineCore!;
  core.FS.writeFile('/input', bytes);
  try {
    // Non-zero when Leptonica cannot decode the file (damaged, truncated, or not what it claims).
    if (api.SetImageFile(1, 0) !== 0) {
      throw new ExtractionError('corrupt', `the ${what} is damaged or truncated: it cannot be decoded`);
    }
    return recognize(api);
  } finally {
    core.FS.unlink('/input');
    api.Clear();
  }
}

/**
 * Recognises a grey-scale bitmap (one byte per pixel, rows top to bottom), such as a rendered PDF
 * page. It reaches Tesseract as a PGM file: the binding takes no pixel pointer from JavaScript,
 * and PGM is a header in front of these very bytes.
 */
export async function recognizeGrayBitmap(
  width: number,
  height: number,
  gray: Uint8Array,
  dpi: number,
): Promise<string> {
  const api = await loadEngine();
  const core = engineCore!;
  const header = Buffer.from(`P5\n${width} ${height}\n255\n`, 'latin1');
  const pgm = new Uint8Array(header.length + gray.length);
  pgm.set(header, 0);
  pgm.set(gray, header.length);
  core.FS.writeFile('/input', pgm);
  try {
    if (api.SetImageFile(1, 0) !== 0) throw new Error('Tesseract refused a rendered page');
    api.SetSourceResolution(dpi);
    return recognize(api);
  } finally {
    core.FS.unlink('/input');
    api.Clear();
  }
}

function recognize(api: TessBaseApi): string {
  api.Recognize(null);
  return tidyRecognisedText(api.GetUTF8Text());
}

/** Tesseract ends every line with \n and blocks with a blank line; trailing spaces carry nothing. */
export function tidyRecognisedText(text: string): string {
  return text
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
