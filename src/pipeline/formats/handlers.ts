// Format id → its implementation: detection (extract/detect.ts) and extraction (extract/worker.ts)
// look a format up here. The ids, names, media types and extensions are in domain/formats.ts;
// the type below makes a format listed there without a line here fail to compile.
import type { FormatId } from '../../domain/formats.js';
import { docxFormat } from './docx/index.js';
import type { FormatHandler } from './handler.js';
import { htmlFormat } from './html/index.js';
import { imageFormat } from './image/index.js';
import { mdFormat } from './md/index.js';
import { pdfFormat } from './pdf/index.js';
import { txtFormat } from './txt/index.js';

export const FORMAT_HANDLERS: { readonly [F in FormatId]: FormatHandler } = {
  pdf: pdfFormat,
  docx: docxFormat,
  txt: txtFormat,
  md: mdFormat,
  html: htmlFormat,
  png: imageFormat('PNG'),
  jpeg: imageFormat('JPEG'),
  tiff: imageFormat('TIFF'),
};

/** What a file is when neither its name, a declared type nor its bytes say otherwise. */
export const FALLBACK_FORMAT: FormatId = 'txt';
